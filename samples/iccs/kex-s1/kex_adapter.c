/* A 2-pass key exchange built from ML-KEM-768: A sends an ephemeral encapsulation key (pass
 * 1), B answers with a ciphertext (pass 2, which finishes the exchange). No long-term keys
 * (pk/sk lengths 0). A's state holds its decapsulation key, B's state the shared secret. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "KEX_AlgorithmInstance.h"
#include "api.h"

#define NS(f) PQCLEAN_MLKEM768_CLEAN_##f

#define PK_BYTES NS(CRYPTO_PUBLICKEYBYTES)
#define SK_BYTES NS(CRYPTO_SECRETKEYBYTES)
#define CT_BYTES NS(CRYPTO_CIPHERTEXTBYTES)
#define SS_BYTES NS(CRYPTO_BYTES)

unsigned long long kex_get_passes_num(void) { return 2; }
unsigned long long kex_get_pk_len_bytes(void) { return 0; }
unsigned long long kex_get_sk_len_bytes(void) { return 0; }
unsigned long long kex_get_sta_len_bytes(void) { return SK_BYTES; }
unsigned long long kex_get_stb_len_bytes(void) { return SS_BYTES; }
unsigned long long kex_get_ss_len_bytes(void) { return SS_BYTES; }
unsigned long long kex_get_total_msg_len_bytes(void) { return PK_BYTES + CT_BYTES; }

static int kex_init(unsigned long long *pk_len, unsigned long long *sk_len, unsigned long long *st_len) {
    *pk_len = 0;
    *sk_len = 0;
    *st_len = 0;
    return 0;
}

int kex_init_a(unsigned char *pka, unsigned long long *pka_len_bytes, unsigned char *ska,
               unsigned long long *ska_len_bytes, unsigned char *sta, unsigned long long *sta_len_bytes) {
    (void)pka;
    (void)ska;
    (void)sta;
    return kex_init(pka_len_bytes, ska_len_bytes, sta_len_bytes);
}

int kex_init_b(unsigned char *pkb, unsigned long long *pkb_len_bytes, unsigned char *skb,
               unsigned long long *skb_len_bytes, unsigned char *stb, unsigned long long *stb_len_bytes) {
    (void)pkb;
    (void)skb;
    (void)stb;
    return kex_init(pkb_len_bytes, skb_len_bytes, stb_len_bytes);
}

int kex_generate_pass1_msg_a(unsigned char *ska, unsigned long long ska_len_bytes, unsigned char *pkb,
                             unsigned long long pkb_len_bytes, unsigned char *sta,
                             unsigned long long *sta_len_bytes, unsigned char *m1,
                             unsigned long long *m1_len_bytes) {
    (void)ska;
    (void)ska_len_bytes;
    (void)pkb;
    (void)pkb_len_bytes;
    if (NS(crypto_kem_keypair)(m1, sta) != 0) {
        return -2;
    }
    *m1_len_bytes = PK_BYTES;
    *sta_len_bytes = SK_BYTES;
    return 0;
}

int kex_generate_pass2_msg_b(unsigned char *skb, unsigned long long skb_len_bytes, unsigned char *pka,
                             unsigned long long pka_len_bytes, unsigned char *m1,
                             unsigned long long m1_len_bytes, unsigned char *stb,
                             unsigned long long *stb_len_bytes, unsigned char *m2,
                             unsigned long long *m2_len_bytes) {
    (void)skb;
    (void)skb_len_bytes;
    (void)pka;
    (void)pka_len_bytes;
    if (m1_len_bytes != PK_BYTES) {
        return -2;
    }
    if (NS(crypto_kem_enc)(m2, stb, m1) != 0) {
        return -3;
    }
    *m2_len_bytes = CT_BYTES;
    *stb_len_bytes = SS_BYTES;
    return 1;
}

int kex_derive_ss_a(unsigned char *ska, unsigned long long ska_len_bytes, unsigned char *pkb,
                    unsigned long long pkb_len_bytes, unsigned char *mb, unsigned long long mb_len_bytes,
                    unsigned char *sta, unsigned long long sta_len_bytes, unsigned char *ssa,
                    unsigned long long *ssa_len_bytes) {
    (void)ska;
    (void)ska_len_bytes;
    (void)pkb;
    (void)pkb_len_bytes;
    if (mb == NULL || mb_len_bytes != CT_BYTES || sta_len_bytes != SK_BYTES) {
        return -2;
    }
    if (NS(crypto_kem_dec)(ssa, mb, sta) != 0) {
        return -3;
    }
    *ssa_len_bytes = SS_BYTES;
    return 0;
}

int kex_derive_ss_b(unsigned char *skb, unsigned long long skb_len_bytes, unsigned char *pka,
                    unsigned long long pka_len_bytes, unsigned char *ma, unsigned long long ma_len_bytes,
                    unsigned char *stb, unsigned long long stb_len_bytes, unsigned char *ssb,
                    unsigned long long *ssb_len_bytes) {
    (void)skb;
    (void)skb_len_bytes;
    (void)pka;
    (void)pka_len_bytes;
    (void)ma;
    (void)ma_len_bytes;
    if (stb_len_bytes != SS_BYTES) {
        return -2;
    }
    memcpy(ssb, stb, SS_BYTES);
    *ssb_len_bytes = SS_BYTES;
    return 0;
}
