/* Shared helpers of the gclock C microbenchmarks (bench/c). The programs
 * time themselves with clock_gettime(CLOCK_MONOTONIC) called directly, so
 * the figures do not depend on which timer GCLOCK_TIMER makes the library
 * use, and print one "key value" line per figure for the Go harness. */
#ifndef GCK_BENCH_COMMON_H
#define GCK_BENCH_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <time.h>

static inline int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int bench_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int bench_cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* bench_median_i64 sorts v in place and returns its median. */
static inline double bench_median_i64(int64_t *v, size_t n)
{
    qsort(v, n, sizeof v[0], bench_cmp_i64);
    if (n % 2)
        return (double)v[n / 2];
    return 0.5 * ((double)v[n / 2 - 1] + (double)v[n / 2]);
}

/* bench_median_dbl sorts v in place and returns its median. */
static inline double bench_median_dbl(double *v, size_t n)
{
    qsort(v, n, sizeof v[0], bench_cmp_dbl);
    if (n % 2)
        return v[n / 2];
    return 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* bench_arg_long returns argv[i] as a positive long, or def. */
static inline long bench_arg_long(int argc, char **argv, int i, long def)
{
    if (argc > i) {
        long v = strtol(argv[i], NULL, 10);
        if (v > 0)
            return v;
    }
    return def;
}

#endif
