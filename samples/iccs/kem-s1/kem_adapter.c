/* The ICCS KEM API over PQClean's ML-KEM. One file for every instance: the parameter set
 * comes from KEM_AlgorithmInstance.h, the symmetric primitives from whichever fips202.h the
 * instance puts on its include path (PQClean's SHAKE/SHA3, or ../common/sm3 for SM3). */
#include <stddef.h>
#include <stdint.h>

#include "KEM_AlgorithmInstance.h"
#include "api.h"
#include "randombytes.h"

#define KEM_S1_CAT2(a, b) a##_##b
#define KEM_S1_CAT(a, b) KEM_S1_CAT2(a, b)
#define NS(f) KEM_S1_CAT(KEM_S1_NAMESPACE, f)

#define PK_BYTES NS(CRYPTO_PUBLICKEYBYTES)
#define SK_BYTES NS(CRYPTO_SECRETKEYBYTES)
#define CT_BYTES NS(CRYPTO_CIPHERTEXTBYTES)
#define SS_BYTES NS(CRYPTO_BYTES)

unsigned long long kem_get_pk_len_bytes(void) { return PK_BYTES; }
unsigned long long kem_get_sk_len_bytes(void) { return SK_BYTES; }
unsigned long long kem_get_ss_len_bytes(void) { return SS_BYTES; }
unsigned long long kem_get_ct_len_bytes(void) { return CT_BYTES; }

int kem_keygen(unsigned char *pk, unsigned long long *pk_len_bytes, unsigned char *sk,
               unsigned long long *sk_len_bytes) {
#ifdef NGCC_ZOO_NONDET
    /* Test hook: every keygen after the first draws once more, so the same seed gives
     * different keys depending on history (what the harness's replay must catch). */
    static int zoo_calls;
    if (zoo_calls++ > 0) {
        uint8_t junk[32];
        randombytes(junk, sizeof junk);
    }
#endif
    if (NS(crypto_kem_keypair)(pk, sk) != 0) {
        return -2;
    }
    *pk_len_bytes = PK_BYTES;
    *sk_len_bytes = SK_BYTES;
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pk_len_bytes, unsigned char *ss,
            unsigned long long *ss_len_bytes, unsigned char *ct, unsigned long long *ct_len_bytes) {
    if (pk_len_bytes != PK_BYTES) {
        return -2;
    }
    if (NS(crypto_kem_enc)(ct, ss, pk) != 0) {
        return -3;
    }
#ifdef NGCC_ZOO_CT_OVERFLOW
    /* Test hook: one byte past kem_get_ct_len_bytes(). */
    ct[CT_BYTES] = 0;
#endif
    *ss_len_bytes = SS_BYTES;
    *ct_len_bytes = CT_BYTES;
    return 0;
}

int kem_dec(unsigned char *sk, unsigned long long sk_len_bytes, unsigned char *ct,
            unsigned long long ct_len_bytes, unsigned char *ss, unsigned long long *ss_len_bytes) {
    if (sk_len_bytes != SK_BYTES || ct_len_bytes != CT_BYTES) {
        return -2;
    }
    /* ML-KEM rejects implicitly: a bad ciphertext yields a pseudo-random key, never -1. */
    if (NS(crypto_kem_dec)(ss, ct, sk) != 0) {
        return -3;
    }
    *ss_len_bytes = SS_BYTES;
    return 0;
}
