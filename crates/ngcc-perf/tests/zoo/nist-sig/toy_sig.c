/* Toy signature: sk random, pk = sk ^ 0x5c; sig[i] = pk[i] ^ h_i(m), where h_i is a rolling
 * hash of the whole message salted with i, so any changed message byte changes it.
 * "Signing" only needs pk (= sk ^ 0x5c): not cryptography. ZOO_WRONG_LEN claims one byte
 * more than it wrote (and than the declared maximum). */
#include <string.h>
#include "api.h"
#include "randombytes.h"
#include "zoo.h"

#ifdef ZOO_WRONG_LEN
#define ZOO_EXTRA 1
#else
#define ZOO_EXTRA 0
#endif

static void toy_tag(uint8_t *sig, const uint8_t *m, size_t mlen, const uint8_t *pk) {
    for (int i = 0; i < TOYSIG_CRYPTO_BYTES; i++) {
        uint8_t h = (uint8_t)i;
        for (size_t j = 0; j < mlen; j++) {
            h = (uint8_t)(h * 33 + m[j] + i);
        }
        sig[i] = pk[i] ^ h;
    }
}

int TOYSIG_crypto_sign_keypair(uint8_t *pk, uint8_t *sk) {
    zoo_enter("keygen");
    randombytes(sk, TOYSIG_CRYPTO_SECRETKEYBYTES);
    for (int i = 0; i < 32; i++) {
        pk[i] = sk[i] ^ 0x5c;
    }
    return 0;
}

int TOYSIG_crypto_sign_signature(uint8_t *sig, size_t *siglen, const uint8_t *m, size_t mlen, const uint8_t *sk) {
    uint8_t pk[32];
    zoo_enter("sign");
    for (int i = 0; i < 32; i++) {
        pk[i] = sk[i] ^ 0x5c;
    }
    toy_tag(sig, m, mlen, pk);
    *siglen = TOYSIG_CRYPTO_BYTES + ZOO_EXTRA;
    return 0;
}

int TOYSIG_crypto_sign_verify(const uint8_t *sig, size_t siglen, const uint8_t *m, size_t mlen, const uint8_t *pk) {
    uint8_t want[TOYSIG_CRYPTO_BYTES];
    if (siglen < TOYSIG_CRYPTO_BYTES) {
        return -1;
    }
    toy_tag(want, m, mlen, pk);
    return memcmp(want, sig, TOYSIG_CRYPTO_BYTES) == 0 ? 0 : -1;
}

int TOYSIG_crypto_sign(uint8_t *sm, size_t *smlen, const uint8_t *m, size_t mlen, const uint8_t *sk) {
    size_t siglen = 0;
    memmove(sm + TOYSIG_CRYPTO_BYTES, m, mlen);
    TOYSIG_crypto_sign_signature(sm, &siglen, sm + TOYSIG_CRYPTO_BYTES, mlen, sk);
    *smlen = siglen + mlen;
    return 0;
}

int TOYSIG_crypto_sign_open(uint8_t *m, size_t *mlen, const uint8_t *sm, size_t smlen, const uint8_t *pk) {
    if (smlen < TOYSIG_CRYPTO_BYTES ||
        TOYSIG_crypto_sign_verify(sm, TOYSIG_CRYPTO_BYTES, sm + TOYSIG_CRYPTO_BYTES, smlen - TOYSIG_CRYPTO_BYTES, pk)) {
        return -1;
    }
    *mlen = smlen - TOYSIG_CRYPTO_BYTES;
    memmove(m, sm + TOYSIG_CRYPTO_BYTES, *mlen);
    return 0;
}
