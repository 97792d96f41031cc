/*
 * ICCS DRNG (ngcc-perf, written from the ICCS API description; see drng.h): SM3 Hash_DRBG.
 * Big-endian integers, additions mod 2^440. Needs only the SM3 core in iccs_sm3.c, not
 * auxfunc.c (hash builds link it without auxfunc.c). No allocation, so the -2 path
 * (allocation failure) never occurs.
 */
#include <string.h>

#include "drng.h"
#include "iccs_sm3.h"

#define DRNG_SUCCESS 0
#define DRNG_MEMORY_ALLOCATION_FAILED (-2)

/* out = Hash_df(pre || in, 440): SM3(ct || BE32(440) || pre || in) for ct = 1, 2, cut to 55. */
static void hash_df(unsigned char out[SEEDLEN], const unsigned char *pre, unsigned prelen,
                    const unsigned char *in, unsigned long long inlen)
{
    unsigned char head[5] = { 0, 0x00, 0x00, 0x01, 0xB8 }, block[64];
    ngcc_iccs_sm3_ctx c;

    for (head[0] = 1; head[0] <= 2; head[0]++) {
        ngcc_iccs_sm3_init(&c);
        ngcc_iccs_sm3_update(&c, head, 8 * 5);
        ngcc_iccs_sm3_update(&c, pre, 8ULL * prelen);
        ngcc_iccs_sm3_update(&c, in, 8 * inlen);
        ngcc_iccs_sm3_final(&c, block + 32 * (head[0] - 1));
    }
    memcpy(out, block, SEEDLEN);
}

/* acc += x (x is n bytes, right-aligned), mod 2^440 */
static void add_be(unsigned char acc[SEEDLEN], const unsigned char *x, unsigned n)
{
    unsigned carry = 0, i;
    for (i = 1; i <= SEEDLEN; i++) {
        carry += acc[SEEDLEN - i];
        if (i <= n)
            carry += x[n - i];
        acc[SEEDLEN - i] = (unsigned char)carry;
        carry >>= 8;
    }
}

int init_random_number(DRNG_ctx *drng, const unsigned char *seed,
                       unsigned long long seed_len_bytes)
{
    static const unsigned char zero = 0;

    memset(drng, 0, sizeof *drng);
    hash_df(drng->V, NULL, 0, seed, seed_len_bytes);
    hash_df(drng->C, &zero, 1, drng->V, SEEDLEN); /* C = Hash_df(0x00 || V) */
    drng->reseed_counter[SEEDLEN - 1] = 1;
    return DRNG_SUCCESS;
}

int get_random_number(DRNG_ctx *drng, unsigned char *random_number,
                      unsigned long long random_number_len_bits)
{
    static const unsigned char one = 1, three = 3;
    unsigned long long left = (random_number_len_bits >> 3) + ((random_number_len_bits & 7) != 0);
    unsigned char data[SEEDLEN], w[32];
    ngcc_iccs_sm3_ctx c;

    /* w_i = SM3(V + i), output = leftmost bytes of w_0 || w_1 || ... */
    memcpy(data, drng->V, SEEDLEN);
    while (left) {
        unsigned take = left < 32 ? (unsigned)left : 32;
        ngcc_iccs_sm3_init(&c);
        ngcc_iccs_sm3_update(&c, data, 8 * SEEDLEN);
        ngcc_iccs_sm3_final(&c, w);
        memcpy(random_number, w, take);
        random_number += take;
        left -= take;
        add_be(data, &one, 1);
    }
    if (random_number_len_bits & 7)
        random_number[-1] &= (unsigned char)(0xFFu << (8 - (random_number_len_bits & 7)));

    /* V = V + SM3(0x03 || V) + C + reseed_counter; reseed_counter += 1 (always, even for 0 bits) */
    ngcc_iccs_sm3_init(&c);
    ngcc_iccs_sm3_update(&c, &three, 8);
    ngcc_iccs_sm3_update(&c, drng->V, 8 * SEEDLEN);
    ngcc_iccs_sm3_final(&c, w);
    add_be(drng->V, w, 32);
    add_be(drng->V, drng->C, SEEDLEN);
    add_be(drng->V, drng->reseed_counter, SEEDLEN);
    add_be(drng->reseed_counter, &one, 1);
    return DRNG_SUCCESS;
}
