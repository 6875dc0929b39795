/* sim_out.c - a cost-model prediction for people and scripts (`stitchc sim --format table|json|svg`).
 *
 * The prediction itself is core/st_model.c's; this file only writes it:
 *   table  a heading (algorithm, collective, p, bytes, how the model ran), the total with algbw and busbw, then
 *          the steps, consecutive steps that cost the same folded into one line (a ring of 100,000 ranks is two
 *          lines, not 199,998)
 *   json   exactly one object, keys in a fixed order: algorithm, collective, ranks, bytes, topology, method,
 *          time_us, algbw_GBps, busbw_GBps, steps [{step, start_us, time_us, slowest_rank, level, bytes,
 *          reduced_bytes, transfers}]; every step is listed
 *   svg    a timeline per rank: one lane per rank, time left to right to scale; in each step a rank's busy time
 *          is a bar from the step's start (orange for the step's slowest rank, blue for the others; the
 *          tooltip gives the numbers), the rest of the step, waiting for the slowest rank, is left empty; thin lines are the step
 *          boundaries. Needs the per-rank times, so the exact model and at most ST_SHOW_PICTURE_MAX_RANKS ranks.
 * Numbers are printed with a fixed precision so that the output is deterministic.
 */
#include <math.h>
#include <string.h>

#include "codegen.h"

static void put_json_string(FILE *out, const char *str)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static double algbw(const st_sim_info *info, const st_model_result *r)
{
    return r->time > 0 ? info->bytes / r->time / 1e9 : 0;
}

/* Bytes for people: 256M is 268435456 B, shown as "256 MiB" when exact, else "N B". */
static void put_bytes(FILE *out, double b)
{
    static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int k = 0;
    while (k < 4 && b >= 1024 && fmod(b, 1024) == 0)
        b /= 1024, k++;
    fprintf(out, "%.0f %s", b, unit[k]);
}

static int same_cost(const st_model_step *a, const st_model_step *b)
{
    return a->time == b->time && a->level == b->level && a->bytes == b->bytes && a->reduced == b->reduced;
}

static const char *method_name(const st_model_result *r)
{
    return r->method == ST_MODEL_SYMMETRIC ? "symmetric" : r->method == ST_MODEL_CLASSES ? "classes" : "exact";
}

static int sim_table(const st_model_result *r, const st_sim_info *info, FILE *out)
{
    fprintf(out, "# %s %s, p = %d, ", info->algo, st_coll_name(info->coll), r->p);
    put_bytes(out, info->bytes);
    fprintf(out, ", %s, %d steps, %s model", info->topo_name, r->nsteps, method_name(r));
    if (r->method == ST_MODEL_SYMMETRIC)
        fprintf(out, " (representatives 0..%d)", r->period - 1);
    if (r->method == ST_MODEL_CLASSES)
        fprintf(out, " (representatives 0..%d, %lld intervals of alike ranks)", r->period - 1,
                (long long)r->intervals);
    fprintf(out, "\ntime %.3f us, algbw %.3f GB/s, busbw %.3f GB/s\n", r->time * 1e6, algbw(info, r),
            algbw(info, r) * st_model_busbw_factor(info->coll, r->p));
    fprintf(out, "%-17s %12s %12s %8s %6s %14s %14s\n", "steps", "each us", "start us", "slowest", "level",
            "link bytes", "reduced bytes");
    double start = 0;
    for (int s = 0; s < r->nsteps;) {
        int e = s + 1;
        while (e < r->nsteps && same_cost(&r->steps[s], &r->steps[e]))
            e++;
        const st_model_step *st = &r->steps[s];
        char span[32];
        if (e - s == 1)
            snprintf(span, sizeof span, "%d", s);
        else
            snprintf(span, sizeof span, "%d..%d (x%d)", s, e - 1, e - s);
        char lv[24] = "-";
        if (st->level >= 0)
            snprintf(lv, sizeof lv, "%d", st->level);
        fprintf(out, "%-17s %12.3f %12.3f %8d %6s %14.0f %14.0f\n", span, st->time * 1e6, start * 1e6, st->rank, lv,
                st->bytes, st->reduced);
        for (int k = s; k < e; k++)
            start += r->steps[k].time;
        s = e;
    }
    return 0;
}

static int sim_json(const st_model_result *r, const st_sim_info *info, FILE *out)
{
    fputs("{\"algorithm\": ", out);
    put_json_string(out, info->algo);
    fputs(", \"collective\": ", out);
    put_json_string(out, st_coll_name(info->coll));
    fprintf(out, ", \"ranks\": %d, \"bytes\": %.0f, \"topology\": ", r->p, info->bytes);
    put_json_string(out, info->topo_name);
    fprintf(out, ", \"method\": \"%s\", \"time_us\": %.6f, \"algbw_GBps\": %.6f, \"busbw_GBps\": %.6f, \"steps\": [",
            method_name(r), r->time * 1e6, algbw(info, r),
            algbw(info, r) * st_model_busbw_factor(info->coll, r->p));
    double start = 0;
    for (int s = 0; s < r->nsteps; s++) {
        const st_model_step *st = &r->steps[s];
        fprintf(out, "%s\n  {\"step\": %d, \"start_us\": %.6f, \"time_us\": %.6f, \"slowest_rank\": %d, \"level\": %d, "
                "\"bytes\": %.0f, \"reduced_bytes\": %.0f, \"transfers\": %lld}", s ? "," : "", s, start * 1e6,
                st->time * 1e6, st->rank, st->level, st->bytes, st->reduced, (long long)st->nxfers);
        start += st->time;
    }
    fputs(r->nsteps ? "\n]}\n" : "]}\n", out);
    return 0;
}

/* One lane per rank; x is time to scale over a fixed width. */
static int sim_svg(const st_model_result *r, const st_sim_info *info, FILE *out)
{
    const double left = 70, top = 40, width = 900, lane = r->p <= 16 ? 24 : r->p <= 64 ? 10 : 4;
    double scale = r->time > 0 ? width / r->time : 0, H = top + lane * r->p + 30;
    fprintf(out, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" "
            "width=\"%.0f\" height=\"%.0f\" font-family=\"sans-serif\" font-size=\"11\">\n", left + width + 20, H);
    fprintf(out, "<text x=\"%.0f\" y=\"18\">", left);
    fprintf(out, "%s %s, p = %d, %.0f bytes: %.3f us (busy per rank in each step; the step lasts as long as its "
            "slowest rank)</text>\n", info->algo, st_coll_name(info->coll), r->p, info->bytes, r->time * 1e6);
    double start = 0;
    for (int s = 0; s <= r->nsteps; s++) {
        fprintf(out, "<line x1=\"%.2f\" y1=\"%.0f\" x2=\"%.2f\" y2=\"%.0f\" stroke=\"#ccc\" stroke-width=\"0.5\"/>\n",
                left + start * scale, top - 4, left + start * scale, top + lane * r->p);
        if (s == r->nsteps)
            break;
        for (int x = 0; x < r->p; x++) {
            double t = r->rank_time[(size_t)s * (size_t)r->p + (size_t)x];
            if (t <= 0)
                continue;
            fprintf(out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"><title>rank %d, "
                    "step %d: %.3f us of %.3f us</title></rect>\n", left + start * scale, top + lane * x + 1,
                    t * scale, lane - 2, x == r->steps[s].rank ? "#e08020" : "#4080c0", x, s, t * 1e6,
                    r->steps[s].time * 1e6);
        }
        start += r->steps[s].time;
    }
    for (int x = 0; x < r->p && lane >= 10; x++)
        fprintf(out, "<text x=\"4\" y=\"%.1f\">r%d</text>\n", top + lane * x + lane - 3, x);
    fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">0</text><text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">%.3f us"
            "</text>\n</svg>\n", left, H - 8, left + width, H - 8, r->time * 1e6);
    return 0;
}

int st_sim_format_known(const char *format)
{
    return !strcmp(format, "table") || !strcmp(format, "json") || !strcmp(format, "svg");
}

int st_sim_write(const st_model_result *r, const st_sim_info *info, const char *format, FILE *out)
{
    if (!strcmp(format, "json"))
        return sim_json(r, info, out);
    if (!strcmp(format, "svg"))
        return r->rank_time ? sim_svg(r, info, out) : -1;
    return sim_table(r, info, out);
}
