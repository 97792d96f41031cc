/* Toy KEM: pk = mix(sk); ct = r XOR pk, ss = mix(r). Only for the importer tests. */
#include <string.h>

#include "KEM_AlgorithmInstance.h"
#include "mix.h"
#include "toy_rand.h"

#define N (SECURITY_LEVEL / 8)

#ifdef TOY_GNU_ONLY
/* `typeof` is a GNU extension: the guide flags (-std=c99) reject it, gnu11 accepts it. */
int toy_gnu(int x);
int toy_gnu(int x)
{
    typeof(x) y = x;
    return y;
}
#endif

unsigned long long kem_get_pk_len_bytes(void) { return N; }
unsigned long long kem_get_sk_len_bytes(void) { return 2 * N; }
unsigned long long kem_get_ss_len_bytes(void) { return 16; }
unsigned long long kem_get_ct_len_bytes(void) { return N; }

int kem_keygen(unsigned char *pk, unsigned long long *pk_len_bytes, unsigned char *sk,
               unsigned long long *sk_len_bytes)
{
    toy_random(sk, N);
    toy_mix(pk, sk, N, SECURITY_LEVEL);
    memcpy(sk + N, pk, N);
    *pk_len_bytes = N;
    *sk_len_bytes = 2 * N;
    return 0;
}

int kem_enc(unsigned char *pk, unsigned long long pk_len_bytes, unsigned char *ss,
            unsigned long long *ss_len_bytes, unsigned char *ct, unsigned long long *ct_len_bytes)
{
    unsigned char r[N], full[N];
    unsigned long long i;
    if (pk_len_bytes != N) {
        return -1;
    }
    toy_random(r, N);
    for (i = 0; i < N; i++) {
        ct[i] = (unsigned char)(r[i] ^ pk[i]);
    }
    toy_mix(full, r, N, 3);
    memcpy(ss, full, 16);
    *ss_len_bytes = 16;
    *ct_len_bytes = N;
    return 0;
}

int kem_dec(unsigned char *sk, unsigned long long sk_len_bytes, unsigned char *ct,
            unsigned long long ct_len_bytes, unsigned char *ss, unsigned long long *ss_len_bytes)
{
    unsigned char r[N], full[N];
    unsigned long long i;
    if (sk_len_bytes != 2 * N || ct_len_bytes != N) {
        return -1;
    }
    for (i = 0; i < N; i++) {
        r[i] = (unsigned char)(ct[i] ^ sk[N + i]);
    }
    toy_mix(full, r, N, 3);
    memcpy(ss, full, 16);
    *ss_len_bytes = 16;
    return 0;
}
