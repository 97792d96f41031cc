/*
 * The SM3 core (GB/T 32905) shared by the embedded ICCS helpers auxfunc.c and drng.c
 * (ngcc-perf). Not part of the ICCS API: ngcc-perf links iccs_sm3.c into a library whenever
 * it adds either helper, and the ngcc_iccs_sm3_ prefix is reserved for these functions.
 *
 * Messages are bit strings: bit i is bit (7 - i % 8) of byte i / 8, and bits past the
 * length in the last byte are ignored. Lengths are in bits.
 */
#ifndef NGCC_ICCS_SM3_H
#define NGCC_ICCS_SM3_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Internal to the library that links the helpers (never exported). */
#if defined(__GNUC__) && defined(__ELF__)
#define NGCC_ICCS_SM3_INTERNAL __attribute__((visibility("hidden")))
#else
#define NGCC_ICCS_SM3_INTERNAL
#endif

/* One copy for every caller: with -flto, GCC would otherwise inline update and final into,
 * or clone them for, each call site of auxfunc.c and drng.c (they cost little next to the
 * compression function). */
#if defined(__GNUC__) && !defined(__clang__)
#define NGCC_ICCS_SM3_SHARED __attribute__((noinline, noclone))
#elif defined(__GNUC__)
#define NGCC_ICCS_SM3_SHARED __attribute__((noinline))
#else
#define NGCC_ICCS_SM3_SHARED
#endif

typedef struct {
    uint32_t st[8];
    unsigned char buf[64]; /* bits at or after nbits are zero */
    unsigned nbits;        /* bits in buf, always < 512 */
    unsigned long long total;
} ngcc_iccs_sm3_ctx;

NGCC_ICCS_SM3_INTERNAL void ngcc_iccs_sm3_init(ngcc_iccs_sm3_ctx *c);

/* Appends the first `bits` bits of m (m may be NULL when bits is 0). */
NGCC_ICCS_SM3_INTERNAL NGCC_ICCS_SM3_SHARED
void ngcc_iccs_sm3_update(ngcc_iccs_sm3_ctx *c, const unsigned char *m, unsigned long long bits);

NGCC_ICCS_SM3_INTERNAL NGCC_ICCS_SM3_SHARED
void ngcc_iccs_sm3_final(ngcc_iccs_sm3_ctx *c, unsigned char out[32]);

/* Writes x big-endian into p[0..3]. */
NGCC_ICCS_SM3_INTERNAL void ngcc_iccs_sm3_store_be32(unsigned char *p, uint32_t x);

#ifdef __cplusplus
}
#endif

#endif
