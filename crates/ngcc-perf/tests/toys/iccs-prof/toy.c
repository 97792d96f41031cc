/* Toy ICCS KEM: pk = pseudoXOF(seed); ct = m ^ pseudoXOF(pk) || sm3hash(m);
 * ss = pseudohash(m || ct)[0..32]. Each operation also does some plain arithmetic, so the
 * helpers' share stays below 100 %. */
#include <string.h>

#include "KEM_AlgorithmInstance.h"
#include "auxfunc.h"
#include "drng.h"

extern DRNG_ctx drng_algorithm;

#define PK 64
#define SK (32 + PK)
#define CT 64
#define SS 32

unsigned long long kem_get_pk_len_bytes(void) { return PK; }
unsigned long long kem_get_sk_len_bytes(void) { return SK; }
unsigned long long kem_get_ss_len_bytes(void) { return SS; }
unsigned long long kem_get_ct_len_bytes(void) { return CT; }

/* Work that is not hashing: a xorshift walk seeded from the buffer, kept alive through a
 * volatile store (the buffer itself is left unchanged). */
static volatile unsigned long long toy_sink;
static void busy(const unsigned char *buf, size_t len) {
    unsigned long long x = 0x9E3779B97F4A7C15ULL ^ buf[0] ^ ((unsigned long long)buf[len - 1] << 8);
    int i;
    for (i = 0; i < 20000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
    }
    toy_sink = x;
}

int kem_keygen(unsigned char *pk, unsigned long long *pk_len_bytes, unsigned char *sk,
               unsigned long long *sk_len_bytes) {
    unsigned char seed[32];
    if (get_random_number(&drng_algorithm, seed, 256) != 0) {
        return -2;
    }
    if (pseudoXOF(8ULL * PK, seed, 256, pk) != 0) {
        return -3;
    }
    memcpy(sk, seed, 32);
    memcpy(sk + 32, pk, PK);
    busy(pk, PK);
    *pk_len_bytes = PK;
    *sk_len_bytes = SK;
    return 0;
}

static int shared(const unsigned char *m, const unsigned char *ct, unsigned char *ss) {
    unsigned char in[32 + CT];
    unsigned char digest[64];
    memcpy(in, m, 32);
    memcpy(in + 32, ct, CT);
    if (pseudohash(512, in, 8ULL * sizeof in, digest) != 0) {
        return -4;
    }
    memcpy(ss, digest, SS);
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pk_len_bytes, unsigned char *ss,
            unsigned long long *ss_len_bytes, unsigned char *ct, unsigned long long *ct_len_bytes) {
    unsigned char m[32], pad[32];
    int i;
    if (pk_len_bytes != PK) {
        return -1;
    }
    if (get_random_number(&drng_algorithm, m, 256) != 0 || pseudoXOF(256, pk, 8ULL * PK, pad) != 0 ||
        sm3hash(256, m, 256, ct + 32) != 0) {
        return -2;
    }
    for (i = 0; i < 32; i++) {
        ct[i] = (unsigned char)(m[i] ^ pad[i]);
    }
    busy(ct, CT);
    *ct_len_bytes = CT;
    *ss_len_bytes = SS;
    return shared(m, ct, ss);
}

int kem_dec(unsigned char *sk, unsigned long long sk_len_bytes, unsigned char *ct,
            unsigned long long ct_len_bytes, unsigned char *ss, unsigned long long *ss_len_bytes) {
    unsigned char m[32], pad[32], check[32];
    int i;
    if (sk_len_bytes != SK || ct_len_bytes != CT) {
        return -2;
    }
    if (pseudoXOF(256, sk + 32, 8ULL * PK, pad) != 0) {
        return -2;
    }
    for (i = 0; i < 32; i++) {
        m[i] = (unsigned char)(ct[i] ^ pad[i]);
    }
    if (sm3hash(256, m, 256, check) != 0 || memcmp(check, ct + 32, 32) != 0) {
        return -1;
    }
    busy(m, 32);
    *ss_len_bytes = SS;
    return shared(m, ct, ss);
}
