/* Toy KEM behind the ICCS API (tests only; not cryptography). */
#ifndef KEM_ALGORITHM_INSTANCE_H
#define KEM_ALGORITHM_INSTANCE_H

#ifndef SECURITY_LEVEL
#error "SECURITY_LEVEL is not defined"
#endif

#define TOY_STR2(x) #x
#define TOY_STR(x) TOY_STR2(x)
#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "Toy" TOY_STR(SECURITY_LEVEL)

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
