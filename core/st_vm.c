/* st_vm.c - the step-table stack machine (see st_vm.h and st_steptab.h).
 *
 * One function, st_vm_run, with a flat dispatch loop: the instruction set is small and every case is a few lines.
 * Arithmetic is checked (overflow, division by zero, shift range) because a table may describe any p, and a
 * wrong value must become an error naming the .dsl line, never undefined behaviour. Operands are checked too
 * (jump targets, slots, indices), so a corrupt or hand-written table cannot read out of bounds.
 *
 * Sub-communicators (`phase COLL within MEMBERS [units ...] using ALGO`): SUB_MEMBERS and SUB_UNITS collect the
 * members and the unit pieces of the next phase, SUB_PHASE saves the caller's context in a `sub` and runs the
 * algorithm with p, r, root and units of its own and no topology (one group). A send made there is mapped back one
 * context at a time (units through the piece map, then the caller's layout; the peer through the member list), so
 * the sink sees only ranks and units of the whole instantiation. A rank that is not a member sits the phase out.
 */
#include "st_vm.h"
#include "st_arith.h"

#include "st_piece.h"

#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ST_VM_SLOTS (1 << 13) /* below malloc's mmap threshold: one run per rank must stay cheap */

typedef struct frame {
    int32_t ret_pc;
    int32_t fp, afp, nslots, afp_nslots, layout;
    int32_t sub; /* the body of a phase on a sub-communicator: returning from it restores the caller's context */
} frame;

#define ST_VM_MAX_SUBS 16 /* phases on sub-communicators nested in one another */

/* A phase on a sub-communicator: how its ranks and units map to its caller's, and the caller's context. */
typedef struct sub {
    int32_t algo, coll;
    int32_t *members;            /* inner rank i is the caller's rank members[i] */
    int nmembers, me;            /* me: my index among them, -1: not a member */
    int64_t root;                /* the inner root */
    int64_t *plo, *phi;          /* the pieces: piece k is runs pfirst[k] .. pfirst[k+1]-1, sorted and merged */
    int32_t *pfirst;
    int npieces, nruns, capruns, cappieces;
    int32_t *mfirst;             /* inner unit u maps to the caller's runs mfirst[u] .. mfirst[u+1]-1 of mlo/mhi, */
    int64_t *mlo, *mhi;          /* built when the phase's body declares its units */
    int nm, capm;
    /* the caller's context, restored when the body returns */
    int64_t p, r, croot, nunits, nscratch;
    const st_topo *topo;
    int32_t layout;              /* the caller's layout (-1: none), applied to units once mapped */
    int64_t *ltab;               /* its table for the caller's units */
    int32_t ltab_fn;
    int ltab_shared;
} sub;

typedef struct vm {
    const st_catalogue *cat;
    const st_topo *topo;  /* NULL: one group of all ranks */
    const int32_t *use;   /* st_inst.use */
    int64_t p, r, root, nunits, nscratch;
    long fuel, fuel_budget;          /* instructions left, and the budget they came from (for the message) */
    int64_t stack[ST_MAX_STACK];
    int sp;
    int64_t *slots;
    int32_t top;                    /* first free slot */
    frame calls[ST_MAX_CALL_DEPTH];
    int depth;
    int32_t fp, afp, nslots, afp_nslots;
    int32_t layout;                 /* function renumbering units, -1: none */
    int64_t *ltab;                  /* its values for 0..U-1, computed on first use */
    int32_t ltab_fn;
    int ltab_shared;                /* ltab belongs to the sink's cache */
    int64_t *lo, *hi;               /* the transfer set being built */
    int nset, capset;
    int at;                         /* index where the destination set starts, -1: none */
    int line, col;                  /* of the instruction being run */
    st_err *err;
    sub subs[ST_VM_MAX_SUBS];       /* the phases on sub-communicators being run, outermost first */
    int nsub;
    sub pend;                       /* the next one, being described (SUB_MEMBERS, SUB_UNITS) */
    st_vm_key fill;                 /* the SUB_PIECES whose pieces go to the cache at the next SUB_PHASE (pc -1: none) */
    st_vm_key memo;                 /* the MEMO whose value goes to the cache at its MEMO_END (pc -1: none) */
    int64_t split_ppm;              /* R, the 2D split ratio, in millionths (st_inst; 500000 when not given) */
    int in_split, in_lane;          /* inside a `split`, inside one of its lanes */
    int64_t (*lanes)[2];            /* the units of the split's lanes so far, sorted and merged per lane: the */
    int nlanes, caplanes, lane0;    /* current lane's are lanes[lane0 .. nlanes) */
    int *lanestart;                 /* where each lane's units begin in lanes */
    int nlanestart, caplanestart;
} vm;

static int fail(vm *m, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int fail(vm *m, const char *fmt, ...)
{
    char buf[400];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    m->err->line = m->line;
    snprintf(m->err->msg, sizeof m->err->msg, "%s (p = %lld, rank %lld)", buf, (long long)m->p, (long long)m->r);
    return -1;
}

static int out_of_fuel(vm *m)
{
    return fail(m, "evaluation ran more than %ld instructions (a runaway loop?)", m->fuel_budget);
}

static int push(vm *m, int64_t v)
{
    if (m->sp >= ST_MAX_STACK)
        return fail(m, "expression too deep (value stack of %d exhausted)", ST_MAX_STACK);
    m->stack[m->sp++] = v;
    return 0;
}

static int pop(vm *m, int64_t *v)
{
    *v = 0;
    if (m->sp <= 0)
        return fail(m, "corrupt step table: value stack underflow");
    *v = m->stack[--m->sp];
    return 0;
}

/* Why a binary operation failed (st_arith.h computes it), in the words the machine has always used. */
static int binary_error(vm *m, int op, int64_t a, int64_t b)
{
    long long x = a, y = b;
    switch (op) {
    case ST_OP_ADD: return fail(m, "integer overflow in %lld + %lld", x, y);
    case ST_OP_SUB: return fail(m, "integer overflow in %lld - %lld", x, y);
    case ST_OP_MUL: return fail(m, "integer overflow in %lld * %lld", x, y);
    case ST_OP_DIV:
        return b == 0 ? fail(m, "division by zero (%lld / 0)", x) : fail(m, "integer overflow in division");
    case ST_OP_MOD: return fail(m, "modulo by zero (%lld %% 0)", x);
    case ST_OP_SHL:
        return b < 0 || b > 62 ? fail(m, "shift count %lld out of range 0..62", y)
                               : fail(m, "integer overflow in %lld << %lld", x, y);
    case ST_OP_SHR: return fail(m, "shift count %lld out of range 0..63", y);
    case ST_OP_LCM: return fail(m, "integer overflow in lcm(%lld, %lld)", x, y);
    default: return fail(m, "corrupt step table: opcode %d is not binary", op);
    }
}

/* Binary operators: pops b then a, pushes a op b. */
static int binary(vm *m, int op)
{
    int64_t a, b, v = 0;
    if (pop(m, &b) || pop(m, &a))
        return -1;
    return st_ar_binary(op, a, b, &v) ? binary_error(m, op, a, b) : push(m, v);
}

static int unary(vm *m, int op)
{
    int64_t a, v = 0;
    if (pop(m, &a))
        return -1;
    if (st_ar_unary(op, a, &v) == 0)
        return push(m, v);
    switch (op) {
    case ST_OP_NEG: return fail(m, "integer overflow in negation");
    case ST_OP_FLOOR_LOG2: return fail(m, "floor_log2(%lld): argument must be positive", (long long)a);
    case ST_OP_POW2: return fail(m, "pow2(%lld): argument out of range 0..62", (long long)a);
    default: return fail(m, "corrupt step table: opcode %d is not unary", op);
    }
}

/* Room for n more ranges in the set. */
static int set_reserve(vm *m, int64_t n)
{
    if (m->nset + n <= m->capset)
        return 0;
    if (n > INT32_MAX / 2 - m->nset)
        return fail(m, "a set of more than %d ranges", INT32_MAX / 2);
    int cap = m->capset ? 2 * m->capset : 64;
    while (cap < m->nset + n)
        cap *= 2;
    int64_t *l = realloc(m->lo, sizeof *l * cap), *h;
    if (!l)
        return fail(m, "out of memory");
    m->lo = l;
    h = realloc(m->hi, sizeof *h * cap);
    if (!h)
        return fail(m, "out of memory");
    m->hi = h;
    m->capset = cap;
    return 0;
}

static int set_add(vm *m, int64_t lo, int64_t hi)
{
    if (hi < lo)
        return 0;
    if (m->nset == m->capset && set_reserve(m, 1))
        return -1;
    m->lo[m->nset] = lo;
    m->hi[m->nset] = hi;
    m->nset++;
    return 0;
}

/* One ascending piece of a strided set (st_piece.h) into the set: a range when its stride is 0 or 1, else unit by
 * unit (the sink's runs are contiguous). */
static int add_piece(void *ctx, st_piece pc)
{
    vm *m = ctx;
    int64_t last = pc.first + pc.stride * (pc.count - 1);
    if (pc.first < 0 || last >= 2 * (int64_t)ST_MAX_UNITS)
        return fail(m, "unit %lld is out of range", (long long)(pc.first < 0 ? pc.first : last));
    if (pc.stride <= 1)
        return set_add(m, pc.first, pc.stride ? last : pc.first);
    for (int64_t u = pc.first; u <= last; u += pc.stride)
        if (set_add(m, u, u))
            return -1;
    return 0;
}

/* The k-th of count values from first to last in equal steps (exact: the compiler proved them affine). */
static int stride_of(vm *m, int64_t first, int64_t last, int64_t count, int64_t *step)
{
    *step = 0;
    if (count > 1 && (__builtin_sub_overflow(last, first, step) || *step % (count - 1) != 0))
        return fail(m, "corrupt step table: a strided set that is not affine");
    if (count > 1)
        *step /= count - 1;
    return 0;
}

/* ST_OP_SET_STRIDE 2: the ranges a(i) .. b(i) of an affine comprehension of ranges, i = lo .. hi in order, from
 * a(lo) b(lo) a(hi) b(hi) (st_steptab.h); each range costs a unit of fuel, as its loop would have cost more. */
static int set_stride_ranges(vm *m)
{
    int64_t a0, b0, a1, b1, lo, hi, count, sa, sb;
    if (pop(m, &hi) || pop(m, &lo) || pop(m, &b1) || pop(m, &a1) || pop(m, &b0) || pop(m, &a0))
        return -1;
    if (hi < lo || __builtin_sub_overflow(hi, lo, &count) || count >= INT64_MAX)
        return fail(m, "corrupt step table: strided ranges %lld .. %lld", (long long)lo, (long long)hi);
    count++;
    if (stride_of(m, a0, a1, count, &sa) || stride_of(m, b0, b1, count, &sb))
        return -1;
    if (count >= m->fuel)
        return out_of_fuel(m);
    m->fuel -= count;
    for (int64_t k = 0; k < count; k++) /* between the ends, so no overflow */
        if (set_add(m, a0 + k * sa, b0 + k * sb))
            return -1;
    return 0;
}

/* ST_OP_SET_STRIDE: an affine comprehension's units from its ends (st_steptab.h). */
static int set_stride(vm *m, int with_mod)
{
    if (with_mod == 2)
        return set_stride_ranges(m);
    int64_t first, last, lo, hi, mod = 0, count, stride = 0;
    if ((with_mod && pop(m, &mod)) || pop(m, &hi) || pop(m, &lo) || pop(m, &last) || pop(m, &first))
        return -1;
    if (with_mod && mod == 0)
        return fail(m, "modulo by zero (%lld %% 0)", (long long)first);
    if (mod == INT64_MIN || hi < lo || __builtin_sub_overflow(hi, lo, &count) || count >= INT64_MAX)
        return fail(m, "corrupt step table: strided set %lld .. %lld", (long long)lo, (long long)hi);
    count++;
    if (stride_of(m, first, last, count, &stride))
        return -1;
    return st_piece_cut(first, stride, count, mod < 0 ? -mod : mod, add_piece, m) ? -1 : 0;
}

/* The current frame: nslots slots from fp, zeroed, the first nargs taken from the stack. */
static int frame_at(vm *m, int32_t fp, int32_t nslots, int nargs)
{
    if (nslots < nargs || nslots > ST_MAX_FRAME || fp + nslots > ST_VM_SLOTS)
        return fail(m, "frame of %d slots does not fit", nslots);
    if (m->sp < nargs)
        return fail(m, "corrupt step table: missing call arguments");
    m->fp = fp;
    m->nslots = nslots;
    m->top = fp + nslots;
    memset(m->slots + fp, 0, sizeof(int64_t) * nslots);
    m->sp -= nargs;
    memcpy(m->slots + fp, m->stack + m->sp, sizeof(int64_t) * nargs);
    return 0;
}

/* Enter a new frame of nslots slots above the current one (frame_at), the caller's kept for leave. */
static int enter(vm *m, int32_t ret_pc, int32_t nslots, int nargs, int algo_body)
{
    if (m->depth >= ST_MAX_CALL_DEPTH)
        return fail(m, "recursion deeper than %d calls", ST_MAX_CALL_DEPTH);
    frame f = {ret_pc, m->fp, m->afp, m->nslots, m->afp_nslots, m->layout, 0};
    if (frame_at(m, m->top, nslots, nargs))
        return -1;
    m->calls[m->depth++] = f;
    if (algo_body) {
        m->afp = m->fp;
        m->afp_nslots = nslots;
    }
    return 0;
}

/* Is a CALL whose next instruction is at pc a tail call of a function: its result returned at once (RET 1, through
 * forward jumps perhaps, as an `if` compiles)? Then the callee takes the caller's frame (frame_at m->fp): a
 * tail-recursive function (an accumulator over thousands of groups) runs at a constant depth, bounded by fuel like
 * a loop. The native C's loops follow the same jumps (codegen/emit_native.c: tail_self). */
static int tail_call(const vm *m, int32_t pc)
{
    const st_catalogue *cat = m->cat;
    if (m->depth == 0) /* RET 1 ends only a function's code: a CALL in an algorithm's body is never followed by it */
        return 0;
    while (pc >= 0 && pc < cat->ncode && cat->code[pc].op == ST_OP_JMP && cat->code[pc].a > pc)
        pc = cat->code[pc].a;
    return pc >= 0 && pc < cat->ncode && cat->code[pc].op == ST_OP_RET && cat->code[pc].a == 1;
}

static int32_t leave(vm *m)
{
    frame f = m->calls[--m->depth];
    m->top = m->fp;
    m->fp = f.fp;
    m->afp = f.afp;
    m->nslots = f.nslots;
    m->afp_nslots = f.afp_nslots;
    m->layout = f.layout;
    return f.ret_pc;
}

static int run(vm *m, int32_t pc, int stop_depth, const st_vm_sink *sink);

/* Evaluate function f at u on this machine (a nested run that ends when f returns). */
static int eval_fn(vm *m, int32_t f, int64_t u, int64_t *out, const st_vm_sink *sink)
{
    const st_func *fn = &m->cat->funcs[f];
    int depth = m->depth;
    if (push(m, u) || enter(m, -1, fn->nslots, 1, 0) || run(m, fn->entry, depth, sink) < 0)
        return -1;
    return pop(m, out);
}

/* A unit of fuel for a native evaluation; -1 when none is left (the machine then runs out and says so). */
static int fuel_take(vm *m, long n)
{
    if (m->fuel <= n)
        return -1;
    m->fuel -= n;
    return 0;
}

/* The layout's table for the current U: one evaluation per unit, then lookups. A rank-free function's table is
 * shared through the sink's cache, so an instantiation computes it once instead of once per rank. */
static int layout_table(vm *m, const st_vm_sink *sink)
{
    if (m->ltab && m->ltab_fn == m->layout)
        return 0;
    /* inside a sub-communicator p differs from rank to rank, which the cache's key does not say */
    int shareable = sink->cache && m->nsub == 0 && (m->cat->funcs[m->layout].flags & ST_FUNC_RANK_FREE);
    st_vm_cache *c = sink->cache;
    if (!m->ltab_shared)
        free(m->ltab);
    m->ltab = NULL;
    m->ltab_shared = 0;
    m->ltab_fn = m->layout;
    if (shareable && c->tab && c->fn == m->layout && c->n == m->nunits) {
        m->ltab = c->tab;
        m->ltab_shared = 1;
        return 0;
    }
    m->ltab = malloc(sizeof(int64_t) * (size_t)m->nunits);
    if (!m->ltab)
        return fail(m, "out of memory");
    int line = m->line, col = m->col; /* the send's, which the function's instructions overwrite */
    st_native_fn native = m->cat->funcs[m->layout].native;
    /* The table has a budget of its own, ST_VM_UNIT_FUEL per unit on top of a run's: a million units of a
     * tree map cost more than a rank's run may, and the table is computed once, not once per rank. */
    long fuel = m->fuel, budget = m->fuel_budget;
    m->fuel_budget = ST_VM_FUEL + (m->nunits < ST_VM_FUEL / ST_VM_UNIT_FUEL ? m->nunits * ST_VM_UNIT_FUEL : ST_VM_FUEL);
    m->fuel = m->fuel_budget;
    for (int64_t u = 0; u < m->nunits; u++)
        if ((!native || native(m->p, u, &m->ltab[u]) || fuel_take(m, 1)) && /* on failure the machine says why */
            eval_fn(m, m->layout, u, &m->ltab[u], sink)) {
            free(m->ltab);
            m->ltab = NULL;
            return -1;
        }
    m->fuel = fuel;
    m->fuel_budget = budget;
    m->line = line;
    m->col = col;
    if (shareable) { /* hand the table to the cache */
        free(c->tab);
        c->tab = m->ltab, c->fn = m->layout, c->n = m->nunits;
        m->ltab_shared = 1;
    }
    return 0;
}

/* Drop the set's first n ranges (the originals whose images were appended after them); `at`, the destination
 * part's start among the originals (-1: none), moves with them. */
static void set_drop_front(vm *m, int n, int at)
{
    memmove(m->lo, m->lo + n, sizeof(int64_t) * (size_t)(m->nset - n));
    memmove(m->hi, m->hi + n, sizeof(int64_t) * (size_t)(m->nset - n));
    m->nset -= n;
    if (at >= 0)
        m->at -= n;
}

/* Replace the set's units by their layout images (tab, for units below nunits); scratch units (>= nunits, below
 * limit) are not renumbered. */
static int relabel(vm *m, const int64_t *tab, int64_t nunits, int64_t limit)
{
    int n = m->nset, at = m->at;
    for (int i = 0; i < n; i++)
        if (m->lo[i] < 0 || m->hi[i] >= limit)
            return fail(m, "unit %lld is outside 0..%lld (before the layout)",
                        (long long)(m->lo[i] < 0 ? m->lo[i] : m->hi[i]), (long long)(limit - 1));
    int64_t images = 0;
    for (int i = 0; i < n; i++)
        images += m->hi[i] - m->lo[i] + 1; /* at most 2 ST_MAX_UNITS each: checked above */
    if (set_reserve(m, images))
        return -1;
    for (int i = 0; i < n; i++) {
        if (i == at)
            m->at = m->nset; /* the destination part starts again among the images */
        for (int64_t u = m->lo[i], k = m->nset; u <= m->hi[i]; u++, k++)
            m->lo[k] = m->hi[k] = u < nunits ? tab[u] : u;
        m->nset += (int)(m->hi[i] - m->lo[i] + 1);
    }
    if (at == n)
        m->at = m->nset; /* an empty destination part */
    /* drop the originals: the images were appended after them */
    set_drop_front(m, n, at);
    return 0;
}

static int apply_layout(vm *m, const st_vm_sink *sink)
{
    if (layout_table(m, sink))
        return -1;
    return relabel(m, m->ltab, m->nunits, m->nunits + m->nscratch);
}

/* Replace the set's units (units of a sub-communicator's phase, 0 .. inner - 1) by the caller's units they stand
 * for, keeping the source and destination parts apart. */
static int map_units(vm *m, const sub *s, int64_t inner)
{
    int n = m->nset, at = m->at;
    for (int i = 0; i < n; i++)
        if (m->lo[i] < 0 || m->hi[i] >= inner)
            return fail(m, "unit %lld is outside 0..%lld", (long long)(m->lo[i] < 0 ? m->lo[i] : m->hi[i]),
                        (long long)(inner - 1));
    for (int i = 0; i < n; i++) {
        if (i == at)
            m->at = m->nset;
        for (int64_t u = m->lo[i]; u <= m->hi[i]; u++)
            for (int32_t k = s->mfirst[u]; k < s->mfirst[u + 1]; k++)
                if (set_add(m, s->mlo[k], s->mhi[k]))
                    return -1;
    }
    if (at == n)
        m->at = m->nset;
    set_drop_front(m, n, at);
    return 0;
}

/* A send made inside phases on sub-communicators, in the caller's terms, innermost phase first: the units through
 * the piece map and then the caller's layout, the peer through the member list. */
static int map_out(vm *m, int64_t *dst)
{
    if (m->nset == 0)
        return 0; /* nothing is sent: the peer is not looked at, as outside sub-communicators */
    for (int k = m->nsub - 1; k >= 0; k--) {
        const sub *s = &m->subs[k];
        int64_t inner_units = k == m->nsub - 1 ? m->nunits : m->subs[k + 1].nunits;
        int64_t inner_p = k == m->nsub - 1 ? m->p : m->subs[k + 1].p;
        if (*dst < 0 || *dst >= inner_p)
            return fail(m, "send to rank %lld, outside 0..%lld", (long long)*dst, (long long)(inner_p - 1));
        *dst = s->members[*dst];
        if (m->nset > 0 && map_units(m, s, inner_units))
            return -1;
        if (m->nset > 0 && s->layout >= 0 && relabel(m, s->ltab, s->nunits, s->nunits + s->nscratch))
            return -1;
    }
    return 0;
}

/* Every unit the set names lies in the current lane's units. */
/* The first of n sorted, disjoint ranges that ends at or after x (n: none). Sets and lanes come mostly in
 * ascending order, so the search starts at *hint (the answer for the previous, smaller x) and walks a few ranges
 * before it bisects; *hint becomes the answer. */
static int range_seek(const int64_t (*r)[2], int n, int64_t x, int *hint)
{
    int lo = *hint > 0 && *hint <= n && r[*hint - 1][1] < x ? *hint : 0, hi = n;
    for (int k = 0; k < 4 && lo < n && r[lo][1] < x; k++)
        lo++;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (r[mid][1] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return *hint = lo;
}

/* Whether the current lane's units (sorted and merged, so a held range lies in one of them) hold lo..hi. */
static int lane_holds(const vm *m, int64_t lo, int64_t hi, int *hint)
{
    const int64_t (*r)[2] = (const int64_t (*)[2])m->lanes + m->lane0;
    int n = m->nlanes - m->lane0, i = range_seek(r, n, lo, hint);
    return i < n && r[i][0] <= lo && hi <= r[i][1];
}

static int emit_send(vm *m, const st_vm_sink *sink, int a)
{
    int64_t dst;
    if (pop(m, &dst))
        return -1;
    if (m->nunits <= 0)
        return fail(m, "send before `units` was declared");
    if (!(a & 2))
        m->at = -1;
    else if (m->at < 0)
        return fail(m, "corrupt step table: send with a destination set but no SET_AT");
    int rc = 0;
    if (m->nset > 0 && m->layout >= 0)
        rc = apply_layout(m, sink);
    if (!rc && m->nsub > 0)
        rc = map_out(m, &dst);
    int nsrc = m->at >= 0 ? m->at : m->nset, hint = 0;
    for (int i = 0; !rc && m->in_lane && i < m->nset; i++)
        if (!lane_holds(m, m->lo[i], m->hi[i], &hint))
            rc = fail(m, "a send of units %lld..%lld outside its lane's units (lanes must keep to their own units)",
                      (long long)m->lo[i], (long long)m->hi[i]);
    if (!rc && nsrc > 0)
        rc = sink->send(sink->ctx, dst, a & 1, m->lo, m->hi, nsrc, m->nset, m->line, m->col, m->err);
    else if (!rc && m->nset > nsrc)
        rc = fail(m, "`at` names destination units for a transfer of no units");
    m->nset = 0;
    m->at = -1;
    return rc;
}

/* ---- one rank's senders ------------------------------------------------------------------------------------- */

/* A body begins: one that sends but says no `from` leaves my senders unknown, which the sink hears as n = -1. */
static int body_begins(vm *m, const st_algo *al, const st_vm_sink *sink)
{
    if (!sink->from || (al->flags & (ST_ALGO_SENDS | ST_ALGO_FROM)) != ST_ALGO_SENDS)
        return 0;
    return sink->from(sink->ctx, NULL, NULL, -1, m->line, m->err);
}

/* A rank of the current context as a rank of the whole instantiation (through the member lists, innermost first);
 * -1 when it is outside 0..p-1 of its context. */
static int64_t top_rank(const vm *m, int64_t x)
{
    if (x < 0 || x >= m->p)
        return -1;
    for (int k = m->nsub - 1; k >= 0; k--)
        x = m->subs[k].members[x];
    return x;
}

/* FROM: the set built so far (a = 1: every rank) is this body's senders, told to the sink in whole ranks. */
static int from_op(vm *m, int a, const st_vm_sink *sink)
{
    int rc = 0, n;
    if (a && (m->nset = 0, set_add(m, 0, m->p - 1)))
        return -1;
    n = m->nset;
    for (int i = 0; i < n && !rc; i++)
        if (m->lo[i] < 0 || m->hi[i] >= m->p)
            rc = fail(m, "`from` names rank %lld, outside 0..%lld", (long long)(m->lo[i] < 0 ? m->lo[i] : m->hi[i]),
                      (long long)(m->p - 1));
    if (!rc && m->nsub > 0) { /* map each rank; the images go after the originals, which are then dropped */
        for (int i = 0; i < n && !rc; i++)
            for (int64_t x = m->lo[i]; x <= m->hi[i] && !rc; x++) {
                int64_t y = top_rank(m, x);
                rc = set_add(m, y, y);
            }
        if (!rc)
            set_drop_front(m, n, -1);
    }
    if (!rc && sink->from)
        rc = sink->from(sink->ctx, m->lo, m->hi, m->nset, m->line, m->err);
    m->nset = 0;
    m->at = -1;
    return rc;
}

/* DST: [dst -- dst], or, in a run for one receiver that is not dst, pop it and jump past the send. */
static int dst_op(vm *m, int32_t a, int32_t *pc, const st_vm_sink *sink)
{
    if (!sink->only_to)
        return 0;
    if (m->sp <= 0)
        return fail(m, "corrupt step table: DST without a destination");
    if (top_rank(m, m->stack[m->sp - 1]) == sink->only_to - 1)
        return 0;
    if (a < 0 || a > m->cat->ncode)
        return fail(m, "corrupt step table: jump to %d", a);
    m->sp--;
    *pc = a;
    return 0;
}

/* ---- phases on sub-communicators ----------------------------------------------------------------------------- */

static void sub_free(sub *s)
{
    free(s->members);
    free(s->plo);
    free(s->phi);
    free(s->pfirst);
    free(s->mfirst);
    free(s->mlo);
    free(s->mhi);
    memset(s, 0, sizeof *s);
}

static int grow_buf(vm *m, void **v, int *cap, int need, size_t size)
{
    if (need <= *cap)
        return 0;
    int cap2 = *cap ? *cap : 16;
    while (cap2 < need) {
        if (cap2 > (1 << 28))
            return fail(m, "phase on a sub-communicator too large");
        cap2 *= 2;
    }
    void *n = realloc(*v, size * (size_t)cap2);
    if (!n)
        return fail(m, "out of memory");
    *v = n;
    *cap = cap2;
    return 0;
}

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* The algorithm a phase naming algorithm a runs: a's replacement in st_inst.use, if any. */
static int use_of(vm *m, int32_t a, int32_t *out)
{
    *out = a;
    if (a < 0 || a >= m->cat->nalgos)
        return fail(m, "corrupt step table: algorithm %d", a);
    if (!m->use || m->use[a] < 0)
        return 0;
    if (m->use[a] >= m->cat->nalgos || m->cat->algos[m->use[a]].coll != m->cat->algos[a].coll)
        return fail(m, "the replacement of %s %s is not an algorithm of that collective", m->cat->algos[a].name,
                    st_coll_name(m->cat->algos[a].coll));
    *out = m->use[a];
    return 0;
}

/* SUB_MEMBERS: the set built so far, in the order it was written, is the member list; my place in it; the root. */
static int sub_members(vm *m, int32_t a)
{
    sub *s = &m->pend;
    int64_t root, n = 0;
    if (pop(m, &root) || use_of(m, a, &a))
        return -1;
    sub_free(s);
    *s = (sub){.algo = a, .coll = m->cat->algos[a].coll, .me = -1};
    for (int i = 0; i < m->nset; i++) {
        if (m->lo[i] < 0 || m->hi[i] >= m->p)
            return fail(m, "rank %lld of the phase's members is outside 0..%lld",
                        (long long)(m->lo[i] < 0 ? m->lo[i] : m->hi[i]), (long long)(m->p - 1));
        n += m->hi[i] - m->lo[i] + 1;
        if (n > m->p)
            break; /* a rank named twice: found below */
    }
    int32_t *sorted = malloc(sizeof(int32_t) * (size_t)(n + 1));
    s->members = malloc(sizeof(int32_t) * (size_t)(n + 1));
    if (!sorted || !s->members) {
        free(sorted);
        return fail(m, "out of memory");
    }
    for (int i = 0; i < m->nset && s->nmembers < n; i++)
        for (int64_t x = m->lo[i]; x <= m->hi[i] && s->nmembers < n; x++) {
            if (x == m->r)
                s->me = s->nmembers;
            s->members[s->nmembers++] = (int32_t)x;
        }
    memcpy(sorted, s->members, sizeof(int32_t) * (size_t)n);
    qsort(sorted, (size_t)n, sizeof(int32_t), cmp_i32);
    int64_t twice = -1;
    for (int64_t i = 1; i < n && twice < 0; i++)
        if (sorted[i] == sorted[i - 1])
            twice = sorted[i];
    free(sorted);
    m->nset = 0;
    m->at = -1;
    if (twice >= 0)
        return fail(m, "rank %lld is named twice among the phase's members", (long long)twice);
    /* the inner root: the given rank's place, else the current root's place, else 0 */
    s->root = 0;
    int64_t want = root >= 0 ? root : m->root;
    int found = 0;
    for (int i = 0; i < s->nmembers; i++)
        if (s->members[i] == want)
            s->root = i, found = 1;
    if (root >= 0 && !found && s->me >= 0 && st_coll_rooted(s->coll))
        return fail(m, "the phase's root, rank %lld, is not among its members", (long long)root);
    if (!st_coll_rooted(s->coll))
        s->root = 0;
    return push(m, s->me >= 0);
}

static int cmp_range(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return (x[0] > y[0]) - (x[0] < y[0]);
}

/* The set built so far as sorted ranges with overlapping and adjacent ones merged: *n of them, [r[i][0], r[i][1]];
 * the set is emptied, the caller frees r. NULL (after fail) when out of memory. */
static int64_t (*set_ranges(vm *m, int *n))[2]
{
    int64_t (*r)[2] = malloc(sizeof *r * (size_t)(m->nset + 1));
    int k = 0, out = 0;
    *n = 0;
    if (!r) {
        fail(m, "out of memory");
        return NULL;
    }
    for (int i = 0; i < m->nset; i++)
        if (m->lo[i] <= m->hi[i])
            r[k][0] = m->lo[i], r[k][1] = m->hi[i], k++;
    m->nset = 0;
    int sorted = 1; /* the strided sets come in order: no sort to pay for */
    for (int i = 1; i < k && sorted; i++)
        sorted = cmp_range(r[i - 1], r[i]) <= 0;
    if (!sorted)
        qsort(r, (size_t)k, sizeof *r, cmp_range);
    for (int i = 0; i < k;) { /* in place: out <= i */
        int64_t lo = r[i][0], hi = r[i][1];
        for (i++; i < k && r[i][0] <= hi + 1; i++)
            hi = r[i][1] > hi ? r[i][1] : hi;
        r[out][0] = lo, r[out][1] = hi, out++;
    }
    *n = out;
    return r;
}

/* SUB_UNITS: the set built so far, sorted and merged, is the next piece. */
static int sub_units(vm *m)
{
    sub *s = &m->pend;
    int n;
    int64_t (*r)[2] = set_ranges(m, &n);
    if (!r)
        return -1;
    m->at = -1;
    int rc = grow_buf(m, (void **)&s->pfirst, &s->cappieces, s->npieces + 2, sizeof(int32_t));
    if (!rc)
        s->pfirst[s->npieces] = s->nruns;
    for (int i = 0; i < n && !rc; i++) {
        int64_t lo = r[i][0], hi = r[i][1];
        int cap = s->capruns;
        rc = grow_buf(m, (void **)&s->plo, &cap, s->nruns + 1, sizeof(int64_t));
        if (!rc)
            rc = grow_buf(m, (void **)&s->phi, &s->capruns, s->nruns + 1, sizeof(int64_t));
        if (!rc) {
            s->plo[s->nruns] = lo;
            s->phi[s->nruns++] = hi;
        }
    }
    if (!rc)
        s->pfirst[++s->npieces] = s->nruns;
    free(r);
    return rc;
}

static int map_add(vm *m, sub *s, int64_t lo, int64_t hi)
{
    int cap = s->capm;
    if (grow_buf(m, (void **)&s->mlo, &cap, s->nm + 1, sizeof(int64_t)) ||
        grow_buf(m, (void **)&s->mhi, &s->capm, s->nm + 1, sizeof(int64_t)))
        return -1;
    s->mlo[s->nm] = lo;
    s->mhi[s->nm++] = hi;
    return 0;
}

/* The map from the phase's units (just declared) to the caller's: one piece is split evenly over all of them (a
 * balanced floor split, as units split a block); k pieces for a collective of k blocks give block b's units an
 * even split of piece b. No piece given: the caller's whole vector. */
static int sub_map(vm *m)
{
    sub *s = &m->subs[m->nsub - 1];
    int64_t U = m->nunits, nb = st_coll_nblocks(s->coll, (int)m->p);
    const char *name = m->cat->algos[s->algo].name;
    if (s->npieces == 0) {
        if (s->nunits <= 0)
            return fail(m, "phase within a sub-communicator before `units` was declared");
        if (!(s->pfirst = calloc(2, sizeof(int32_t))) || !(s->plo = malloc(sizeof(int64_t))) ||
            !(s->phi = malloc(sizeof(int64_t))))
            return fail(m, "out of memory");
        s->plo[0] = 0, s->phi[0] = s->nunits - 1, s->pfirst[1] = 1, s->npieces = 1, s->nruns = 1;
    }
    if (s->npieces != 1 && s->npieces != nb)
        return fail(m, "the phase gives %d unit sets but %s %s has %lld blocks for %lld ranks", s->npieces, name,
                    st_coll_name(s->coll), (long long)nb, (long long)m->p);
    if (s->npieces > 1 && U % nb)
        return fail(m, "%s %s declares %lld units, not a multiple of its %lld blocks", name, st_coll_name(s->coll),
                    (long long)U, (long long)nb);
    int64_t per = s->npieces == 1 ? U : U / nb;
    if (!(s->mfirst = malloc(sizeof(int32_t) * (size_t)(U + 1))))
        return fail(m, "out of memory");
    for (int64_t u = 0, k = -1, run = 0, base = 0, n = 0; u < U; u++) {
        if (u / per != k) { /* a new piece: its size, and its runs from the start */
            k = u / per;
            run = s->pfirst[k];
            base = 0;
            n = 0;
            for (int32_t i = s->pfirst[k]; i < s->pfirst[k + 1]; i++)
                n += s->phi[i] - s->plo[i] + 1;
        }
        int64_t j = u % per, from = j * n / per, to = (j + 1) * n / per; /* positions [from, to) of the piece */
        s->mfirst[u] = s->nm;
        for (; run < s->pfirst[k + 1] && from < to;) {
            int64_t len = s->phi[run] - s->plo[run] + 1;
            if (from >= base + len) {
                base += len, run++;
                continue;
            }
            int64_t a = s->plo[run] + (from - base), b = s->plo[run] + ((to < base + len ? to : base + len) - base) - 1;
            if (map_add(m, s, a, b))
                return -1;
            from = b - s->plo[run] + base + 1;
        }
    }
    s->mfirst[U] = s->nm;
    return 0;
}

void st_vm_cache_free(st_vm_cache *c)
{
    for (int i = 0; i < c->npieces; i++) {
        free(c->pieces[i].pfirst);
        free(c->pieces[i].plo);
        free(c->pieces[i].phi);
    }
    free(c->pieces);
    free(c->memos);
    free(c->tab);
    *c = (st_vm_cache)ST_VM_CACHE_INIT;
}

/* Copy n pieces of nruns runs from (pfirst, plo, phi) into fresh arrays; -1 out of memory (nothing allocated). */
static int pieces_copy(int n, int nruns, const int32_t *pfirst, const int64_t *plo, const int64_t *phi,
                       int32_t **fo, int64_t **lo, int64_t **hi)
{
    *fo = malloc(sizeof(int32_t) * (size_t)(n + 1));
    *lo = malloc(sizeof(int64_t) * (size_t)(nruns + 1));
    *hi = malloc(sizeof(int64_t) * (size_t)(nruns + 1));
    if (!*fo || !*lo || !*hi) {
        free(*fo), free(*lo), free(*hi);
        *fo = NULL, *lo = *hi = NULL;
        return -1;
    }
    memcpy(*fo, pfirst, sizeof(int32_t) * (size_t)(n + 1));
    if (nruns > 0) { /* pieces may all be empty (AHC_BROKE's), their runs NULL */
        memcpy(*lo, plo, sizeof(int64_t) * (size_t)nruns);
        memcpy(*hi, phi, sizeof(int64_t) * (size_t)nruns);
    }
    return 0;
}

/* A keyed region's constants at a (st_steptab.h: SUB_PIECES, MEMO): its end, which must be an instruction `op`
 * after `at`, and its key now (the key slots' values); -1 when corrupt. */
static int key_of(vm *m, int32_t at, int32_t a, int op, int32_t *target, st_vm_key *k)
{
    const st_catalogue *cat = m->cat;
    if (a < 0 || a > cat->nconsts - 2 || cat->consts[a + 1] < 0 || cat->consts[a + 1] > ST_KEY_SLOTS ||
        a + 2 + cat->consts[a + 1] > cat->nconsts)
        return fail(m, "corrupt step table: key constants at %d", a);
    int64_t t = cat->consts[a];
    if (t <= at || t >= cat->ncode || cat->code[t].op != op)
        return fail(m, "corrupt step table: a keyed region to pc %lld", (long long)t);
    *target = (int32_t)t;
    k->pc = at, k->n = (int32_t)cat->consts[a + 1], k->nunits = m->nunits;
    for (int i = 0; i < k->n; i++) {
        int64_t slot = cat->consts[a + 2 + i];
        if (slot < 0 || slot >= m->nslots)
            return fail(m, "corrupt step table: key slot %lld", (long long)slot);
        k->v[i] = m->slots[m->fp + slot];
    }
    return 0;
}

static int key_eq(const st_vm_key *a, const st_vm_key *b)
{
    return a->pc == b->pc && a->n == b->n && a->nunits == b->nunits &&
           !memcmp(a->v, b->v, sizeof(int64_t) * (size_t)a->n);
}

/* SUB_PIECES at pc `at` with its constants at a: take the pieces from the cache when another rank built them with
 * the same key and as many members, else build them and hand them to the cache at the SUB_PHASE (sub_keep). Only
 * outside sub-communicators, where p and the units are the instantiation's. */
static int sub_pieces(vm *m, int32_t at, int32_t a, int32_t *pc, const st_vm_sink *sink)
{
    st_vm_cache *c = sink->cache;
    int32_t target = -1;
    st_vm_key k = {.pc = -1};
    if (a < 0 || !c || m->nsub > 0 || !m->pend.members)
        return 0;
    if (key_of(m, at, a, ST_OP_SUB_PHASE, &target, &k))
        return -1;
    sub *s = &m->pend;
    for (int i = 0; i < c->npieces; i++) {
        const st_vm_pieces *e = &c->pieces[i];
        if (e->nmembers != s->nmembers || !key_eq(&e->key, &k))
            continue;
        if (s->npieces)
            return fail(m, "corrupt step table: SUB_PIECES after a piece");
        if (pieces_copy(e->npieces, e->nruns, e->pfirst, e->plo, e->phi, &s->pfirst, &s->plo, &s->phi))
            return fail(m, "out of memory");
        s->npieces = s->cappieces = e->npieces;
        s->nruns = s->capruns = e->nruns;
        *pc = target;
        return 0;
    }
    if (c->npieces < ST_VM_MAX_PIECES && c->nruns < ST_VM_MAX_PIECE_RUNS)
        m->fill = k;
    return 0;
}

/* At the SUB_PHASE after a SUB_PIECES that found nothing: the pieces just built go to the cache. */
static int sub_keep(vm *m, const st_vm_sink *sink)
{
    st_vm_cache *c = sink->cache;
    const sub *s = &m->pend;
    st_vm_pieces e = {m->fill, s->nmembers, s->npieces, s->nruns, NULL, NULL, NULL};
    m->fill.pc = -1;
    if (e.key.pc < 0 || !c || m->nsub > 0 || !s->members || s->npieces == 0 || c->npieces >= ST_VM_MAX_PIECES ||
        c->nruns + s->nruns > ST_VM_MAX_PIECE_RUNS)
        return 0;
    void *grown = realloc(c->pieces, sizeof *c->pieces * (size_t)(c->npieces + 1));
    if (!grown)
        return fail(m, "out of memory");
    c->pieces = grown;
    if (pieces_copy(s->npieces, s->nruns, s->pfirst, s->plo, s->phi, &e.pfirst, &e.plo, &e.phi))
        return fail(m, "out of memory");
    c->pieces[c->npieces++] = e;
    c->nruns += s->nruns;
    return 0;
}

/* The slot of key k in a table of cap entries: where it is, or the free slot where it would go. */
static st_vm_memo *memo_slot(st_vm_memo *t, int cap, const st_vm_key *k)
{
    uint64_t h = st_hash_int(st_hash_int(ST_HASH_INIT, k->pc), k->nunits); /* the catalogue hash's FNV-1a */
    for (int i = 0; i < k->n; i++)
        h = st_hash_int(h, k->v[i]);
    for (uint32_t i = (uint32_t)(h ^ h >> 32) & (uint32_t)(cap - 1);; i = (i + 1) & (uint32_t)(cap - 1))
        if (t[i].key.pc < 0 || key_eq(&t[i].key, k))
            return &t[i]; /* the table is never full (3/4 at most), so a free slot ends every probe */
}

/* Room for one more MEMO value: the table made or doubled (its entries moved over); -1 when it may not grow or
 * out of memory (the value is then not kept: every rank computes it). */
static int memo_room(st_vm_cache *c)
{
    if (c->memos && (c->nmemos + 1) * 4 <= c->capmemos * 3)
        return 0;
    int cap = c->memos ? 2 * c->capmemos : 64; /* a table has 64 << k entries */
    if (cap < 64 || cap > ST_VM_MEMOS)
        return -1;
    st_vm_memo *t = malloc(sizeof *t * (size_t)cap);
    if (!t)
        return -1;
    for (int i = 0; i < cap; i++)
        t[i].key.pc = -1;
    for (int i = 0; c->memos && i < c->capmemos; i++)
        if (c->memos[i].key.pc >= 0)
            *memo_slot(t, cap, &c->memos[i].key) = c->memos[i];
    free(c->memos);
    c->memos = t, c->capmemos = cap;
    return 0;
}

/* MEMO at pc `at` with its constants at a: push the value another rank computed with this key and jump past its
 * MEMO_END, or compute it and keep it there (memo_end). Only outside sub-communicators. */
static int memo_begin(vm *m, int32_t at, int32_t a, int32_t *pc, const st_vm_sink *sink)
{
    st_vm_cache *c = sink->cache;
    int32_t end = -1;
    st_vm_key k = {.pc = -1};
    if (a < 0 || !c || m->nsub > 0)
        return 0;
    if (key_of(m, at, a, ST_OP_MEMO_END, &end, &k))
        return -1;
    const st_vm_memo *e = c->memos ? memo_slot(c->memos, c->capmemos, &k) : NULL;
    if (e && e->key.pc >= 0) {
        *pc = end + 1;
        return push(m, e->value);
    }
    m->memo = k;
    return 0;
}

static int memo_end(vm *m, const st_vm_sink *sink)
{
    st_vm_cache *c = sink->cache;
    st_vm_key k = m->memo;
    m->memo.pc = -1;
    if (k.pc < 0 || !c || m->nsub > 0 || m->sp < 1 || memo_room(c))
        return 0;
    st_vm_memo *e = memo_slot(c->memos, c->capmemos, &k);
    if (e->key.pc < 0) {
        *e = (st_vm_memo){k, m->stack[m->sp - 1]};
        c->nmemos++;
    }
    return 0;
}

/* SUB_PHASE: run algorithm a on the members (or sit it out), in a context of its own. */
static int sub_enter(vm *m, int32_t a, int32_t *pc, const st_vm_sink *sink)
{
    sub *s = &m->pend;
    if (use_of(m, a, &a))
        return -1;
    if (s->members == NULL || s->algo != a)
        return fail(m, "corrupt step table: a phase on a sub-communicator without its members");
    if (s->me < 0) {
        sub_free(s);
        if (sink->within && (sink->within(sink->ctx, 1, NULL, 0, m->line, m->err) ||
                             sink->within(sink->ctx, 0, NULL, 0, m->line, m->err)))
            return -1;
        return 0;
    }
    if (m->nsub == ST_VM_MAX_SUBS)
        return fail(m, "phases on sub-communicators nested deeper than %d", ST_VM_MAX_SUBS);
    if (m->layout >= 0 && layout_table(m, sink)) /* the caller's table, while its context is current */
        return -1;
    if (m->depth >= ST_MAX_CALL_DEPTH)
        return fail(m, "recursion deeper than %d calls", ST_MAX_CALL_DEPTH);
    sub *t = &m->subs[m->nsub++];
    *t = *s;
    memset(s, 0, sizeof *s);
    t->p = m->p, t->r = m->r, t->croot = m->root, t->nunits = m->nunits, t->nscratch = m->nscratch;
    t->topo = m->topo, t->layout = m->layout, t->ltab = m->ltab, t->ltab_fn = m->ltab_fn;
    t->ltab_shared = m->ltab_shared;
    m->p = t->nmembers, m->r = t->me, m->root = t->root, m->nunits = 0, m->nscratch = 0, m->topo = NULL;
    m->ltab = NULL, m->ltab_fn = -1, m->ltab_shared = 0;
    if (sink->within) {
        int32_t *top = malloc(sizeof(int32_t) * (size_t)t->nmembers);
        if (!top)
            return fail(m, "out of memory");
        for (int i = 0; i < t->nmembers; i++) {
            int64_t x = t->members[i];
            for (int k = m->nsub - 2; k >= 0; k--)
                x = m->subs[k].members[x];
            top[i] = (int32_t)x;
        }
        int rc = sink->within(sink->ctx, 1, top, t->nmembers, m->line, m->err);
        free(top);
        if (rc)
            return -1;
    }
    const st_algo *al = &m->cat->algos[a];
    if (enter(m, *pc, al->nslots, 0, 1) || body_begins(m, al, sink))
        return -1;
    m->calls[m->depth - 1].sub = 1;
    m->layout = -1; /* the caller's layout applies to the caller's units, after the map */
    *pc = al->entry;
    return 0;
}

/* The body of a phase on a sub-communicator returned: back to the caller's context. */
static int sub_leave(vm *m, const st_vm_sink *sink)
{
    sub *t = &m->subs[--m->nsub];
    if (!m->ltab_shared)
        free(m->ltab);
    m->p = t->p, m->r = t->r, m->root = t->croot, m->nunits = t->nunits, m->nscratch = t->nscratch;
    m->topo = t->topo, m->ltab = t->ltab, m->ltab_fn = t->ltab_fn, m->ltab_shared = t->ltab_shared;
    sub_free(t);
    if (sink->within && sink->within(sink->ctx, 0, NULL, 0, m->line, m->err))
        return -1;
    return 0;
}

static int declare_units(vm *m)
{
    int64_t u;
    if (pop(m, &u))
        return -1;
    if (u < 1 || u > ST_MAX_UNITS)
        return fail(m, "units = %lld is out of range 1..%d", (long long)u, ST_MAX_UNITS);
    if (m->nunits && m->nunits != u)
        return fail(m, "phase declares %lld units but the algorithm has %lld", (long long)u, (long long)m->nunits);
    m->nunits = u;
    return m->nsub > 0 && !m->subs[m->nsub - 1].mfirst ? sub_map(m) : 0;
}

/* The words of a query for messages: "group(7)" at level 0 as written without a level, "group(7, 1)" above. */
static const char *query_args(char *buf, size_t len, int64_t a, int64_t b, int nargs, int leveled, int64_t k)
{
    int o = nargs == 2 ? snprintf(buf, len, "%lld, %lld", (long long)a, (long long)b)
                       : snprintf(buf, len, "%lld", (long long)a);
    if (leveled)
        snprintf(buf + o, len - (size_t)o, ", %lld", (long long)k);
    return buf;
}

/* Topology queries at level k (0 for the plain forms); without a topology there is one level, whose one group
 * holds all ranks in rank order. Every argument is checked, so a query never reads outside the arrays. */
static int topo_query(vm *m, int op)
{
    int leveled = op >= ST_OP_GROUPS_AT && op != ST_OP_UNIFORM;
    int64_t x = 0, g = 0, k = 0;
    int nlevels = st_topo_nlevels(m->topo);
    char a[96];
    if (op == ST_OP_LEVELS)
        return push(m, nlevels);
    if (leveled) {
        if (pop(m, &k))
            return -1;
        if (k < 0 || k >= nlevels)
            return fail(m, "level %lld does not exist (%d level%s: 0..%d)", (long long)k, nlevels,
                        nlevels == 1 ? "" : "s", nlevels - 1);
    }
    st_topo_level t = st_topo_level_of(m->topo, (int)k);
    switch (op) {
    case ST_OP_GROUPS:
    case ST_OP_GROUPS_AT: return push(m, t.ngroups);
    case ST_OP_UNIFORM:
    case ST_OP_UNIFORM_AT:
        for (int i = 1; t.first && i < t.ngroups; i++)
            if (t.first[i + 1] - t.first[i] != t.first[1] - t.first[0])
                return push(m, 0);
        return push(m, 1);
    case ST_OP_GROUP:
    case ST_OP_INDEX:
    case ST_OP_GROUP_AT:
    case ST_OP_INDEX_AT: {
        int is_group = op == ST_OP_GROUP || op == ST_OP_GROUP_AT;
        if (pop(m, &x))
            return -1;
        if (x < 0 || x >= m->p)
            return fail(m, "%s(%s): no such rank (p = %lld)", is_group ? "group" : "index",
                        query_args(a, sizeof a, x, 0, 1, leveled, k), (long long)m->p);
        if (!t.group_of)
            return push(m, is_group ? 0 : x);
        return push(m, is_group ? t.group_of[x] : t.index_of[x]);
    }
    case ST_OP_SIZE:
    case ST_OP_SIZE_AT:
        if (pop(m, &g))
            return -1;
        if (g < 0 || g >= t.ngroups)
            return fail(m, "size(%s): no such group (%d groups)", query_args(a, sizeof a, g, 0, 1, leveled, k),
                        t.ngroups);
        return push(m, t.first ? t.first[g + 1] - t.first[g] : m->p);
    default: { /* MEMBER, MEMBER_AT */
        if (pop(m, &x) || pop(m, &g))
            return -1;
        if (g < 0 || g >= t.ngroups)
            return fail(m, "member(%s): no such group (%d groups)", query_args(a, sizeof a, g, x, 2, leveled, k),
                        t.ngroups);
        int64_t size = t.first ? t.first[g + 1] - t.first[g] : m->p;
        if (x < 0 || x >= size)
            return fail(m, "member(%s): group %lld has %lld members", query_args(a, sizeof a, g, x, 2, leveled, k),
                        (long long)g, (long long)size);
        return push(m, t.members ? t.members[t.first[g] + x] : x);
    }
    }
}

static int set_layout(vm *m, int32_t f)
{
    if (f < -1 || f >= m->cat->nfuncs || (f >= 0 && m->cat->funcs[f].nparams != 1))
        return fail(m, "corrupt step table: layout function %d", f);
    m->layout = f;
    return 0;
}

/* ---- lanes of a split (the 2D algorithm's two concurrent parts) ------------------------------------------------ */

/* Fail when lo..hi shares a unit with an earlier lane of the split (each sorted and merged: a search each, with
 * hint[l] the place in lane l of the previous, smaller lo; a scan of every range made the 2D algorithm's p ranges
 * per lane cost p^2). */
static int lane_overlap(vm *m, int64_t lo, int64_t hi, int *hint)
{
    for (int l = 0; l + 1 < m->nlanestart; l++) {
        int n = m->lanestart[l + 1] - m->lanestart[l];
        if (n == 0)
            continue; /* an empty lane (a split ratio of 0 or 1): lanes may still be NULL */
        const int64_t (*r)[2] = (const int64_t (*)[2])m->lanes + m->lanestart[l];
        int j = range_seek(r, n, lo, &hint[l]);
        if (j < n && r[j][0] <= hi)
            return fail(m, "lanes of a split share unit %lld (lanes must own disjoint units)",
                        (long long)(lo > r[j][0] ? lo : r[j][0]));
    }
    return 0;
}

/* LANE a: 0 a split begins, 1 a lane begins (its units are the set built so far), 2 it ends, 3 the split ends. */
static int lane_op(vm *m, int a, const st_vm_sink *sink)
{
    int ok = a == 0 ? !m->in_split : a == 2 ? m->in_lane : (a == 1 || a == 3) && m->in_split && !m->in_lane;
    if (!ok)
        return fail(m, "corrupt step table: LANE %d out of place", a);
    if (a == 0 && (m->nsub > 0 || m->layout >= 0))
        return fail(m, "a split inside a phase on a sub-communicator or after a `layout` (lanes check units "
                    "of the whole vector, unrenumbered)");
    if (a == 0)
        m->nlanes = m->lane0 = m->nlanestart = 0;
    if (a == 1) {
        if (m->nunits <= 0)
            return fail(m, "lane before `units` was declared");
        int n;
        int64_t (*r)[2] = set_ranges(m, &n);
        if (!r)
            return -1;
        m->lane0 = m->nlanes;
        int rc = grow_buf(m, (void **)&m->lanestart, &m->caplanestart, m->nlanestart + 1, sizeof *m->lanestart);
        int *hint = rc ? NULL : calloc((size_t)m->nlanestart + 1, sizeof *hint);
        if (!rc && !hint)
            rc = fail(m, "out of memory");
        if (!rc)
            m->lanestart[m->nlanestart++] = m->lane0;
        for (int i = 0; i < n && !rc; i++) {
            int64_t lo = r[i][0], hi = r[i][1];
            if (lo < 0 || hi >= m->nunits + m->nscratch)
                rc = fail(m, "lane unit %lld is outside 0..%lld", (long long)(lo < 0 ? lo : hi),
                          (long long)(m->nunits + m->nscratch - 1));
            rc = rc ? rc : lane_overlap(m, lo, hi, hint);
            if (!rc)
                rc = grow_buf(m, (void **)&m->lanes, &m->caplanes, m->nlanes + 1, sizeof *m->lanes);
            if (!rc)
                m->lanes[m->nlanes][0] = lo, m->lanes[m->nlanes++][1] = hi;
        }
        free(hint);
        free(r);
        if (rc)
            return -1;
    }
    m->in_split = a < 3;
    m->in_lane = a == 1;
    return sink->lane ? sink->lane(sink->ctx, a, m->line, m->err) : 0;
}

/* Execute one instruction at *pc (already advanced past it). Returns 0 to go on, 1 at the end of the program,
 * 2 when a frame returned, -1 on error. */
static int exec(vm *m, const st_insn *in, int32_t *pc, const st_vm_sink *sink)
{
    const st_catalogue *c = m->cat;
    int64_t v;
    switch (in->op) {
    case ST_OP_HALT: return 1;
    case ST_OP_PUSH: return push(m, in->a);
    case ST_OP_CONST:
        if (in->a < 0 || in->a >= c->nconsts)
            return fail(m, "corrupt step table: constant %d", in->a);
        return push(m, c->consts[in->a]);
    case ST_OP_LOAD:
    case ST_OP_STORE:
    case ST_OP_LOADA: {
        int32_t base = in->op == ST_OP_LOADA ? m->afp : m->fp;
        int32_t n = in->op == ST_OP_LOADA ? m->afp_nslots : m->nslots;
        if (in->a < 0 || in->a >= n)
            return fail(m, "corrupt step table: slot %d", in->a);
        if (in->op == ST_OP_STORE)
            return pop(m, &m->slots[base + in->a]);
        return push(m, m->slots[base + in->a]);
    }
    case ST_OP_P: return push(m, m->p);
    case ST_OP_ROOT: return push(m, m->root);
    case ST_OP_GROUPS: case ST_OP_GROUP: case ST_OP_INDEX: case ST_OP_SIZE: case ST_OP_MEMBER:
    case ST_OP_LEVELS: case ST_OP_GROUPS_AT: case ST_OP_GROUP_AT: case ST_OP_INDEX_AT: case ST_OP_SIZE_AT:
    case ST_OP_MEMBER_AT: case ST_OP_UNIFORM: case ST_OP_UNIFORM_AT:
        return topo_query(m, in->op);
    case ST_OP_REQUIRE:
        if (pop(m, &v))
            return -1;
        if (v)
            return 0;
        fail(m, "the algorithm's `require` at line %d does not hold", m->line);
        m->err->refused = 1;
        return -1;
    case ST_OP_LAYOUT:
        if (m->in_split && m->nsub == 0)
            return fail(m, "`layout` inside a split (lanes check units of the whole vector, unrenumbered)");
        return set_layout(m, in->a);
    case ST_OP_R: return push(m, m->r);
    case ST_OP_U:
        if (m->nunits <= 0)
            return fail(m, "U used before `units` was declared");
        return push(m, m->nunits);
    case ST_OP_DUP:
        if (pop(m, &v) || push(m, v))
            return -1;
        return push(m, v);
    case ST_OP_POP: return pop(m, &v);
    case ST_OP_NEG: case ST_OP_BNOT: case ST_OP_NOT:
    case ST_OP_FLOOR_LOG2: case ST_OP_CEIL_LOG2: case ST_OP_POW2:
        return unary(m, in->op);
    case ST_OP_JMP:
    case ST_OP_JZ:
        if (in->a < 0 || in->a >= c->ncode)
            return fail(m, "corrupt step table: jump to %d", in->a);
        if (in->op == ST_OP_JZ) {
            if (pop(m, &v))
                return -1;
            if (v != 0)
                return 0;
        }
        *pc = in->a;
        return 0;
    case ST_OP_CALL: {
        if (in->a < 0 || in->a >= c->nfuncs)
            return fail(m, "corrupt step table: function %d", in->a);
        const st_func *f = &c->funcs[in->a];
        if (tail_call(m, *pc) ? frame_at(m, m->fp, f->nslots, f->nparams) : enter(m, *pc, f->nslots, f->nparams, 0))
            return -1;
        *pc = f->entry;
        return 0;
    }
    case ST_OP_PHASE: {
        int32_t ai;
        if (use_of(m, in->a, &ai))
            return -1;
        const st_algo *a = &c->algos[ai];
        if (enter(m, *pc, a->nslots, 0, 1) || body_begins(m, a, sink))
            return -1;
        *pc = a->entry;
        return 0;
    }
    case ST_OP_RET: /* 2: a frame ended; run() decides whether that ends the run */
        if (m->depth == 0)
            return 1;
        if (in->a) {
            if (pop(m, &v))
                return -1;
            *pc = leave(m);
            return push(m, v) ? -1 : 2;
        }
        if (m->calls[m->depth - 1].sub) {
            *pc = leave(m);
            return sub_leave(m, sink) ? -1 : 2;
        }
        *pc = leave(m);
        return 2;
    case ST_OP_SUB_MEMBERS: return sub_members(m, in->a);
    case ST_OP_SUB_NBLOCKS:
        if (!m->pend.members)
            return fail(m, "corrupt step table: SUB_NBLOCKS without members");
        return push(m, st_coll_nblocks(m->pend.coll, m->pend.nmembers));
    case ST_OP_SUB_UNITS:
        if (!m->pend.members)
            return fail(m, "corrupt step table: SUB_UNITS without members");
        return sub_units(m);
    case ST_OP_SUB_PHASE: return sub_keep(m, sink) ? -1 : sub_enter(m, in->a, pc, sink);
    case ST_OP_SUB_PIECES: return sub_pieces(m, (int32_t)(in - m->cat->code), in->a, pc, sink);
    case ST_OP_MEMO: return memo_begin(m, (int32_t)(in - m->cat->code), in->a, pc, sink);
    case ST_OP_MEMO_END: return memo_end(m, sink);
    case ST_OP_LANE: return lane_op(m, in->a, sink);
    case ST_OP_SPLIT_RATIO:
        if (pop(m, &v))
            return -1;
        if (v < 0 || v > (1LL << 40))
            return fail(m, "split_ratio(%lld): argument out of range 0..2^40", (long long)v);
        return push(m, v * m->split_ppm / 1000000);
    case ST_OP_UNITS: return declare_units(m);
    case ST_OP_STEP:
        if (m->nunits <= 0)
            return fail(m, "step before `units` was declared");
        return sink->step(sink->ctx, m->line, m->err);
    case ST_OP_SET_ADD:
        if (pop(m, &v))
            return -1;
        return set_add(m, v, v);
    case ST_OP_SET_RANGE: {
        int64_t lo, hi;
        if (pop(m, &hi) || pop(m, &lo))
            return -1;
        return set_add(m, lo, hi);
    }
    case ST_OP_SET_STRIDE: return set_stride(m, in->a);
    case ST_OP_SET_ALL:
        if (m->nunits <= 0)
            return fail(m, "`all` used before `units` was declared");
        return set_add(m, 0, m->nunits - 1);
    case ST_OP_SET_AT:
        m->at = m->nset;
        return 0;
    case ST_OP_SCRATCH:
        if (pop(m, &v))
            return -1;
        if (v < 0 || v > ST_MAX_UNITS)
            return fail(m, "scratch = %lld is out of range 0..%d", (long long)v, ST_MAX_UNITS);
        if (v > 0 && m->nsub > 0)
            return fail(m, "%s declares scratch units, which a phase on a sub-communicator cannot map to its "
                        "caller's units", m->cat->algos[m->subs[m->nsub - 1].algo].name);
        if (v > m->nscratch)
            m->nscratch = v;
        return 0;
    case ST_OP_SEND: return emit_send(m, sink, in->a);
    case ST_OP_FROM: return from_op(m, in->a, sink);
    case ST_OP_DST: return dst_op(m, in->a, pc, sink);
    default:
        if (in->op >= ST_OP_ADD && in->op <= ST_OP_LCM)
            return binary(m, in->op);
        return fail(m, "corrupt step table: opcode %d", in->op);
    }
}

/* Run from pc until a frame return brings the call depth down to stop_depth. Returns 0, or -1 on error. */
static int run(vm *m, int32_t pc, int stop_depth, const st_vm_sink *sink)
{
    const st_catalogue *cat = m->cat;
    for (;;) {
        if (--m->fuel <= 0)
            return out_of_fuel(m);
        if (pc < 0 || pc >= cat->ncode)
            return fail(m, "corrupt step table: pc %d", pc);
        const st_insn *in = &cat->code[pc++];
        m->line = in->line;
        m->col = in->col;
        int s = exec(m, in, &pc, sink);
        if (s < 0)
            return -1;
        if (s == 1 || (s == 2 && m->depth <= stop_depth))
            return 0;
    }
}

/* A machine for rank r of the instantiation, with no frame yet; NULL (and the message in err) out of memory. */
static vm *vm_new(const st_catalogue *cat, const st_inst *inst, int r, int line, st_err *err)
{
    vm *m = calloc(1, sizeof *m);
    err->refused = 0;
    if (!m || !(m->slots = malloc(sizeof(int64_t) * ST_VM_SLOTS))) {
        free(m);
        snprintf(err->msg, sizeof err->msg, "out of memory");
        err->line = 0;
        return NULL;
    }
    *m = (vm){.cat = cat, .topo = inst->topo, .use = inst->use, .p = inst->p, .r = r, .root = inst->root, .fuel = ST_VM_FUEL, .fuel_budget = ST_VM_FUEL,
              .slots = m->slots, .err = err, .line = line, .layout = -1, .ltab_fn = -1, .at = -1, .fill.pc = -1, .memo.pc = -1,
              .split_ppm = inst->split_set ? inst->split_ppm : ST_SPLIT_DEFAULT_PPM};
    return m;
}

static void vm_free(vm *m)
{
    if (!m)
        return;
    free(m->slots);
    free(m->lo);
    free(m->hi);
    free(m->lanes);
    free(m->lanestart);
    if (!m->ltab_shared)
        free(m->ltab);
    for (int k = 0; k < m->nsub; k++) {
        if (!m->subs[k].ltab_shared)
            free(m->subs[k].ltab);
        sub_free(&m->subs[k]);
    }
    sub_free(&m->pend);
    free(m);
}

int st_vm_run(const st_catalogue *cat, const st_algo *algo, const st_inst *inst, int r, const st_vm_sink *sink,
              int64_t *nunits, int64_t *nscratch, st_err *err)
{
    vm *m = vm_new(cat, inst, r, algo->line, err);
    int rc = -1;
    if (!m)
        return -1;
    if (enter(m, -1, algo->nslots, 0, 1) || body_begins(m, algo, sink) || run(m, algo->entry, 0, sink))
        goto out;
    if (m->in_split) {
        fail(m, "corrupt step table: a split that does not end");
        goto out;
    }
    *nunits = m->nunits;
    *nscratch = m->nscratch;
    rc = 0;
out:
    if (sink->cache)
        sink->cache->insns += ST_VM_FUEL - m->fuel;
    vm_free(m);
    return rc;
}

int st_vm_eval(const st_catalogue *cat, int32_t f, const st_inst *inst, int64_t x, int64_t *out, st_err *err)
{
    static const st_vm_sink none = {0}; /* a function is an expression: it neither steps nor sends */
    if (f < 0 || f >= cat->nfuncs || cat->funcs[f].nparams != 1) {
        snprintf(err->msg, sizeof err->msg, "function %d is not a function of one parameter", (int)f);
        err->line = 0;
        return -1;
    }
    vm *m = vm_new(cat, inst, 0, 0, err);
    int rc = m ? eval_fn(m, f, x, out, &none) : -1;
    vm_free(m);
    return rc;
}
