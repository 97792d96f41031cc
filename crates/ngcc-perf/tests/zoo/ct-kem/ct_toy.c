/* Toy KEM of the ct zoo: sk random, pk = sk ^ 0x5c; ct = r ^ pk; ss[i] = r[i] ^ rotl1(r[16+i]).
 * Decapsulation recovers r = ct ^ sk ^ 0x5c. The same function three ways (the KAT is the
 * same): constant time (default), with a secret-dependent branch (-D CT_BRANCH_DEC), or
 * with a secret-indexed table lookup (-D CT_TABLE_DEC). The lines the taint run must name
 * carry the markers CT-BRANCH and CT-TABLE (tests/it/ct_campaign.rs finds them). */
#include <stddef.h>
#include "api.h"
#include "randombytes.h"

static unsigned char rotl1(unsigned char x) {
    return (unsigned char)((x << 1) | (x >> 7));
}

#ifdef CT_TABLE_DEC
static unsigned char table[256];
static int table_ready;
#endif
#ifdef CT_BRANCH_DEC
static volatile unsigned char sink;
#endif

static void derive(unsigned char *ss, const unsigned char *r) {
    for (int i = 0; i < 16; i++) {
        ss[i] = (unsigned char)(r[i] ^ rotl1(r[16 + i]));
    }
}

int CTTOY_crypto_kem_keypair(unsigned char *pk, unsigned char *sk) {
    randombytes(sk, 32);
    for (int i = 0; i < 32; i++) {
        pk[i] = sk[i] ^ 0x5c;
    }
    return 0;
}

int CTTOY_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) {
    unsigned char r[32];
    randombytes(r, 32);
    for (int i = 0; i < 32; i++) {
        ct[i] = r[i] ^ pk[i];
    }
    derive(ss, r);
    return 0;
}

int CTTOY_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) {
    unsigned char r[32];
    for (int i = 0; i < 32; i++) {
        r[i] = ct[i] ^ sk[i] ^ 0x5c;
    }
#if defined(CT_TABLE_DEC)
    if (!table_ready) {
        for (int x = 0; x < 256; x++) {
            table[x] = rotl1((unsigned char)x);
        }
        table_ready = 1;
    }
    for (int i = 0; i < 16; i++) {
        ss[i] = (unsigned char)(r[i] ^ table[r[16 + i]]); /* CT-TABLE */
    }
#elif defined(CT_BRANCH_DEC)
    derive(ss, r);
    for (int i = 0; i < 16; i++) {
        if (r[16 + i] & 0x80) { /* CT-BRANCH */
            for (int k = 0; k < 64; k++) {
                sink = (unsigned char)k;
            }
        }
    }
#else
    derive(ss, r);
#endif
    return 0;
}
