/* Toy NIST-API KEM of the count zoo (tests/it/count_campaign.rs): not cryptography. */
#ifndef CTTOY_API_H
#define CTTOY_API_H
#define CTTOY_CRYPTO_PUBLICKEYBYTES 32
#define CTTOY_CRYPTO_SECRETKEYBYTES 32
#define CTTOY_CRYPTO_CIPHERTEXTBYTES 32
#define CTTOY_CRYPTO_BYTES 16
#define CTTOY_CRYPTO_ALGNAME "CT-TOY-KEM"
int CTTOY_crypto_kem_keypair(unsigned char *pk, unsigned char *sk);
int CTTOY_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk);
int CTTOY_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk);
#endif
