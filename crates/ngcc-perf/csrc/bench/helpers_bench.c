/* ngcc-perf `iccs bench`: cost of one build of the ICCS helpers (auxfunc.c, drng.c), so the
 * embedded files and the official ones can be timed the same way. Compiled twice, against
 * each set of helpers; prints one line per case:
 *   <case> <input bytes> <output bits> <median ns per call> <checksum of the first output>
 * Arguments: [batch milliseconds (20)] [batches (7)]. */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "auxfunc.h"
#include "drng.h"

typedef int (*case_fn)(const unsigned char *in, unsigned long long in_bytes, unsigned char *out,
                       unsigned long long out_bits);

static DRNG_ctx bench_drng;

static int f_sm3(const unsigned char *in, unsigned long long n, unsigned char *out, unsigned long long bits)
{
    (void)bits;
    return sm3hash(256, in, 8 * n, out);
}

static int f_ph512(const unsigned char *in, unsigned long long n, unsigned char *out, unsigned long long bits)
{
    (void)bits;
    return pseudohash(512, in, 8 * n, out);
}

static int f_ph1024(const unsigned char *in, unsigned long long n, unsigned char *out, unsigned long long bits)
{
    (void)bits;
    return pseudohash(1024, in, 8 * n, out);
}

static int f_xof(const unsigned char *in, unsigned long long n, unsigned char *out, unsigned long long bits)
{
    return pseudoXOF(bits, in, 8 * n, out);
}

static int f_drng(const unsigned char *in, unsigned long long n, unsigned char *out, unsigned long long bits)
{
    (void)in;
    (void)n;
    return get_random_number(&bench_drng, out, bits);
}

struct bench_case {
    const char *name;
    case_fn f;
    unsigned long long in_bytes;
    unsigned long long out_bits;
};

static const struct bench_case CASES[] = {
    {"sm3hash", f_sm3, 32, 256},
    {"sm3hash", f_sm3, 1024, 256},
    {"sm3hash", f_sm3, 65536, 256},
    {"pseudohash-512", f_ph512, 32, 512},
    {"pseudohash-512", f_ph512, 1024, 512},
    {"pseudohash-512", f_ph512, 65536, 512},
    {"pseudohash-1024", f_ph1024, 32, 1024},
    {"pseudohash-1024", f_ph1024, 65536, 1024},
    {"pseudoXOF", f_xof, 32, 256},
    {"pseudoXOF", f_xof, 32, 8192},
    {"pseudoXOF", f_xof, 1024, 8192},
    {"pseudoXOF", f_xof, 65536, 4096},
    {"get_random_number", f_drng, 0, 256},
    {"get_random_number", f_drng, 0, 8192},
    {"get_random_number", f_drng, 0, 65536},
};

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e9 + (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* FNV-1a over the output: equal checksums mean the two builds computed the same bytes. */
static unsigned long long checksum(const unsigned char *p, size_t n)
{
    unsigned long long h = 1469598103934665603ULL;
    size_t i;
    for (i = 0; i < n; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

static void reseed(void)
{
    unsigned char seed[64];
    size_t i;
    for (i = 0; i < sizeof seed; i++) {
        seed[i] = (unsigned char)(i * 7 + 1);
    }
    init_random_number(&bench_drng, seed, sizeof seed);
}

int main(int argc, char **argv)
{
    double batch_ns = (argc > 1 ? atof(argv[1]) : 20.0) * 1e6;
    int batches = argc > 2 ? atoi(argv[2]) : 7;
    size_t k;
    unsigned char *in = malloc(65536);
    unsigned char *out = malloc(65536 / 8 + 64);
    if (!in || !out || batches < 1 || batches > 99) {
        return 2;
    }
    for (k = 0; k < 65536; k++) {
        in[k] = (unsigned char)(k * 131 + 7);
    }
    for (k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
        const struct bench_case *c = &CASES[k];
        size_t out_bytes = (size_t)((c->out_bits + 7) / 8);
        unsigned long long iters = 1, sum;
        double t, times[99];
        int b;
        reseed();
        memset(out, 0, out_bytes);
        if (c->f(in, c->in_bytes, out, c->out_bits) != 0) {
            printf("%s %llu %llu failed 0\n", c->name, c->in_bytes, c->out_bits);
            continue;
        }
        sum = checksum(out, out_bytes);
        /* Iterations per batch: double until a batch takes an eighth of the target. */
        for (;;) {
            unsigned long long i;
            t = now_ns();
            for (i = 0; i < iters; i++) {
                c->f(in, c->in_bytes, out, c->out_bits);
            }
            t = now_ns() - t;
            if (t >= batch_ns / 8 || iters >= (1ULL << 30)) {
                break;
            }
            iters *= 2;
        }
        iters = (unsigned long long)((double)iters * batch_ns / (t > 1 ? t : 1)) + 1;
        for (b = 0; b < batches; b++) {
            unsigned long long i;
            t = now_ns();
            for (i = 0; i < iters; i++) {
                c->f(in, c->in_bytes, out, c->out_bits);
            }
            times[b] = (now_ns() - t) / (double)iters;
        }
        qsort(times, (size_t)batches, sizeof times[0], cmp_double);
        printf("%s %llu %llu %.1f %016llx\n", c->name, c->in_bytes, c->out_bits, times[batches / 2], sum);
    }
    free(in);
    free(out);
    return 0;
}
