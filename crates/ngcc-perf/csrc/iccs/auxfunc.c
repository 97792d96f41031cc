/*
 * ICCS auxiliary functions: sm3hash, pseudohash, pseudoXOF (ngcc-perf, written from the
 * ICCS API description; see auxfunc.h), on the SM3 core in iccs_sm3.c. No allocation:
 * every helper streams through a stack SM3 context, so the -2 (allocation) and -3 (HMAC)
 * paths never occur.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "auxfunc.h"
#include "iccs_sm3.h"

#define HASH_SUCCESS 0
#define XOF_SUCCESS 0
#define MEMORY_ALLOCATION_FAILED (-2)
#define HASH_FAILED (-3)
#define INVALID_DIGESTBITLEN (-4)

/* SM3 of up to three whole 32-byte pieces (c3 may be NULL). */
static void sm3_cat(unsigned char out[32], const unsigned char *a, const unsigned char *b,
                    const unsigned char *c3)
{
    ngcc_iccs_sm3_ctx c;
    ngcc_iccs_sm3_init(&c);
    ngcc_iccs_sm3_update(&c, a, 256);
    ngcc_iccs_sm3_update(&c, b, 256);
    if (c3)
        ngcc_iccs_sm3_update(&c, c3, 256);
    ngcc_iccs_sm3_final(&c, out);
}

/* ---- HMAC-SM3 with the fixed key SM3("3.14159265358979") || SM3("2.71828182845904") ---- */

static const unsigned char pseudo_key[64] = {
    0x53, 0x07, 0xF6, 0xD5, 0xEB, 0x6A, 0x3C, 0xED, 0x3D, 0x24, 0xC5, 0x3C, 0xC9, 0xC8, 0x2C, 0xCE,
    0x2F, 0x89, 0x36, 0x39, 0x70, 0x23, 0xF0, 0x69, 0x5C, 0x26, 0xC8, 0x0C, 0x1A, 0xB1, 0x82, 0xA7,
    0x1D, 0xB0, 0x2B, 0xA9, 0x2F, 0x54, 0x40, 0x18, 0x11, 0x5A, 0x96, 0xE7, 0x19, 0x66, 0x2C, 0xA3,
    0x2B, 0x7C, 0x7E, 0xFC, 0x0A, 0x6D, 0x24, 0x82, 0x15, 0x07, 0x66, 0xBA, 0x6F, 0x65, 0x5B, 0x8E
};

/* Starts SM3(K1 || ...) with K1 = KEY ^ 0x36, or SM3(K2 || ...) with pad 0x5C. */
static void hmac_start(ngcc_iccs_sm3_ctx *c, unsigned char pad)
{
    unsigned char k[64];
    int i;
    for (i = 0; i < 64; i++)
        k[i] = (unsigned char)(pseudo_key[i] ^ pad);
    ngcc_iccs_sm3_init(c);
    ngcc_iccs_sm3_update(c, k, 512);
}

static void hmac_final(ngcc_iccs_sm3_ctx *c, unsigned char out[32])
{
    unsigned char inner[32];
    ngcc_iccs_sm3_final(c, inner);
    hmac_start(c, 0x5C);
    ngcc_iccs_sm3_update(c, inner, 256);
    ngcc_iccs_sm3_final(c, out);
}

static void hmac32(unsigned char out[32], const unsigned char in[32])
{
    ngcc_iccs_sm3_ctx c;
    hmac_start(&c, 0x36);
    ngcc_iccs_sm3_update(&c, in, 256);
    hmac_final(&c, out);
}

/* ---- the API ---- */

static int bad_digest_len(void)
{
    fputs("ERROR: Digestbitlen not in the limitation. \n", stderr);
    return INVALID_DIGESTBITLEN;
}

int sm3hash(int digest_len_bits, const unsigned char *msg,
            unsigned long long msg_len_bits, unsigned char *digest)
{
    ngcc_iccs_sm3_ctx c;

    if (digest_len_bits != 256)
        return bad_digest_len();
    ngcc_iccs_sm3_init(&c);
    ngcc_iccs_sm3_update(&c, msg, msg_len_bits);
    ngcc_iccs_sm3_final(&c, digest);
    return HASH_SUCCESS;
}

int pseudohash(int digest_len_bits, const unsigned char *msg,
               unsigned long long msg_len_bits, unsigned char *digest)
{
    unsigned char tag[2] = { 0, 0 }, k1[32], k2[32], k3[32];
    unsigned char *h1 = digest, *h2 = digest + 32, *h3 = digest + 64, *h4 = digest + 96;
    ngcc_iccs_sm3_ctx c;

    if (digest_len_bits != 512 && digest_len_bits != 768 && digest_len_bits != 1024)
        return bad_digest_len();
    tag[0] = (unsigned char)(digest_len_bits / 256); /* 0x0200, 0x0300, 0x0400 */

    /* k1 = HMAC(KEY, T || m) */
    hmac_start(&c, 0x36);
    ngcc_iccs_sm3_update(&c, tag, 16);
    ngcc_iccs_sm3_update(&c, msg, msg_len_bits);
    hmac_final(&c, k1);
    /* h1 = SM3(m || T); msg is fully read before digest is written */
    ngcc_iccs_sm3_init(&c);
    ngcc_iccs_sm3_update(&c, msg, msg_len_bits);
    ngcc_iccs_sm3_update(&c, tag, 16);
    ngcc_iccs_sm3_final(&c, h1);
    /* h2 = SM3(k1 || h1) */
    sm3_cat(h2, k1, h1, NULL);
    if (digest_len_bits >= 768) {
        hmac32(k2, h1);
        sm3_cat(h3, h2, k2, NULL); /* h3 = SM3(h2 || HMAC(h1)) */
    }
    if (digest_len_bits == 1024) {
        hmac32(k3, h2);
        hmac32(k2, h3);             /* k4 */
        sm3_cat(h4, k3, h3, k2);    /* h4 = SM3(k3 || h3 || k4) */
    }
    return HASH_SUCCESS;
}

int pseudoXOF(unsigned long long output_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *output)
{
    unsigned long long left = (output_len_bits >> 3) + ((output_len_bits & 7) != 0);
    unsigned char block[32], ctr[4];
    uint32_t counter = 0;
    ngcc_iccs_sm3_ctx base, c;

    ngcc_iccs_sm3_init(&base);
    ngcc_iccs_sm3_update(&base, msg, msg_len_bits);
    while (left) {
        unsigned take = left < 32 ? (unsigned)left : 32;
        /* Block_ct = SM3(m || BE32(ct)), ct from 1 */
        ngcc_iccs_sm3_store_be32(ctr, ++counter);
        c = base;
        ngcc_iccs_sm3_update(&c, ctr, 32);
        ngcc_iccs_sm3_final(&c, block);
        memcpy(output, block, take);
        output += take;
        left -= take;
    }
    if (output_len_bits & 7)
        output[-1] &= (unsigned char)(0xFFu << (8 - (output_len_bits & 7)));
    return XOF_SUCCESS;
}
