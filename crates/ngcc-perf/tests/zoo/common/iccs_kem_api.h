/* The ICCS KEM API as the ICCS toys declare it (the zoo's iccs-kem, ../../toys/iccs-prof).
 * Each toy's KEM_AlgorithmInstance.h defines ALGORITHM_INSTANCE and then includes this
 * header. */
#ifndef ICCS_KEM_API_H
#define ICCS_KEM_API_H

#ifndef ALGORITHM_INSTANCE
#error "define ALGORITHM_INSTANCE before including iccs_kem_api.h"
#endif

#define OUTPUT_BLANK_TEST_VECTORS 0

unsigned long long kem_get_pk_len_bytes(void);
unsigned long long kem_get_sk_len_bytes(void);
unsigned long long kem_get_ss_len_bytes(void);
unsigned long long kem_get_ct_len_bytes(void);

int kem_keygen(unsigned char *pk, unsigned long long *pk_len_bytes, unsigned char *sk,
               unsigned long long *sk_len_bytes);
int kem_enc(unsigned char *pk, unsigned long long pk_len_bytes, unsigned char *ss,
            unsigned long long *ss_len_bytes, unsigned char *ct, unsigned long long *ct_len_bytes);
int kem_dec(unsigned char *sk, unsigned long long sk_len_bytes, unsigned char *ct,
            unsigned long long ct_len_bytes, unsigned char *ss, unsigned long long *ss_len_bytes);

#endif
