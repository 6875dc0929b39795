/* st_steptab.c - names of the collectives, the catalogue hash and what an algorithm's code says about its plans,
 * shared by the compiler and the runtime. */
#include <string.h>
#include <strings.h>

#include "st_inst.h"
#include "st_steptab.h"

static const char *const coll_names[] = {
#define ST_COLL_NAME(id, name) name,
    ST_COLLECTIVES(ST_COLL_NAME)
#undef ST_COLL_NAME
};

const char *st_coll_name(int coll)
{
    if (coll < 0 || coll >= ST_COLL_COUNT)
        return "?";
    return coll_names[coll];
}

int st_coll_from_name(const char *name)
{
    for (int i = 0; i < ST_COLL_COUNT; i++)
        if (strcasecmp(name, coll_names[i]) == 0)
            return i;
    return -1;
}

int st_coll_rooted(int coll)
{
    return coll == ST_COLL_BROADCAST || coll == ST_COLL_REDUCE || coll == ST_COLL_SCATTER || coll == ST_COLL_GATHER;
}

const char *st_coll_list(void)
{
#define ST_COLL_STR(id, name) ", " name
    return &ST_COLLECTIVES(ST_COLL_STR)[2];
#undef ST_COLL_STR
}

/* ---- the catalogue hash (st_steptab.h) ---------------------------------------------------------------------- */

#define ST_FNV_PRIME 0x100000001b3ULL

static uint64_t st_fnv_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * ST_FNV_PRIME;
    return h;
}

/* Little-endian whatever the host, so every host computes the same hash. */
uint64_t st_hash_int(uint64_t h, int64_t v)
{
    unsigned char b[8];
    for (int i = 0; i < 8; i++)
        b[i] = (unsigned char)((uint64_t)v >> (8 * i));
    return st_fnv_bytes(h, b, sizeof b);
}

/* A string with its terminator, so "ab"+"c" and "a"+"bc" differ; NULL as a lone 0xff. */
static uint64_t st_fnv_str(uint64_t h, const char *s)
{
    return s ? st_fnv_bytes(h, s, strlen(s) + 1) : st_fnv_bytes(h, "\xff", 1);
}

uint64_t st_catalogue_hash(const st_catalogue *cat)
{
    uint64_t h = st_hash_int(ST_HASH_INIT, cat->version);
    h = st_hash_int(h, cat->ncode);
    for (int32_t i = 0; i < cat->ncode; i++)
        h = st_hash_int(st_hash_int(h, cat->code[i].op), cat->code[i].a);
    h = st_hash_int(h, cat->nconsts);
    for (int32_t i = 0; i < cat->nconsts; i++)
        h = st_hash_int(h, cat->consts[i]);
    h = st_hash_int(h, cat->nfuncs);
    for (int32_t i = 0; i < cat->nfuncs; i++) {
        const st_func *f = &cat->funcs[i];
        h = st_fnv_str(h, f->name);
        h = st_hash_int(st_hash_int(st_hash_int(st_hash_int(h, f->entry), f->nparams), f->nslots), f->flags);
    }
    h = st_hash_int(h, cat->nalgos);
    for (int32_t i = 0; i < cat->nalgos; i++) {
        const st_algo *a = &cat->algos[i];
        h = st_fnv_str(h, a->name);
        h = st_hash_int(st_hash_int(st_hash_int(st_hash_int(h, a->coll), a->entry), a->nslots), a->flags);
    }
    return h;
}

/* The static view of st_sched_build_rank's fast path: walk the body and, through PHASE, the bodies it runs. */
static const char *own_plan_why(const st_catalogue *cat, int ai, int depth)
{
    const st_algo *a = &cat->algos[ai];
    if ((a->flags & (ST_ALGO_SENDS | ST_ALGO_FROM)) == ST_ALGO_SENDS)
        return "it sends without `from`";
    if (depth > cat->nalgos)
        return NULL; /* a guard only: sema rules out phase cycles */
    for (int pc = a->entry; pc >= 0 && pc < cat->ncode; pc++) {
        const st_insn *in = &cat->code[pc];
        if (in->op == ST_OP_RET && in->a == 0)
            break;
        if (in->op == ST_OP_SUB_PHASE)
            return "a phase on a sub-communicator (its steps are placed by every rank's)";
        if (in->op == ST_OP_LANE)
            return "a split (its steps are placed by every rank's)";
        if (in->op == ST_OP_PHASE && in->a >= 0 && in->a < cat->nalgos) {
            const char *why = own_plan_why(cat, in->a, depth + 1);
            if (why)
                return why;
        }
    }
    return NULL;
}

const char *st_algo_own_plan(const st_catalogue *cat, int ai)
{
    if (ai < 0 || ai >= cat->nalgos)
        return "no such algorithm";
    return own_plan_why(cat, ai, 0);
}

int st_coll_nblocks(int coll, int p)
{
    switch (coll) {
    case ST_COLL_ALL_REDUCE:
    case ST_COLL_BROADCAST:
    case ST_COLL_REDUCE: return 1;
    case ST_COLL_ALL_TO_ALL:
    case ST_COLL_ALL_TO_ALL_V: return p * p;
    default: return p;
    }
}
