/* st_size.h - byte sizes as people write them, one grammar for every reader (the runtime's variables, stitchc sim
 * -b, stitch-perf -b/-e): a decimal number, then an optional binary multiple K, M, G or T (either case, 2^10 ..
 * 2^40) with an optional "i" and an optional "B", or a bare "B": 1048576, 1M, 1m, 1MiB, 1MB and 1024K are all the
 * same size. A fraction is allowed before a multiple when the bytes come out whole (1.5K is 1536). */
#ifndef ST_SIZE_H
#define ST_SIZE_H

/* Parse all of `text`; 1 with the bytes in *out when it is a size of at most `max` bytes, else 0. */
int st_parse_size(const char *text, unsigned long long max, unsigned long long *out);

#endif
