/* Toy KEM of the count zoo (tests/it/count_campaign.rs), the ct zoo's toy: sk random,
 * pk = sk ^ 0x5c; ct = r ^ pk; ss[i] = r[i] ^ rotl1(r[16+i]); dec recovers r = ct ^ sk ^ 0x5c.
 * Not cryptography. Variants (same KAT):
 * - COUNT_EXTRA_ENC: an extra loop in enc (work the count phase's gate must catch in enc alone);
 * - COUNT_SECRET_BRANCH: a branch on secret data in dec (the ct taint run flags it);
 * - COUNT_FORGE: that branch, and dec first tells memcheck the secret key is defined, with a
 *   valgrind client request written out here (the fixed preamble of valgrind.h, then the
 *   request marker), so the taint run sees no secret: the ct record must say forged;
 * - COUNT_STOPPER: a constructor that stops callgrind's instrumentation when the library is
 *   loaded (CALLGRIND_STOP_INSTRUMENTATION, written out the same way): nothing of it is
 *   counted, and its records must fail rather than claim zero instructions;
 * - COUNT_LEAKY: enc switches callgrind's collection off (CALLGRIND_TOGGLE_COLLECT) before
 *   its extra loop and leaves it so: the entry point's own toggle on leaving then switches
 *   collection on outside the operation, and enc's record must fail;
 * - COUNT_PAUSED: enc stops callgrind's instrumentation before its extra loop and starts it
 *   again after (CALLGRIND_STOP/START_INSTRUMENTATION): the loop is not counted, the dump's
 *   call edge and its functions disagree, and enc's record must fail;
 * - COUNT_NESTED: enc calls the harness's entry point ngcc_kem_enc (linked into the same
 *   library) and does its work in that nested call, where callgrind's toggle on the entry
 *   point switches collection off; no client request at all, and enc's record must fail. */
#include <stddef.h>
#include "api.h"
#include "randombytes.h"

static unsigned char rotl1(unsigned char x) {
    return (unsigned char)((x << 1) | (x >> 7));
}

#if defined(COUNT_EXTRA_ENC) || defined(COUNT_SECRET_BRANCH) || defined(COUNT_LEAKY) ||        \
    defined(COUNT_NESTED) || defined(COUNT_PAUSED)
static volatile unsigned char sink;
#endif

#if defined(COUNT_FORGE) || defined(COUNT_STOPPER) || defined(COUNT_LEAKY) || defined(COUNT_PAUSED)
/* A valgrind client request (`code`: the tool's base and number; two arguments), inlined where
 * it is made, as valgrind.h's macros are. */
static inline __attribute__((always_inline)) void request(unsigned long code, unsigned long a1,
                                                          unsigned long a2) {
    volatile unsigned long args[6] = {code, a1, a2, 0, 0, 0};
    unsigned long result = 0;
#if defined(__x86_64__)
    __asm__ volatile("rolq $3,  %%rdi ; rolq $13, %%rdi\n\t"
                     "rolq $61, %%rdi ; rolq $51, %%rdi\n\t"
                     "xchgq %%rbx,%%rbx"
                     : "=d"(result)
                     : "a"(&args[0]), "0"(result)
                     : "cc", "memory");
#endif
    (void)result;
}
#endif

#ifdef COUNT_FORGE
/* memcheck's MAKE_MEM_DEFINED request ('M','C' tool base + 2) on [p, p+n). */
static void forge_defined(const void *p, unsigned long n) {
    request(0x4d430002UL, (unsigned long)p, n);
}
#endif

#ifdef COUNT_STOPPER
/* callgrind's STOP_INSTRUMENTATION ('C','T' tool base + 5), at load time. */
__attribute__((constructor)) static void stop_counting(void) {
    request(0x43540005UL, 0, 0);
}
#endif

#ifdef COUNT_NESTED
int ngcc_kem_enc(unsigned char *pk, unsigned long long pk_len, unsigned char *ss,
                 unsigned long long *ss_len, unsigned char *ct, unsigned long long *ct_len);
static int nested;
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
#ifdef COUNT_NESTED
    if (!nested) {
        unsigned long long ss_len, ct_len;
        nested = 1;
        ngcc_kem_enc((unsigned char *)pk, 32, ss, &ss_len, ct, &ct_len);
        nested = 0;
        return 0;
    }
    for (int k = 0; k < 1000; k++) {
        sink = (unsigned char)k;
    }
#endif
    randombytes(r, 32);
    for (int i = 0; i < 32; i++) {
        ct[i] = r[i] ^ pk[i];
    }
#ifdef COUNT_LEAKY
    request(0x43540002UL, 0, 0); /* callgrind's TOGGLE_COLLECT ('C','T' tool base + 2) */
    for (int k = 0; k < 1000; k++) {
        sink = (unsigned char)k;
    }
#endif
#ifdef COUNT_PAUSED
    request(0x43540005UL, 0, 0); /* callgrind's STOP_INSTRUMENTATION */
    for (int k = 0; k < 1000; k++) {
        sink = (unsigned char)k;
    }
    request(0x43540004UL, 0, 0); /* callgrind's START_INSTRUMENTATION */
#endif
#ifdef COUNT_EXTRA_ENC
    for (int k = 0; k < 1000; k++) { /* COUNT-EXTRA */
        sink = (unsigned char)k;
    }
#endif
    derive(ss, r);
    return 0;
}

int CTTOY_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) {
    unsigned char r[32];
#ifdef COUNT_FORGE
    forge_defined(sk, 32);
#endif
    for (int i = 0; i < 32; i++) {
        r[i] = ct[i] ^ sk[i] ^ 0x5c;
    }
    derive(ss, r);
#ifdef COUNT_SECRET_BRANCH
    for (int i = 0; i < 16; i++) {
        if (r[16 + i] & 0x80) { /* COUNT-BRANCH */
            sink = (unsigned char)i;
        }
    }
#endif
    return 0;
}
