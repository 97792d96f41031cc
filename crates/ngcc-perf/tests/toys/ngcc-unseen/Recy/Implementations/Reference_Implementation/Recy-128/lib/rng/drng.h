/*
 * ICCS DRNG (ngcc-perf, written from the ICCS API description): NIST SP 800-90A
 * Hash_DRBG with SM3, seedlen 440 bits, no reseed, no personalization.
 */
#ifndef NGCC_ICCS_DRNG_H
#define NGCC_ICCS_DRNG_H

#ifdef __cplusplus
extern "C" {
#endif

#define SEEDLEN 55

typedef struct {
    unsigned char V[SEEDLEN];
    unsigned char C[SEEDLEN];
    unsigned char reseed_counter[SEEDLEN];
} DRNG_ctx;

/* Must be called before the first get_random_number. Any seed length, including 0. */
int init_random_number(DRNG_ctx *drng, const unsigned char *seed,
                       unsigned long long seed_len_bytes);

/* One Generate: writes ceil(random_number_len_bits / 8) bytes, unused low bits zero.
 * The state moves on with every call, even for 0 bits. */
int get_random_number(DRNG_ctx *drng, unsigned char *random_number,
                      unsigned long long random_number_len_bits);

#ifdef __cplusplus
}
#endif

#endif
