/* Toy KEM: sk random, pk = sk ^ 0x5c; ct = r ^ pk, ss = r[0..16] ^ pk[16..32].
 * Misbehaviours by -D ZOO_* (../common/zoo.h; the zoo: tests/it/zoo_campaign.rs). */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "api.h"
#include "randombytes.h"
#include "zoo.h"

int TOY_crypto_kem_keypair(unsigned char *pk, unsigned char *sk) {
    zoo_enter("keygen");
    randombytes(sk, 32);
#ifdef ZOO_NONDET
    sk[0] ^= zoo_noise();
#endif
#ifdef ZOO_FORGE_PASS
    sk[0] ^= 1; /* a wrong KEM: its KAT text differs */
#endif
    for (int i = 0; i < 32; i++) {
        pk[i] = sk[i] ^ 0x5c;
    }
    return 0;
}

int TOY_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) {
    unsigned char r[32];
    zoo_enter("enc");
    randombytes(r, 32);
    for (int i = 0; i < 32; i++) {
        ct[i] = r[i] ^ pk[i];
    }
    for (int i = 0; i < 16; i++) {
        ss[i] = r[i] ^ pk[16 + i];
    }
#ifdef ZOO_BAD_ENC_TRIAL
    if (zoo_bad_enc()) {
        ct[0] ^= 1; /* timed encapsulations whose ciphertext does not decapsulate */
    }
#endif
#ifdef ZOO_OVERRUN_CT
    ct[TOY_CRYPTO_CIPHERTEXTBYTES] = 0x42; /* one byte past the declared ciphertext */
#endif
    return 0;
}

int TOY_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) {
    zoo_enter("dec");
    for (int i = 0; i < 16; i++) {
        ss[i] = (unsigned char)(ct[i] ^ sk[i] ^ 0x5c ^ sk[16 + i] ^ 0x5c);
    }
#ifdef ZOO_BAD_DEC
    ss[0] ^= 1; /* decapsulation that disagrees with encapsulation */
#endif
    return 0;
}
