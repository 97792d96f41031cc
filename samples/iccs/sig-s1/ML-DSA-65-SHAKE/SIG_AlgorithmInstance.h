/* ML-DSA-65, symmetric primitives: PQClean's own FIPS 202 (SHAKE).
 * Randomness: get_random_number(&drng_algorithm, ...) through ../../common/randombytes.h. */
#ifndef SIG_ALGORITHMINSTANCE_H
#define SIG_ALGORITHMINSTANCE_H

#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "ML_DSA_65_SHAKE"

/* The PQClean parameter set sig_adapter.c calls. */
#define SIG_S1_NAMESPACE PQCLEAN_MLDSA65_CLEAN

unsigned long long sig_get_pk_len_bytes(void);
unsigned long long sig_get_sk_len_bytes(void);
unsigned long long sig_get_sn_len_bytes(void);

int sig_keygen(unsigned char *pk, unsigned long long *pk_len_bytes, unsigned char *sk,
               unsigned long long *sk_len_bytes);
int sig_sign(unsigned char *sk, unsigned long long sk_len_bytes, unsigned char *m,
             unsigned long long m_len_bytes, unsigned char *sn, unsigned long long *sn_len_bytes);
int sig_verify(unsigned char *pk, unsigned long long pk_len_bytes, unsigned char *sn,
               unsigned long long sn_len_bytes, unsigned char *m, unsigned long long m_len_bytes);

#endif
