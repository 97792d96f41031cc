/*
 * The SM3 core of the embedded ICCS helpers (ngcc-perf; see iccs_sm3.h): SM3 over bit
 * strings, with the official length field. auxfunc.c and drng.c both hash through it, so
 * every library that gets either of them gets this file too.
 */
#include <stdint.h>
#include <string.h>

#include "iccs_sm3.h"

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

void ngcc_iccs_sm3_store_be32(unsigned char *p, uint32_t x)
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

void ngcc_iccs_sm3_init(ngcc_iccs_sm3_ctx *c)
{
    memcpy(c->st, sm3_iv, sizeof c->st);
    memset(c->buf, 0, sizeof c->buf);
    c->nbits = 0;
    c->total = 0;
}

static void sm3_flush(ngcc_iccs_sm3_ctx *c)
{
    sm3_compress(c->st, c->buf);
    memset(c->buf, 0, sizeof c->buf);
    c->nbits = 0;
}

/* Appends the top n (1..8) bits of b; its other bits must be zero. */
static void sm3_put_bits(ngcc_iccs_sm3_ctx *c, unsigned b, unsigned n)
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
void ngcc_iccs_sm3_update(ngcc_iccs_sm3_ctx *c, const unsigned char *m, unsigned long long bits)
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

void ngcc_iccs_sm3_final(ngcc_iccs_sm3_ctx *c, unsigned char out[32])
{
    unsigned long long len = c->total;
    int i;

    sm3_put_bits(c, 0x80, 1);
    if (c->nbits > 448)
        sm3_flush(c);
    /* The official length field: high word ((L/512) >> 32) << 9, low word L mod 2^32.
     * It differs from standard SM3 for L >= 2^32 bits, and is kept for bit-exactness. */
    ngcc_iccs_sm3_store_be32(c->buf + 56, (uint32_t)(((len / 512) >> 32) << 9));
    ngcc_iccs_sm3_store_be32(c->buf + 60, (uint32_t)len);
    sm3_compress(c->st, c->buf);
    for (i = 0; i < 8; i++)
        ngcc_iccs_sm3_store_be32(out + 4 * i, c->st[i]);
}
