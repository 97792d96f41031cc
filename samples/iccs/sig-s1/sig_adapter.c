/* The ICCS signature API over PQClean's ML-DSA (detached signatures, empty context string).
 * The same file serves the SHAKE and the SM3 instance; only fips202.h differs. */
#include <stddef.h>
#include <stdint.h>

#include "SIG_AlgorithmInstance.h"
#include "api.h"

#define SIG_S1_CAT2(a, b) a##_##b
#define SIG_S1_CAT(a, b) SIG_S1_CAT2(a, b)
#define NS(f) SIG_S1_CAT(SIG_S1_NAMESPACE, f)

#define PK_BYTES NS(CRYPTO_PUBLICKEYBYTES)
#define SK_BYTES NS(CRYPTO_SECRETKEYBYTES)
#define SN_BYTES NS(CRYPTO_BYTES)

unsigned long long sig_get_pk_len_bytes(void) { return PK_BYTES; }
unsigned long long sig_get_sk_len_bytes(void) { return SK_BYTES; }
unsigned long long sig_get_sn_len_bytes(void) { return SN_BYTES; }

int sig_keygen(unsigned char *pk, unsigned long long *pk_len_bytes, unsigned char *sk,
               unsigned long long *sk_len_bytes) {
    if (NS(crypto_sign_keypair)(pk, sk) != 0) {
        return -2;
    }
    *pk_len_bytes = PK_BYTES;
    *sk_len_bytes = SK_BYTES;
    return 0;
}

int sig_sign(unsigned char *sk, unsigned long long sk_len_bytes, unsigned char *m,
             unsigned long long m_len_bytes, unsigned char *sn, unsigned long long *sn_len_bytes) {
    size_t len = 0;
    if (sk_len_bytes != SK_BYTES) {
        return -2;
    }
    if (NS(crypto_sign_signature)(sn, &len, m, (size_t)m_len_bytes, sk) != 0) {
        return -3;
    }
    *sn_len_bytes = len;
    return 0;
}

int sig_verify(unsigned char *pk, unsigned long long pk_len_bytes, unsigned char *sn,
               unsigned long long sn_len_bytes, unsigned char *m, unsigned long long m_len_bytes) {
    if (pk_len_bytes != PK_BYTES) {
        return -2;
    }
    return NS(crypto_sign_verify)(sn, (size_t)sn_len_bytes, m, (size_t)m_len_bytes, pk) == 0 ? 0 : -1;
}
