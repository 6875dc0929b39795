/* opcodes.c - the step machine's opcodes by name (codegen.h's st_opcode_name), for the emitted tables' comments,
 * the native C's and disassembly: one table, which emit_c.c and emit_native.c both read. */
#include "codegen.h"

static const char *const opcode_names[ST_OP_COUNT] = {
    [ST_OP_HALT] = "HALT",           [ST_OP_PUSH] = "PUSH",
    [ST_OP_CONST] = "CONST",         [ST_OP_LOAD] = "LOAD",
    [ST_OP_STORE] = "STORE",         [ST_OP_LOADA] = "LOADA",
    [ST_OP_P] = "P",                 [ST_OP_R] = "R",
    [ST_OP_U] = "U",                 [ST_OP_ROOT] = "ROOT",
    [ST_OP_GROUPS] = "GROUPS",       [ST_OP_GROUP] = "GROUP",
    [ST_OP_INDEX] = "INDEX",         [ST_OP_SIZE] = "SIZE",
    [ST_OP_MEMBER] = "MEMBER",       [ST_OP_LAYOUT] = "LAYOUT",
    [ST_OP_LEVELS] = "LEVELS",       [ST_OP_GROUPS_AT] = "GROUPS_AT",
    [ST_OP_GROUP_AT] = "GROUP_AT",   [ST_OP_INDEX_AT] = "INDEX_AT",
    [ST_OP_SIZE_AT] = "SIZE_AT",     [ST_OP_MEMBER_AT] = "MEMBER_AT",
    [ST_OP_UNIFORM] = "UNIFORM",     [ST_OP_UNIFORM_AT] = "UNIFORM_AT",
    [ST_OP_REQUIRE] = "REQUIRE",
    [ST_OP_DUP] = "DUP",             [ST_OP_POP] = "POP",
    [ST_OP_ADD] = "ADD",             [ST_OP_SUB] = "SUB",
    [ST_OP_MUL] = "MUL",             [ST_OP_DIV] = "DIV",
    [ST_OP_MOD] = "MOD",             [ST_OP_SHL] = "SHL",
    [ST_OP_SHR] = "SHR",             [ST_OP_BAND] = "BAND",
    [ST_OP_BOR] = "BOR",             [ST_OP_BXOR] = "BXOR",
    [ST_OP_LT] = "LT",               [ST_OP_LE] = "LE",
    [ST_OP_GT] = "GT",               [ST_OP_GE] = "GE",
    [ST_OP_EQ] = "EQ",               [ST_OP_NE] = "NE",
    [ST_OP_MIN] = "MIN",             [ST_OP_MAX] = "MAX",
    [ST_OP_GCD] = "GCD",             [ST_OP_LCM] = "LCM",
    [ST_OP_NEG] = "NEG",             [ST_OP_BNOT] = "BNOT",
    [ST_OP_NOT] = "NOT",             [ST_OP_FLOOR_LOG2] = "FLOOR_LOG2",
    [ST_OP_CEIL_LOG2] = "CEIL_LOG2", [ST_OP_POW2] = "POW2",
    [ST_OP_JMP] = "JMP",             [ST_OP_JZ] = "JZ",
    [ST_OP_CALL] = "CALL",           [ST_OP_RET] = "RET",
    [ST_OP_UNITS] = "UNITS",         [ST_OP_STEP] = "STEP",
    [ST_OP_SET_ADD] = "SET_ADD",     [ST_OP_SET_RANGE] = "SET_RANGE",
    [ST_OP_SET_ALL] = "SET_ALL",     [ST_OP_SEND] = "SEND",
    [ST_OP_SCRATCH] = "SCRATCH",     [ST_OP_SET_AT] = "SET_AT",
    [ST_OP_PHASE] = "PHASE",
    [ST_OP_SUB_MEMBERS] = "SUB_MEMBERS", [ST_OP_SUB_NBLOCKS] = "SUB_NBLOCKS",
    [ST_OP_SUB_UNITS] = "SUB_UNITS",     [ST_OP_SUB_PHASE] = "SUB_PHASE",
    [ST_OP_SPLIT_RATIO] = "SPLIT_RATIO", [ST_OP_LANE] = "LANE",
    [ST_OP_FROM] = "FROM",               [ST_OP_DST] = "DST",
    [ST_OP_SET_STRIDE] = "SET_STRIDE",   [ST_OP_SUB_PIECES] = "SUB_PIECES",
    [ST_OP_MEMO] = "MEMO",               [ST_OP_MEMO_END] = "MEMO_END",
};

const char *st_opcode_name(int op)
{
    if (op < 0 || op >= ST_OP_COUNT || !opcode_names[op])
        return "?";
    return opcode_names[op];
}
