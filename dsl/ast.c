/* ast.c - the arena behind every syntax tree, and the st_file that owns it.
 *
 * A bump allocator over a chain of zeroed chunks: the parser allocates thousands of small nodes and frees them all
 * at once, including after an abandoned parse, so no grammar rule needs a destructor. A request larger than a
 * chunk gets a chunk of its own.
 */
#include <stdlib.h>
#include <string.h>

#include "ast.h"

#define ST_CHUNK (64 * 1024)

typedef struct st_chunk {
    struct st_chunk *next;
    size_t used, cap;
    max_align_t data[]; /* cap bytes */
} st_chunk;

struct st_arena {
    st_chunk *head;
};

st_arena *st_arena_new(void)
{
    return calloc(1, sizeof(st_arena));
}

static st_chunk *chunk_new(size_t cap)
{
    st_chunk *c = calloc(1, sizeof *c + cap);
    if (c)
        c->cap = cap;
    return c;
}

void *st_arena_alloc(st_arena *a, size_t size)
{
    const size_t align = sizeof(max_align_t);
    size = (size + align - 1) / align * align;
    if (!a || size == 0 || size > SIZE_MAX / 2)
        return NULL;
    st_chunk *c = a->head;
    if (!c || c->cap - c->used < size) {
        st_chunk *n = chunk_new(size > ST_CHUNK ? size : ST_CHUNK);
        if (!n)
            return NULL;
        if (c && size > ST_CHUNK) { /* keep filling the current chunk: slot the big one behind it */
            n->next = c->next;
            c->next = n;
            n->used = size;
            return n->data;
        }
        n->next = c;
        a->head = c = n;
    }
    void *p = (char *)c->data + c->used;
    c->used += size;
    return p;
}

void st_arena_free(st_arena *a)
{
    if (!a)
        return;
    for (st_chunk *c = a->head, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    free(a);
}

void st_file_free(st_file *f)
{
    if (!f)
        return;
    st_arena_free(f->arena);
    free(f->src);
    free(f->path);
    free(f);
}

int st_str_eq(st_str s, const char *c)
{
    size_t n = strlen(c);
    return s.len >= 0 && (size_t)s.len == n && (n == 0 || memcmp(s.s, c, n) == 0);
}
