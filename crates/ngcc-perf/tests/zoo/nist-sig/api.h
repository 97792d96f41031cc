/* A toy NIST-API signature for the zoo: not cryptography. Behaviour switches by -D ZOO_*. */
#ifndef TOYSIG_API_H
#define TOYSIG_API_H
#include <stddef.h>
#include <stdint.h>
#define TOYSIG_CRYPTO_PUBLICKEYBYTES 32
#define TOYSIG_CRYPTO_SECRETKEYBYTES 32
#define TOYSIG_CRYPTO_BYTES 32
#define TOYSIG_CRYPTO_ALGNAME "TOY-SIG"
int TOYSIG_crypto_sign_keypair(uint8_t *pk, uint8_t *sk);
int TOYSIG_crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen, const uint8_t *sk);
int TOYSIG_crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen, const uint8_t *pk);
int TOYSIG_crypto_sign(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen, const uint8_t *sk);
int TOYSIG_crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen, const uint8_t *pk);
#endif
