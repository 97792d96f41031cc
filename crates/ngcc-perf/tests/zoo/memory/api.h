/* The toy KEM of the memory phase's zoo (mem.c): not cryptography. */
#ifndef TOY_API_H
#define TOY_API_H
#define TOY_CRYPTO_PUBLICKEYBYTES 32
#define TOY_CRYPTO_SECRETKEYBYTES 32
#define TOY_CRYPTO_CIPHERTEXTBYTES 32
#define TOY_CRYPTO_BYTES 16
#define TOY_CRYPTO_ALGNAME "TOY-KEM"
int TOY_crypto_kem_keypair(unsigned char *pk, unsigned char *sk);
int TOY_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk);
int TOY_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk);
#endif
