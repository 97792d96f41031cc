/* The trust zoo's toy KEM (issue 33; expected outcomes: tests/it/zoo_trust.rs). Not
 * cryptography. Each operation derives a 32-byte mask by TRUST_ROUNDS rounds of a mixing
 * function (about 0.1 ms, the "work"), and keygen, enc and dec use it:
 *   pk = sk ^ mask, ct = r ^ pk, ss = r[0..16] ^ pk[16..32] ^ mask[0..16].
 * The honest control does the work in every call; each hostile instance (-D TRUST_*, see
 * trust.h) does the same work and lies about its cost, or leaks text into our output. */
#include <stdint.h>
#include <string.h>
#include "api.h"
#include "randombytes.h"
#include "trust.h"

void trust_work(unsigned char mask[32]) {
    uint64_t s[4] = {trust_seed, 0x9e3779b97f4a7c15u, 0xbf58476d1ce4e5b9u, 0x94d049bb133111ebu};
    for (long i = 0; i < TRUST_ROUNDS; i++) {
        s[0] += s[1] ^ (uint64_t)i;
        s[1] = (s[1] << 13 | s[1] >> 51) ^ s[2];
        s[2] += s[3] * 0x2545f4914f6cdd1du;
        s[3] ^= s[0] >> 7;
    }
    memcpy(mask, s, 32);
}

int TRUST_crypto_kem_keypair(unsigned char *pk, unsigned char *sk) {
    unsigned char mask[32];
    trust_mask(mask);
    randombytes(sk, 32);
    for (int i = 0; i < 32; i++) {
        pk[i] = sk[i] ^ mask[i];
    }
    return 0;
}

int TRUST_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) {
    unsigned char mask[32], r[32];
    trust_mask(mask);
    randombytes(r, 32);
    for (int i = 0; i < 32; i++) {
        ct[i] = r[i] ^ pk[i];
    }
    for (int i = 0; i < 16; i++) {
        ss[i] = r[i] ^ pk[16 + i] ^ mask[i];
    }
    return 0;
}

int TRUST_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) {
    unsigned char mask[32];
    trust_mask(mask);
    for (int i = 0; i < 16; i++) {
        /* r = ct ^ pk, pk = sk ^ mask */
        unsigned char r = ct[i] ^ sk[i] ^ mask[i];
        ss[i] = r ^ sk[16 + i] ^ mask[16 + i] ^ mask[i];
    }
    return 0;
}
