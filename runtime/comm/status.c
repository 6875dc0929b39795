/* status.c - names of status codes, data types, reduction ops and collectives.
 *
 * Every name comes from one list (STITCH_STATUS_LIST in stitch.h, the tables below), so the text printed for a
 * value cannot drift from the value. Look-ups by name are case-insensitive because names arrive from users
 * (environment variables, command lines); the canonical spelling is the lower-case one returned here.
 */
#include <stdint.h>
#include <strings.h>

#include "stitch.h"

const char *stitch_strerror(stitch_status_t status)
{
    switch (status) {
#define ST_STATUS_CASE(name, value, text) case STITCH_##name: return "STITCH_" #name ": " text;
        STITCH_STATUS_LIST(ST_STATUS_CASE)
#undef ST_STATUS_CASE
    }
    return "unknown stitch status";
}

/* Indexed by stitch_dtype_t; the order is the enum's. */
static const struct { const char *name; size_t size; } st_dtypes[STITCH_DTYPE_COUNT] = {
    [STITCH_INT8] = {"int8", 1},   [STITCH_UINT8] = {"uint8", 1}, [STITCH_INT16] = {"int16", 2},
    [STITCH_INT32] = {"int32", 4}, [STITCH_INT64] = {"int64", 8}, [STITCH_FP16] = {"fp16", 2},
    [STITCH_BF16] = {"bf16", 2},   [STITCH_FP32] = {"fp32", 4},   [STITCH_FP64] = {"fp64", 8},
};
static const char *const st_ops[STITCH_OP_COUNT] = {"sum", "prod", "max", "min"};
static const char *const st_colls[STITCH_COLL_COUNT] = {"all_reduce", "reduce_scatter", "all_gather", "broadcast",
                                                         "reduce", "scatter", "gather", "all_to_all",
                                                         "all_to_all_v"};

const char *stitch_dtype_name(stitch_dtype_t dtype)
{
    return (unsigned)dtype < STITCH_DTYPE_COUNT ? st_dtypes[dtype].name : NULL;
}

size_t stitch_dtype_size(stitch_dtype_t dtype)
{
    return (unsigned)dtype < STITCH_DTYPE_COUNT ? st_dtypes[dtype].size : 0;
}

const char *stitch_op_name(stitch_op_t op)
{
    return (unsigned)op < STITCH_OP_COUNT ? st_ops[op] : NULL;
}

const char *stitch_coll_name(stitch_coll_t coll)
{
    return (unsigned)coll < STITCH_COLL_COUNT ? st_colls[coll] : NULL;
}

int stitch_dtype_from_name(const char *name)
{
    for (int i = 0; name && i < STITCH_DTYPE_COUNT; i++)
        if (strcasecmp(name, st_dtypes[i].name) == 0)
            return i;
    return -1;
}

static int st_find_name(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (strcasecmp(name, names[i]) == 0)
            return i;
    return -1;
}

int stitch_op_from_name(const char *name)
{
    return st_find_name(st_ops, STITCH_OP_COUNT, name);
}

int stitch_coll_from_name(const char *name)
{
    return st_find_name(st_colls, STITCH_COLL_COUNT, name);
}
