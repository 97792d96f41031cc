/* The ICCS signature API as every sig-s1 instance declares it. Each instance's
 * SIG_AlgorithmInstance.h defines what differs (ALGORITHM_INSTANCE, SIG_S1_NAMESPACE) and
 * then includes this header. */
#ifndef ICCS_SIG_API_H
#define ICCS_SIG_API_H

#ifndef ALGORITHM_INSTANCE
#error "define ALGORITHM_INSTANCE before including iccs_sig_api.h"
#endif

#define OUTPUT_BLANK_TEST_VECTORS 0

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
