/*
 * ICCS DRNG (ngcc-perf, written from the ICCS API description; see drng.h): SM3 Hash_DRBG.
 * Big-endian integers, additions mod 2^440. Self-contained (hash builds link it without
 * auxfunc.c), so it carries its own byte-oriented SM3. No allocation, so the -2 path
 * (allocation failure) never occurs.
 */
#include <stdint.h>
#include <string.h>

#include "drng.h"

#define DRNG_SUCCESS 0
#define DRNG_MEMORY_ALLOCATION_FAILED (-2)

/* ---- SM3 over whole bytes ---- */

typedef struct {
    uint32_t st[8];
    unsigned char buf[64];
    unsigned n; /* bytes in buf, < 64 */
    unsigned long long len;
} drng_sm3;

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

static void drng_compress(uint32_t st[8], const unsigned char *p)
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

static void drng_sm3_init(drng_sm3 *c)
{
    static const uint32_t iv[8] = {
        0x7380166FUL, 0x4914B2B9UL, 0x172442D7UL, 0xDA8A0600UL,
        0xA96F30BCUL, 0x163138AAUL, 0xE38DEE4DUL, 0xB0FB0E4EUL
    };
    memcpy(c->st, iv, sizeof c->st);
    c->n = 0;
    c->len = 0;
}

static void drng_sm3_update(drng_sm3 *c, const unsigned char *m, unsigned long long n)
{
    c->len += n;
    while (n) {
        if (c->n == 0 && n >= 64) {
            drng_compress(c->st, m);
            m += 64;
            n -= 64;
        } else {
            unsigned take = 64 - c->n;
            if (take > n)
                take = (unsigned)n;
            memcpy(c->buf + c->n, m, take);
            c->n += take;
            m += take;
            n -= take;
            if (c->n == 64) {
                drng_compress(c->st, c->buf);
                c->n = 0;
            }
        }
    }
}

static void drng_sm3_final(drng_sm3 *c, unsigned char out[32])
{
    unsigned long long bits = 8 * c->len;
    int i;

    c->buf[c->n++] = 0x80;
    if (c->n > 56) {
        memset(c->buf + c->n, 0, 64 - c->n);
        drng_compress(c->st, c->buf);
        c->n = 0;
    }
    memset(c->buf + c->n, 0, 56 - c->n);
    /* The official length field (high word ((L/512) >> 32) << 9, low word L mod 2^32). */
    store_be32(c->buf + 56, (uint32_t)(((bits / 512) >> 32) << 9));
    store_be32(c->buf + 60, (uint32_t)bits);
    drng_compress(c->st, c->buf);
    for (i = 0; i < 8; i++)
        store_be32(out + 4 * i, c->st[i]);
}

/* ---- Hash_DRBG ---- */

/* out = Hash_df(pre || in, 440): SM3(ct || BE32(440) || pre || in) for ct = 1, 2, cut to 55. */
static void hash_df(unsigned char out[SEEDLEN], const unsigned char *pre, unsigned prelen,
                    const unsigned char *in, unsigned long long inlen)
{
    unsigned char head[5] = { 0, 0x00, 0x00, 0x01, 0xB8 }, block[64];
    drng_sm3 c;

    for (head[0] = 1; head[0] <= 2; head[0]++) {
        drng_sm3_init(&c);
        drng_sm3_update(&c, head, 5);
        drng_sm3_update(&c, pre, prelen);
        drng_sm3_update(&c, in, inlen);
        drng_sm3_final(&c, block + 32 * (head[0] - 1));
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
    drng_sm3 c;

    /* w_i = SM3(V + i), output = leftmost bytes of w_0 || w_1 || ... */
    memcpy(data, drng->V, SEEDLEN);
    while (left) {
        unsigned take = left < 32 ? (unsigned)left : 32;
        drng_sm3_init(&c);
        drng_sm3_update(&c, data, SEEDLEN);
        drng_sm3_final(&c, w);
        memcpy(random_number, w, take);
        random_number += take;
        left -= take;
        add_be(data, &one, 1);
    }
    if (random_number_len_bits & 7)
        random_number[-1] &= (unsigned char)(0xFFu << (8 - (random_number_len_bits & 7)));

    /* V = V + SM3(0x03 || V) + C + reseed_counter; reseed_counter += 1 (always, even for 0 bits) */
    drng_sm3_init(&c);
    drng_sm3_update(&c, &three, 1);
    drng_sm3_update(&c, drng->V, SEEDLEN);
    drng_sm3_final(&c, w);
    add_be(drng->V, w, 32);
    add_be(drng->V, drng->C, SEEDLEN);
    add_be(drng->V, drng->reseed_counter, SEEDLEN);
    add_be(drng->reseed_counter, &one, 1);
    return DRNG_SUCCESS;
}
