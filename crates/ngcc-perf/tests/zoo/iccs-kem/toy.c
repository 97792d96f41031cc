/* Toy KEM, ICCS API: sk random, pk = sk ^ 0x5c; ct = r ^ pk, ss = r[0..16] ^ pk[16..32].
 * Randomness from the ICCS DRNG, as the API demands. Misbehaviours by -D ZOO_*
 * (../common/zoo.h, plus ZOO_WRONG_LEN here: a ciphertext length above the declared one). */
#include <string.h>
#include "KEM_AlgorithmInstance.h"
#include "drng.h"
#include "zoo.h"

#define PK 32
#define SK 32
#define CT 32
#define SS 16

extern DRNG_ctx drng_algorithm;

unsigned long long kem_get_pk_len_bytes(void) { return PK; }
unsigned long long kem_get_sk_len_bytes(void) { return SK; }
unsigned long long kem_get_ss_len_bytes(void) { return SS; }
unsigned long long kem_get_ct_len_bytes(void) { return CT; }

int kem_keygen(unsigned char *pk, unsigned long long *pk_len_bytes, unsigned char *sk,
               unsigned long long *sk_len_bytes) {
    zoo_enter("keygen");
    get_random_number(&drng_algorithm, sk, SK * 8);
#ifdef ZOO_NONDET
    sk[0] ^= zoo_noise();
#endif
    for (int i = 0; i < PK; i++) {
        pk[i] = sk[i] ^ 0x5c;
    }
    *pk_len_bytes = PK;
    *sk_len_bytes = SK;
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pk_len_bytes, unsigned char *ss,
            unsigned long long *ss_len_bytes, unsigned char *ct, unsigned long long *ct_len_bytes) {
    unsigned char r[CT];
    (void)pk_len_bytes;
    zoo_enter("enc");
    get_random_number(&drng_algorithm, r, CT * 8);
    for (int i = 0; i < CT; i++) {
        ct[i] = r[i] ^ pk[i];
    }
    for (int i = 0; i < SS; i++) {
        ss[i] = r[i] ^ pk[16 + i];
    }
#ifdef ZOO_OVERRUN_CT
    ct[CT] = 0x42; /* one byte past the declared ciphertext */
#endif
    *ss_len_bytes = SS;
#ifdef ZOO_WRONG_LEN
    *ct_len_bytes = CT + 1;
#else
    *ct_len_bytes = CT;
#endif
    return 0;
}

int kem_dec(unsigned char *sk, unsigned long long sk_len_bytes, unsigned char *ct,
            unsigned long long ct_len_bytes, unsigned char *ss, unsigned long long *ss_len_bytes) {
    (void)sk_len_bytes;
    (void)ct_len_bytes;
    zoo_enter("dec");
    for (int i = 0; i < SS; i++) {
        ss[i] = (unsigned char)(ct[i] ^ sk[i] ^ 0x5c ^ sk[16 + i] ^ 0x5c);
    }
#ifdef ZOO_BAD_DEC
    ss[0] ^= 1;
#endif
    *ss_len_bytes = SS;
    return 0;
}
