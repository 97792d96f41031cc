/* Minimal timing loop for `ngcc-perf bench overhead`: links the same library the harness
 * times and runs KEM enc with the same RNG pattern and the same counter (TSC / CNTVCT).
 * Usage: overhead ITERS WARMUPS CPU  -> prints "<ns> <ticks>" */
#define _GNU_SOURCE
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef unsigned long long ull;
int ngcc_kem_keygen(unsigned char *pk, ull *pk_len, unsigned char *sk, ull *sk_len);
int ngcc_kem_enc(unsigned char *pk, ull pk_len, unsigned char *ss, ull *ss_len, unsigned char *ct, ull *ct_len);
void ngcc_set_randombytes(int (*fp)(uint8_t *, size_t));

static uint64_t counter_state;
/* The harness's "counter" RNG: byte i of the stream is i mod 256. */
static int counter_rng(uint8_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) {
        out[i] = (uint8_t)(counter_state++);
    }
    return 0;
}

static inline uint64_t ticks(void) {
#if defined(__x86_64__)
    uint32_t lo, hi;
    __asm__ volatile("lfence; rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
#elif defined(__aarch64__)
    uint64_t v;
    __asm__ volatile("isb; mrs %0, cntvct_el0" : "=r"(v));
    return v;
#else
    return 0;
#endif
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

int main(int argc, char **argv) {
    static unsigned char pk[1 << 20], sk[1 << 20], ct[1 << 20], ss[256];
    ull l1, l2, iters, warmups, i;
    uint64_t t0, t1, c0, c1;
    cpu_set_t set;
    if (argc != 4) {
        fprintf(stderr, "usage: overhead ITERS WARMUPS CPU\n");
        return 2;
    }
    iters = strtoull(argv[1], NULL, 10);
    warmups = strtoull(argv[2], NULL, 10);
    CPU_ZERO(&set);
    CPU_SET(atoi(argv[3]), &set);
    sched_setaffinity(0, sizeof set, &set);
    ngcc_set_randombytes(counter_rng);
    if (ngcc_kem_keygen(pk, &l1, sk, &l2) != 0) {
        return 3;
    }
    for (i = 0; i < warmups; i++) {
        ngcc_kem_enc(pk, l1, ss, &l2, ct, &l2);
    }
    c0 = ticks();
    t0 = now_ns();
    for (i = 0; i < iters; i++) {
        if (ngcc_kem_enc(pk, l1, ss, &l2, ct, &l2) != 0) {
            return 3;
        }
    }
    t1 = now_ns();
    c1 = ticks();
    printf("%llu %llu\n", (ull)(t1 - t0), (ull)(c1 - c0));
    return 0;
}
