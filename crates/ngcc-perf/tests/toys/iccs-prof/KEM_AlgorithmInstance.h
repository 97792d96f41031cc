/* Toy ICCS KEM instance for the profile tests. */
#ifndef KEM_ALGORITHMINSTANCE_H
#define KEM_ALGORITHMINSTANCE_H

#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "TOY_ICCS_PROF"

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
