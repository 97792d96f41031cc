/*
 * ICCS auxiliary functions: sm3hash, pseudohash, pseudoXOF (ngcc-perf, written from the
 * ICCS API description; see auxfunc.h). No allocation: every helper streams through a
 * stack SM3 context, so the -2 (allocation) and -3 (HMAC) paths never occur.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "auxfunc.h"

#define HASH_SUCCESS 0
#define XOF_SUCCESS 0
#define MEMORY_ALLOCATION_FAILED (-2)
#define HASH_FAILED (-3)
#define INVALID_DIGESTBITLEN (-4)

/* ---- SM3 over bit strings ---- */

typedef struct {
    uint32_t st[8];
    unsigned char buf[64]; /* bits at or after nbits are zero */
    unsigned nbits;        /* bits in buf, always < 512 */
    unsigned long long total;
} sm3_ctx;

static const uint32_t sm3_iv[8] = {
    0x7380166FUL, 0x4914B2B9UL, 0x172442D7UL, 0xDA8A0600UL,
    0xA96F30BCUL, 0x163138AAUL, 0xE38DEE4DUL, 0xB0FB0E4EUL
};

#define ROTL(x, n) ((uint32_t)(((x) << (n)) | ((x) >> (32 - (n)))))
#define P0(x) ((x) ^ ROTL((x), 9) ^ ROTL((x), 17))
#define P1(x) ((x) ^ ROTL((x), 15) ^ ROTL((x), 23))
#define XOR3(x, y, z) ((x) ^ (y) ^ (z))
#define MAJ(x, y, z) (((x) & (y)) | ((z) & ((x) | (y))))
#define CHOOSE(x, y, z) ((z) ^ ((x) & ((y) ^ (z))))

/* W[j] of the message expansion, computed by round j - 4, the first to need it: a separate
 * expansion loop gets 2-way vectorized by GCC -O2 and stalls on store forwarding. */
#define EXPAND(j) \
    (w[j] = P1(w[(j) - 16] ^ w[(j) - 9] ^ ROTL(w[(j) - 3], 15)) ^ ROTL(w[(j) - 13], 7) ^ w[(j) - 6])

/* One round; the caller rotates the variable roles instead of moving values. */
#define ROUND(A, B, C, D, E, F, G, H, FF, GG, W4, j)           \
    do {                                                       \
        uint32_t a12 = ROTL(A, 12);                            \
        uint32_t ss1 = ROTL(a12 + E + k, 7);                   \
        D = FF(A, B, C) + D + (ss1 ^ a12) + (w[j] ^ (W4));     \
        H = GG(E, F, G) + H + ss1 + w[j];                      \
        H = P0(H);                                             \
        B = ROTL(B, 9);                                        \
        F = ROTL(F, 19);                                       \
        k = ROTL(k, 1);                                        \
    } while (0)

#define ROUND4(FF, GG, W4, j)                                         \
    do {                                                              \
        ROUND(a, b, c, d, e, f, g, h, FF, GG, W4((j) + 4), (j));      \
        ROUND(d, a, b, c, h, e, f, g, FF, GG, W4((j) + 5), (j) + 1);  \
        ROUND(c, d, a, b, g, h, e, f, FF, GG, W4((j) + 6), (j) + 2);  \
        ROUND(b, c, d, a, f, g, h, e, FF, GG, W4((j) + 7), (j) + 3);  \
    } while (0)

/* W[j] already computed (j < 20). */
#define LOADED(j) w[j]

static uint32_t load_be32(const unsigned char *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void store_be32(unsigned char *p, uint32_t x)
{
    p[0] = (unsigned char)(x >> 24);
    p[1] = (unsigned char)(x >> 16);
    p[2] = (unsigned char)(x >> 8);
    p[3] = (unsigned char)x;
}

static void sm3_compress(uint32_t st[8], const unsigned char *p)
{
    uint32_t w[68], a, b, c, d, e, f, g, h, k;
    int j;

    for (j = 0; j < 16; j++)
        w[j] = load_be32(p + 4 * j);
    a = st[0]; b = st[1]; c = st[2]; d = st[3];
    e = st[4]; f = st[5]; g = st[6]; h = st[7];
    k = 0x79CC4519UL; /* T_j rotated left by j, one step per round */
    for (j = 16; j < 20; j++) /* W[16..19], needed by rounds 12..15 */
        EXPAND(j);
    for (j = 0; j < 16; j += 4)
        ROUND4(XOR3, XOR3, LOADED, j);
    k = 0x9D8A7A87UL; /* 7A879D8A rotated left by 16 */
    for (j = 16; j < 64; j += 4)
        ROUND4(MAJ, CHOOSE, EXPAND, j);
    st[0] ^= a; st[1] ^= b; st[2] ^= c; st[3] ^= d;
    st[4] ^= e; st[5] ^= f; st[6] ^= g; st[7] ^= h;
}

static void sm3_init(sm3_ctx *c)
{
    memcpy(c->st, sm3_iv, sizeof c->st);
    memset(c->buf, 0, sizeof c->buf);
    c->nbits = 0;
    c->total = 0;
}

static void sm3_flush(sm3_ctx *c)
{
    sm3_compress(c->st, c->buf);
    memset(c->buf, 0, sizeof c->buf);
    c->nbits = 0;
}

/* Appends the top n (1..8) bits of b; its other bits must be zero. */
static void sm3_put_bits(sm3_ctx *c, unsigned b, unsigned n)
{
    unsigned room = 8 - (c->nbits & 7);

    c->buf[c->nbits >> 3] |= (unsigned char)(b >> (8 - room));
    if (n < room) {
        c->nbits += n;
        return;
    }
    c->nbits += room;
    if (c->nbits == 512)
        sm3_flush(c);
    if (n > room) {
        c->buf[c->nbits >> 3] |= (unsigned char)(b << room);
        c->nbits += n - room;
    }
}

/* Appends the first `bits` bits of m. */
static void sm3_update(sm3_ctx *c, const unsigned char *m, unsigned long long bits)
{
    unsigned long long nbytes = bits >> 3;
    unsigned rem = (unsigned)(bits & 7);

    if (bits == 0) /* m may be NULL for an empty message */
        return;
    c->total += bits;
    if (c->nbits & 7) {
        while (nbytes--)
            sm3_put_bits(c, *m++, 8);
    } else {
        unsigned pos = c->nbits >> 3;
        if (pos) {
            unsigned take = 64 - pos;
            if (take > nbytes)
                take = (unsigned)nbytes;
            memcpy(c->buf + pos, m, take);
            m += take;
            nbytes -= take;
            c->nbits += 8 * take;
            if (c->nbits == 512)
                sm3_flush(c);
        }
        if (c->nbits == 0) {
            for (; nbytes >= 64; nbytes -= 64, m += 64)
                sm3_compress(c->st, m);
            memcpy(c->buf, m, (size_t)nbytes);
            c->nbits = 8 * (unsigned)nbytes;
            m += nbytes;
        }
    }
    if (rem)
        sm3_put_bits(c, *m & (0xFFu << (8 - rem)), rem);
}

static void sm3_final(sm3_ctx *c, unsigned char out[32])
{
    unsigned long long len = c->total;
    int i;

    sm3_put_bits(c, 0x80, 1);
    if (c->nbits > 448)
        sm3_flush(c);
    /* The official length field: high word ((L/512) >> 32) << 9, low word L mod 2^32.
     * It differs from standard SM3 for L >= 2^32 bits, and is kept for bit-exactness. */
    store_be32(c->buf + 56, (uint32_t)(((len / 512) >> 32) << 9));
    store_be32(c->buf + 60, (uint32_t)len);
    sm3_compress(c->st, c->buf);
    for (i = 0; i < 8; i++)
        store_be32(out + 4 * i, c->st[i]);
}

/* SM3 of up to three whole 32-byte pieces (c3 may be NULL). */
static void sm3_cat(unsigned char out[32], const unsigned char *a, const unsigned char *b,
                    const unsigned char *c3)
{
    sm3_ctx c;
    sm3_init(&c);
    sm3_update(&c, a, 256);
    sm3_update(&c, b, 256);
    if (c3)
        sm3_update(&c, c3, 256);
    sm3_final(&c, out);
}

/* ---- HMAC-SM3 with the fixed key SM3("3.14159265358979") || SM3("2.71828182845904") ---- */

static const unsigned char pseudo_key[64] = {
    0x53, 0x07, 0xF6, 0xD5, 0xEB, 0x6A, 0x3C, 0xED, 0x3D, 0x24, 0xC5, 0x3C, 0xC9, 0xC8, 0x2C, 0xCE,
    0x2F, 0x89, 0x36, 0x39, 0x70, 0x23, 0xF0, 0x69, 0x5C, 0x26, 0xC8, 0x0C, 0x1A, 0xB1, 0x82, 0xA7,
    0x1D, 0xB0, 0x2B, 0xA9, 0x2F, 0x54, 0x40, 0x18, 0x11, 0x5A, 0x96, 0xE7, 0x19, 0x66, 0x2C, 0xA3,
    0x2B, 0x7C, 0x7E, 0xFC, 0x0A, 0x6D, 0x24, 0x82, 0x15, 0x07, 0x66, 0xBA, 0x6F, 0x65, 0x5B, 0x8E
};

/* Starts SM3(K1 || ...) with K1 = KEY ^ 0x36, or SM3(K2 || ...) with pad 0x5C. */
static void hmac_start(sm3_ctx *c, unsigned char pad)
{
    unsigned char k[64];
    int i;
    for (i = 0; i < 64; i++)
        k[i] = (unsigned char)(pseudo_key[i] ^ pad);
    sm3_init(c);
    sm3_update(c, k, 512);
}

static void hmac_final(sm3_ctx *c, unsigned char out[32])
{
    unsigned char inner[32];
    sm3_final(c, inner);
    hmac_start(c, 0x5C);
    sm3_update(c, inner, 256);
    sm3_final(c, out);
}

static void hmac32(unsigned char out[32], const unsigned char in[32])
{
    sm3_ctx c;
    hmac_start(&c, 0x36);
    sm3_update(&c, in, 256);
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
    sm3_ctx c;

    if (digest_len_bits != 256)
        return bad_digest_len();
    sm3_init(&c);
    sm3_update(&c, msg, msg_len_bits);
    sm3_final(&c, digest);
    return HASH_SUCCESS;
}

int pseudohash(int digest_len_bits, const unsigned char *msg,
               unsigned long long msg_len_bits, unsigned char *digest)
{
    unsigned char tag[2] = { 0, 0 }, k1[32], k2[32], k3[32];
    unsigned char *h1 = digest, *h2 = digest + 32, *h3 = digest + 64, *h4 = digest + 96;
    sm3_ctx c;

    if (digest_len_bits != 512 && digest_len_bits != 768 && digest_len_bits != 1024)
        return bad_digest_len();
    tag[0] = (unsigned char)(digest_len_bits / 256); /* 0x0200, 0x0300, 0x0400 */

    /* k1 = HMAC(KEY, T || m) */
    hmac_start(&c, 0x36);
    sm3_update(&c, tag, 16);
    sm3_update(&c, msg, msg_len_bits);
    hmac_final(&c, k1);
    /* h1 = SM3(m || T); msg is fully read before digest is written */
    sm3_init(&c);
    sm3_update(&c, msg, msg_len_bits);
    sm3_update(&c, tag, 16);
    sm3_final(&c, h1);
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
    sm3_ctx base, c;

    sm3_init(&base);
    sm3_update(&base, msg, msg_len_bits);
    while (left) {
        unsigned take = left < 32 ? (unsigned)left : 32;
        /* Block_ct = SM3(m || BE32(ct)), ct from 1 */
        store_be32(ctr, ++counter);
        c = base;
        sm3_update(&c, ctr, 32);
        sm3_final(&c, block);
        memcpy(output, block, take);
        output += take;
        left -= take;
    }
    if (output_len_bits & 7)
        output[-1] &= (unsigned char)(0xFFu << (8 - (output_len_bits & 7)));
    return XOF_SUCCESS;
}
