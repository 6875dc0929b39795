/* show_svg.c - a schedule as a picture (`stitchc show --format svg|dot`).
 *
 * The same built schedule the table shows (show.c), drawn rather than listed:
 *   svg  ranks are horizontal lanes, steps are columns left to right, one arrow per transfer from the sender's
 *        lane to the receiver's inside the step's column. A step whose ranks send several transfers gets one slot
 *        per transfer in the column (a rank's k-th send of the step sits in slot k), so the column grows with the
 *        sends per rank and arrows of one rank never share a start point. Arrows are S-curves: they leave the
 *        sender horizontally at the slot's left edge and arrive horizontally at its right edge, so the arrowhead
 *        points along time. A label sits at the arrow's tail on the side of the lane the arrow does not go to, so
 *        every rank has at most one label per slot above its lane and one below and labels never collide. Long
 *        unit sets are elided and the full one is in the arrow's <title> (a tooltip in browsers).
 *        Reduce is solid orange, copy dashed blue; a local transfer (src == dst) is a small hump on its lane.
 *   dot  a Graphviz digraph: one node per (rank, step boundary), boundary k being the state before step k; each
 *        transfer of step k is an edge from (src, k) to (dst, k + 1), grey edges keep each rank's timeline, and
 *        invisible edges keep the ranks in order inside a boundary.
 * Both are deterministic: fixed geometry from the schedule alone, numbers printed with a fixed precision.
 * Sizes: lanes are 34 px up to 16 ranks and shrink beyond (labels are then left to the tooltips); st_show_ex
 * refuses more than ST_SHOW_PICTURE_MAX_RANKS ranks, where a picture stops being one.
 */
#include <stdlib.h>
#include <string.h>

#include "codegen.h"

/* ---- text ----------------------------------------------------------------------------------------------------- */

/* XML character data or attribute value: the five special characters as entities, control bytes dropped (XML 1.0
 * cannot hold them). */
static void put_xml(FILE *out, const char *str)
{
    for (const unsigned char *c = (const unsigned char *)str; *c; c++) {
        if (*c == '<')
            fputs("&lt;", out);
        else if (*c == '>')
            fputs("&gt;", out);
        else if (*c == '&')
            fputs("&amp;", out);
        else if (*c == '"')
            fputs("&quot;", out);
        else if (*c == '\'')
            fputs("&apos;", out);
        else if (*c >= 0x20 || *c == '\t' || *c == '\n')
            fputc(*c, out);
    }
}

/* A DOT double-quoted string's contents: quote and backslash escaped, newlines as \n. */
static void put_dot(FILE *out, const char *str)
{
    for (const char *c = str; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c == '\n')
            fputs("\\n", out);
        else
            fputc(*c, out);
    }
}

/* The heading line as a string (malloc'd; NULL when out of memory), so each format can escape it its own way. */
static char *heading(const st_sched *s, const st_inst *in)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&buf, &len);
    if (!mem)
        return NULL;
    st_show_heading(mem, s, in);
    if (fclose(mem) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static const char *op_name(const st_xfer *x)
{
    return x->op == ST_X_REDUCE ? "reduce" : "copy";
}

/* A transfer's units, `{0..3}`, and with `at` where they land, `{0..3} at {8..11}`; each set elided past `limit`
 * characters (0: never). out may be NULL to measure. Returns the number of characters. */
static int put_units(FILE *out, const st_sched *s, const st_xfer *x, int limit)
{
    int n = st_show_units(out, s, x, limit);
    if (st_xfer_mapped(x)) {
        st_xfer at = *x;
        at.run0 = x->drun0;
        at.nruns = x->dnruns;
        if (out)
            fputs(" at ", out);
        n += 4 + st_show_units(out, s, &at, limit);
    }
    return n;
}

/* The slot of transfer i in its step: how many sends of the same rank come before it in the step (transfers are
 * ordered by (step, src, emission), so they are the ones right before it). */
static int xfer_slot(const st_sched *s, int32_t i)
{
    int slot = 0;
    while (i > s->step_first[s->xfers[i].step] && s->xfers[i - 1].src == s->xfers[i].src) {
        i--;
        slot++;
    }
    return slot;
}

/* ---- svg geometry --------------------------------------------------------------------------------------------- */

#define LABEL_CHARS 14   /* unit labels longer than this are elided: `{0..3,7,...}` */
#define CHAR_W 6.1       /* advance of a 10 px monospace character */
#define LEFT 48.0        /* lane labels */
#define TOP 82.0         /* title, legend and step labels above the first lane */
#define COL_PAD 8.0      /* inside a column, left and right */
#define SLOT_MIN 64.0
#define SLOT_BARE 28.0   /* a slot without labels (many ranks): arrows only */
#define LANE_H_MAX 34.0
#define LANE_H_MIN 8.0
#define LABEL_MIN_LANE 24.0 /* below this lane height only tooltips carry the units */

typedef struct layout {
    double lane_h;
    double *col_x;  /* nsteps + 1 column edges */
    double *slot_w; /* per step */
    double width, height;
    int labels;     /* unit labels drawn next to the arrows */
} layout;

static double lane_y(const layout *l, int rank)
{
    return TOP + (rank + 0.5) * l->lane_h;
}

/* Each step's slot count (the most sends of one rank) and width (the longest label of the step, with room for the
 * arrows that arrive at the right of the slot), then the column edges from left to right. */
static int layout_build(const st_sched *s, layout *l, double min_width)
{
    l->col_x = malloc(((size_t)s->nsteps + 1) * sizeof *l->col_x);
    l->slot_w = malloc(((size_t)s->nsteps + 1) * sizeof *l->slot_w);
    if (!l->col_x || !l->slot_w)
        return -1;
    l->lane_h = s->p <= 16 ? LANE_H_MAX : LANE_H_MAX * 16 / s->p;
    if (l->lane_h < LANE_H_MIN)
        l->lane_h = LANE_H_MIN;
    l->labels = l->lane_h >= LABEL_MIN_LANE;
    double x = LEFT;
    for (int st = 0; st < s->nsteps; st++) {
        int slots = 1, chars = 0;
        for (int32_t i = s->step_first[st]; i < s->step_first[st + 1]; i++) {
            int slot = xfer_slot(s, i) + 1, n = put_units(NULL, s, &s->xfers[i], LABEL_CHARS);
            slots = slot > slots ? slot : slots;
            n += s->xfers[i].src == s->xfers[i].dst ? 4 : 0; /* the hump before a local transfer's label */
            chars = n > chars ? n : chars;
        }
        double w = chars * CHAR_W + 36;
        l->slot_w[st] = !l->labels ? SLOT_BARE : w > SLOT_MIN ? w : SLOT_MIN;
        l->col_x[st] = x;
        x += 2 * COL_PAD + slots * l->slot_w[st];
    }
    l->col_x[s->nsteps] = x;
    l->width = x + 12 > min_width ? x + 12 : min_width;
    l->height = TOP + s->p * l->lane_h + 14;
    return 0;
}

static void layout_free(layout *l)
{
    free(l->col_x);
    free(l->slot_w);
}

/* ---- svg drawing ---------------------------------------------------------------------------------------------- */

static void svg_prologue(FILE *out, const layout *l)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
    fprintf(out,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
            "viewBox=\"0 0 %.0f %.0f\">\n",
            l->width, l->height, l->width, l->height);
    /* Markers carry a fixed colour each: SVG 1.1 has no context-stroke. */
    fputs("<defs>\n"
          "<marker id=\"ah-reduce\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" "
          "markerWidth=\"9\" markerHeight=\"9\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#e6550d\"/>"
          "</marker>\n"
          "<marker id=\"ah-copy\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\" markerUnits=\"userSpaceOnUse\" "
          "markerWidth=\"9\" markerHeight=\"9\" orient=\"auto\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#3182bd\"/>"
          "</marker>\n"
          "<style type=\"text/css\"><![CDATA[\n"
          "text { font-family: 'DejaVu Sans', Helvetica, Arial, sans-serif; }\n"
          ".title { font-size: 14px; font-weight: bold; fill: #222; }\n"
          ".legend { font-size: 11px; fill: #444; }\n"
          ".hint { font-size: 11px; fill: #888; }\n"
          ".step { font-size: 11px; fill: #555; text-anchor: middle; }\n"
          ".rank { font-size: 12px; fill: #333; text-anchor: end; }\n"
          ".root { font-weight: bold; fill: #000; }\n"
          ".lane { stroke: #c3cad3; stroke-width: 1; }\n"
          ".group { stroke: #8a94a0; stroke-width: 1; stroke-dasharray: 2,3; }\n"
          ".reduce { stroke: #e6550d; stroke-width: 1.6; fill: none; }\n"
          ".copy { stroke: #3182bd; stroke-width: 1.6; fill: none; stroke-dasharray: 5,3; }\n"
          ".u { font-family: 'DejaVu Sans Mono', Menlo, Consolas, monospace; font-size: 10px; }\n"
          ".halo { fill: #fff; stroke: #fff; stroke-width: 3; stroke-linejoin: round; }\n"
          ".ur { fill: #a63603; }\n"
          ".uc { fill: #08519c; }\n"
          "]]></style>\n"
          "</defs>\n",
          out);
    fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%.0f\" fill=\"#fff\"/>\n", l->width, l->height);
}

/* Title, and a legend of the three kinds of mark. */
static void svg_header(FILE *out, const char *title)
{
    fputs("<text class=\"title\" x=\"12\" y=\"22\">", out);
    put_xml(out, title);
    fputs("</text>\n", out);
    fputs("<g>\n"
          "<path class=\"reduce\" d=\"M12,42 L44,42\" marker-end=\"url(#ah-reduce)\"/>"
          "<text class=\"legend\" x=\"50\" y=\"46\">reduce</text>\n"
          "<path class=\"copy\" d=\"M104,42 L136,42\" marker-end=\"url(#ah-copy)\"/>"
          "<text class=\"legend\" x=\"142\" y=\"46\">copy</text>\n"
          "<circle cx=\"186\" cy=\"42\" r=\"2\" fill=\"#555\"/>"
          "<path d=\"M186,42 C190,30 200,30 204,42\" fill=\"none\" stroke=\"#555\" stroke-width=\"1.6\"/>"
          "<text class=\"legend\" x=\"210\" y=\"46\">local (src = dst)</text>\n"
          "<text class=\"hint\" x=\"318\" y=\"46\">labels: the units sent; hover an arrow for the whole set</text>\n"
          "</g>\n",
          out);
}

/* Alternating column backgrounds with "step k" on top, then the lanes with their rank labels, and dotted
 * separators where the group changes between neighbouring ranks. */
static void svg_grid(FILE *out, const st_sched *s, const st_inst *in, const layout *l)
{
    double bottom = TOP + s->p * l->lane_h;
    for (int st = 0; st < s->nsteps; st++) {
        double x0 = l->col_x[st], x1 = l->col_x[st + 1];
        fprintf(out, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", x0, TOP - 22,
                x1 - x0, bottom - TOP + 26, st % 2 ? "#eef2f7" : "#f7f9fb");
        fprintf(out, "<text class=\"step\" x=\"%.1f\" y=\"%.1f\">step %d</text>\n", (x0 + x1) / 2, TOP - 8, st);
    }
    double right = l->col_x[s->nsteps] + 4;
    for (int r = 0; r < s->p; r++) {
        double y = lane_y(l, r);
        int root = st_coll_rooted(s->algo->coll) && r == s->root;
        fprintf(out, "<line class=\"lane\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", LEFT - 4, y, right, y);
        if (l->lane_h >= 12 || r % 4 == 0)
            fprintf(out, "<text class=\"rank%s\" x=\"%.1f\" y=\"%.1f\">r%d</text>\n", root ? " root" : "", LEFT - 8,
                    y + 4, r);
        if (in->topo && r + 1 < s->p && in->topo->group_of[r] != in->topo->group_of[r + 1])
            fprintf(out, "<line class=\"group\" x1=\"4\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>\n", y + l->lane_h / 2,
                    right, y + l->lane_h / 2);
    }
}

/* A unit label with a white halo (drawn twice: SVG 1.1 has no paint-order). */
static void svg_label(FILE *out, const st_sched *s, const st_xfer *x, double tx, double ty)
{
    for (int pass = 0; pass < 2; pass++) {
        fprintf(out, "<text class=\"u %s\" x=\"%.1f\" y=\"%.1f\">", pass ? (x->op == ST_X_REDUCE ? "ur" : "uc")
                                                                          : "halo", tx, ty);
        put_units(out, s, x, LABEL_CHARS);
        fputs("</text>", out);
    }
}

/* One transfer in its slot: a group whose <title> holds the whole transfer, the arrow (or a local hump), and the
 * label at the tail, above the lane when the arrow goes down (or stays), below when it goes up. */
static void svg_xfer(FILE *out, const st_sched *s, const layout *l, int32_t i)
{
    const st_xfer *x = &s->xfers[i];
    int st = x->step, slot = xfer_slot(s, i);
    double xa = l->col_x[st] + COL_PAD + slot * l->slot_w[st] + 6, xb = xa + l->slot_w[st] - 12;
    double ys = lane_y(l, x->src), yd = lane_y(l, x->dst);
    const char *cls = x->op == ST_X_REDUCE ? "reduce" : "copy";
    fprintf(out, "<g><title>step %d: r%d -&gt; r%d %s ", st, (int)x->src, (int)x->dst, op_name(x));
    put_units(out, s, x, 0);
    fputs("</title>", out);
    if (x->src == x->dst) {
        fprintf(out, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2\" fill=\"%s\"/>", xa, ys,
                x->op == ST_X_REDUCE ? "#e6550d" : "#3182bd");
        fprintf(out, "<path class=\"%s\" d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\"/>", cls, xa, ys, xa + 4,
                ys - 12, xa + 14, ys - 12, xa + 18, ys);
        if (l->labels)
            svg_label(out, s, x, xa + 22, ys - 4);
    } else {
        double mid = (xa + xb) / 2;
        fprintf(out, "<path class=\"%s\" d=\"M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f\" marker-end=\"url(#ah-%s)\"/>",
                cls, xa, ys, mid, ys, mid, yd, xb, yd, cls);
        if (l->labels)
            svg_label(out, s, x, xa + 2, yd > ys ? ys - 4 : ys + 12);
    }
    fputs("</g>\n", out);
}

int st_show_svg(const st_sched *s, const st_inst *in, FILE *out)
{
    char *title = heading(s, in);
    layout l = {0};
    int rc = -1;
    double title_w = title ? strlen(title) * 8.0 + 24 : 0; /* 14 px bold, generously */
    if (title && layout_build(s, &l, title_w > 640 ? title_w : 640) == 0) {
        svg_prologue(out, &l);
        svg_header(out, title);
        svg_grid(out, s, in, &l);
        for (int32_t i = 0; i < s->nxfers; i++)
            svg_xfer(out, s, &l, i);
        fputs("</svg>\n", out);
        rc = 0;
    }
    layout_free(&l);
    free(title);
    return rc;
}

/* ---- dot ------------------------------------------------------------------------------------------------------ */

/* Node (rank, boundary k) is `r<rank>_<k>`; boundary k is the state before step k, boundary nsteps the end. */
static void dot_boundary(FILE *out, const st_sched *s, int k)
{
    fprintf(out, "  { rank=same; b%d [shape=plaintext, fixedsize=false, label=\"%s", k, k == s->nsteps ? "end" : "step ");
    if (k < s->nsteps)
        fprintf(out, "%d", k);
    fputs("\"];", out);
    for (int r = 0; r < s->p; r++)
        fprintf(out, " r%d_%d [label=\"r%d\"];", r, k, r);
    fputs(" }\n", out);
    /* Flat invisible edges order the ranks top to bottom under the boundary's label. */
    fprintf(out, "  b%d", k);
    for (int r = 0; r < s->p; r++)
        fprintf(out, " -> r%d_%d", r, k);
    fputs(" [style=invis];\n", out);
}

static void dot_xfer(FILE *out, const st_sched *s, const st_xfer *x)
{
    int reduce = x->op == ST_X_REDUCE;
    fprintf(out, "  r%d_%d -> r%d_%d [label=\"", (int)x->src, (int)x->step, (int)x->dst, (int)x->step + 1);
    put_units(out, s, x, LABEL_CHARS);
    fprintf(out, "\", tooltip=\"step %d: r%d -> r%d %s ", (int)x->step, (int)x->src, (int)x->dst, op_name(x));
    put_units(out, s, x, 0);
    fprintf(out, "\", color=\"%s\", fontcolor=\"%s\"%s];\n", reduce ? "#e6550d" : "#3182bd",
            reduce ? "#a63603" : "#08519c", reduce ? "" : ", style=dashed");
}

int st_show_dot(const st_sched *s, const st_inst *in, FILE *out)
{
    char *title = heading(s, in);
    if (!title)
        return -1;
    fputs("digraph schedule {\n  label=\"", out);
    put_dot(out, title);
    fputs("\";\n  labelloc=t;\n  fontname=\"Helvetica\";\n  rankdir=LR;\n  nodesep=0.15;\n  ranksep=1.1;\n"
          "  node [shape=circle, fixedsize=true, width=0.4, fontsize=10, fontname=\"Helvetica\"];\n"
          "  edge [fontsize=9, fontname=\"Helvetica\"];\n",
          out);
    for (int k = 0; k <= s->nsteps; k++)
        dot_boundary(out, s, k);
    /* Each rank's timeline, heavy so the lanes stay straight. */
    for (int r = 0; r < s->p && s->nsteps > 0; r++) {
        fprintf(out, "  r%d_0", r);
        for (int k = 1; k <= s->nsteps; k++)
            fprintf(out, " -> r%d_%d", r, k);
        fputs(" [color=\"#c3cad3\", arrowhead=none, weight=20];\n", out);
    }
    if (s->nsteps > 0) {
        fputs("  b0", out);
        for (int k = 1; k <= s->nsteps; k++)
            fprintf(out, " -> b%d", k);
        fputs(" [style=invis, weight=20];\n", out);
    }
    for (int32_t i = 0; i < s->nxfers; i++)
        dot_xfer(out, s, &s->xfers[i]);
    fputs("}\n", out);
    free(title);
    return 0;
}
