/* SM3 over bit strings, written for the hash-s1 sample. Hash candidates are built without
 * auxfunc.c, so this is self-contained. Whole 64-byte blocks are compressed straight from
 * the message; only the final partial block is copied. */
#include <stdint.h>
#include <string.h>

#include "CryptHash_AlgorithmInstance.h"

static uint32_t rotl(uint32_t x, unsigned n) {
    n &= 31;
    return n ? (x << n) | (x >> (32 - n)) : x;
}

static uint32_t p0(uint32_t x) { return x ^ rotl(x, 9) ^ rotl(x, 17); }
static uint32_t p1(uint32_t x) { return x ^ rotl(x, 15) ^ rotl(x, 23); }

static uint32_t load_be32(const unsigned char *p) {
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | (uint32_t)p[3];
}

/* One round; FF/GG are chosen by the caller's loop so the hot loop has no branches. */
#define SM3_ROUND(FF, GG, TJ)                                                  \
    do {                                                                       \
        uint32_t a12 = rotl(a, 12);                                            \
        uint32_t ss1 = rotl(a12 + e + (TJ), 7);                                \
        uint32_t tt1 = (FF) + d + (ss1 ^ a12) + (w[j] ^ w[j + 4]);             \
        uint32_t tt2 = (GG) + h + ss1 + w[j];                                  \
        d = c;                                                                 \
        c = rotl(b, 9);                                                        \
        b = a;                                                                 \
        a = tt1;                                                               \
        h = g;                                                                 \
        g = rotl(f, 19);                                                       \
        f = e;                                                                 \
        e = p0(tt2);                                                           \
    } while (0)

static void compress(uint32_t v[8], const unsigned char *block) {
    uint32_t w[68];
    uint32_t a = v[0], b = v[1], c = v[2], d = v[3], e = v[4], f = v[5], g = v[6], h = v[7];
    unsigned j;
    for (j = 0; j < 16; j++) {
        w[j] = load_be32(block + 4 * j);
    }
    for (j = 16; j < 68; j++) {
        w[j] = p1(w[j - 16] ^ w[j - 9] ^ rotl(w[j - 3], 15)) ^ rotl(w[j - 13], 7) ^ w[j - 6];
    }
    for (j = 0; j < 16; j++) {
        SM3_ROUND(a ^ b ^ c, e ^ f ^ g, rotl(0x79CC4519u, j));
    }
    for (j = 16; j < 64; j++) {
        SM3_ROUND((a & b) | (a & c) | (b & c), (e & f) | (~e & g), rotl(0x7A879D8Au, j));
    }
    v[0] ^= a;
    v[1] ^= b;
    v[2] ^= c;
    v[3] ^= d;
    v[4] ^= e;
    v[5] ^= f;
    v[6] ^= g;
    v[7] ^= h;
}

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest) {
    static const uint32_t iv[8] = {0x7380166Fu, 0x4914B2B9u, 0x172442D7u, 0xDA8A0600u,
                                   0xA96F30BCu, 0x163138AAu, 0xE38DEE4Du, 0xB0FB0E4Eu};
    uint32_t v[8];
    unsigned char tail[128];
    unsigned long long full = msg_len_bits / 512, i;
    unsigned rest_bits = (unsigned)(msg_len_bits % 512);
    unsigned rest_bytes = rest_bits / 8, r = rest_bits % 8, n;
    if (digest_len_bits != 256) {
        return -1;
    }
    memcpy(v, iv, sizeof v);
    for (i = 0; i < full; i++) {
        compress(v, msg + 64 * i);
    }
    /* Padding: the message bits, one '1' bit, zeros, then the 64-bit length. */
    memset(tail, 0, sizeof tail);
    memcpy(tail, msg + 64 * full, rest_bytes + (r ? 1 : 0));
    if (r) {
        tail[rest_bytes] &= (unsigned char)(0xFF00u >> r);
    }
    tail[rest_bytes] |= (unsigned char)(0x80u >> r);
    n = rest_bits + 1 + 64 <= 512 ? 64 : 128;
    for (i = 0; i < 8; i++) {
        tail[n - 1 - i] = (unsigned char)(msg_len_bits >> (8 * i));
    }
    compress(v, tail);
    if (n == 128) {
        compress(v, tail + 64);
    }
    for (i = 0; i < 8; i++) {
        digest[4 * i] = (unsigned char)(v[i] >> 24);
        digest[4 * i + 1] = (unsigned char)(v[i] >> 16);
        digest[4 * i + 2] = (unsigned char)(v[i] >> 8);
        digest[4 * i + 3] = (unsigned char)v[i];
    }
    return 0;
}
