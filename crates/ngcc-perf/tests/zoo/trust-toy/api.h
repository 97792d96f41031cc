/* The trust zoo's toy KEM (issue 33): not cryptography. Every operation does the same fixed
 * work (trust_work in toy.c); the hostile instances (-D TRUST_*) lie about what it costs. */
#ifndef TRUST_API_H
#define TRUST_API_H
#define TRUST_CRYPTO_PUBLICKEYBYTES 32
#define TRUST_CRYPTO_SECRETKEYBYTES 32
#define TRUST_CRYPTO_CIPHERTEXTBYTES 32
#define TRUST_CRYPTO_BYTES 16
#ifdef TRUST_MARKUP
#define TRUST_CRYPTO_ALGNAME "TRUST<img src=x onerror=alert(1)>|KEM"
#else
#define TRUST_CRYPTO_ALGNAME "TRUST-KEM"
#endif
int TRUST_crypto_kem_keypair(unsigned char *pk, unsigned char *sk);
int TRUST_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk);
int TRUST_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk);
#endif
