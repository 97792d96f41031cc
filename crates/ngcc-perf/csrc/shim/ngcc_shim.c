/* Generated-per-instance link shim: maps the candidate's API (NIST/PQClean or ICCS) onto the
 * uniform ngcc_* ABI and fills the metadata block. Configured by ngcc_shim_config.h. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ngcc_shim_config.h"
#include "ngcc_shim.h"
#include NGCC_HEADER

#define NGCC_EXPORT __attribute__((visibility("default")))
typedef unsigned long long ull;

static void ngcc_copy(char *dst, size_t cap, const char *src) {
    size_t n = strlen(src);
    if (n >= cap) {
        n = cap - 1;
    }
    memcpy(dst, src, n);
    dst[n] = '\0';
}

static ngcc_meta_t ngcc_meta_block;
static void ngcc_fill_sizes(uint64_t *sizes, const char **instance);

NGCC_EXPORT const ngcc_meta_t *ngcc_meta(void) {
    if (ngcc_meta_block.magic == 0) {
        const char *instance = "";
        ngcc_meta_block.abi = NGCC_ABI;
        ngcc_meta_block.type = NGCC_TYPE;
        ngcc_meta_block.struct_size = (uint32_t)sizeof(ngcc_meta_t);
        ngcc_fill_sizes(ngcc_meta_block.sizes, &instance);
        ngcc_copy(ngcc_meta_block.id, sizeof ngcc_meta_block.id, NGCC_ID);
        ngcc_copy(ngcc_meta_block.algorithm, sizeof ngcc_meta_block.algorithm, NGCC_ALG);
        ngcc_copy(ngcc_meta_block.instance, sizeof ngcc_meta_block.instance, instance);
        ngcc_copy(ngcc_meta_block.variant, sizeof ngcc_meta_block.variant, NGCC_VARIANT);
        ngcc_copy(ngcc_meta_block.source_dir, sizeof ngcc_meta_block.source_dir, NGCC_SRCDIR);
        ngcc_copy(ngcc_meta_block.compiler, sizeof ngcc_meta_block.compiler, NGCC_COMPILER);
        ngcc_copy(ngcc_meta_block.build_flags, sizeof ngcc_meta_block.build_flags, NGCC_FLAGS);
        ngcc_meta_block.magic = NGCC_MAGIC;
    }
    return &ngcc_meta_block;
}

/* The full flag string (the metadata block truncates it to 127 characters). */
NGCC_EXPORT const char *ngcc_build_flags(void) { return NGCC_FLAGS; }

#if defined(NGCC_API_NIST)
/* ------------------------------------------------------------------ NIST / PQClean API */
#include "randombytes.h"

#define NGCC_CAT2(a, b) a##_##b
#define NGCC_CAT(a, b) NGCC_CAT2(a, b)
#define NS(f) NGCC_CAT(NGCC_NS, f)

/* randombytes comes from the host (a deterministic DRBG chosen by the harness). */
static int (*ngcc_rng)(uint8_t *, size_t);
NGCC_EXPORT void ngcc_set_randombytes(int (*fp)(uint8_t *, size_t)) { ngcc_rng = fp; }
int randombytes(uint8_t *output, size_t n) { return ngcc_rng ? ngcc_rng(output, n) : -1; }
int PQCLEAN_randombytes(uint8_t *output, size_t n);
int PQCLEAN_randombytes(uint8_t *output, size_t n) { return randombytes(output, n); }

#if NGCC_TYPE == 1
static void ngcc_fill_sizes(uint64_t *sizes, const char **instance) {
    sizes[0] = NS(CRYPTO_PUBLICKEYBYTES);
    sizes[1] = NS(CRYPTO_SECRETKEYBYTES);
    sizes[2] = NS(CRYPTO_CIPHERTEXTBYTES);
    sizes[3] = NS(CRYPTO_BYTES);
    *instance = NS(CRYPTO_ALGNAME);
}
NGCC_EXPORT int ngcc_kem_keygen(unsigned char *pk, ull *pk_len, unsigned char *sk, ull *sk_len) {
    int rc = NS(crypto_kem_keypair)(pk, sk);
    *pk_len = NS(CRYPTO_PUBLICKEYBYTES);
    *sk_len = NS(CRYPTO_SECRETKEYBYTES);
    return rc;
}
NGCC_EXPORT int ngcc_kem_enc(unsigned char *pk, ull pk_len, unsigned char *ss, ull *ss_len, unsigned char *ct,
                             ull *ct_len) {
    int rc;
    (void)pk_len;
    rc = NS(crypto_kem_enc)(ct, ss, pk);
    *ss_len = NS(CRYPTO_BYTES);
    *ct_len = NS(CRYPTO_CIPHERTEXTBYTES);
    return rc;
}
NGCC_EXPORT int ngcc_kem_dec(unsigned char *sk, ull sk_len, unsigned char *ct, ull ct_len, unsigned char *ss,
                             ull *ss_len) {
    int rc;
    (void)sk_len;
    (void)ct_len;
    rc = NS(crypto_kem_dec)(ss, ct, sk);
    *ss_len = NS(CRYPTO_BYTES);
    return rc;
}
#elif NGCC_TYPE == 2
static void ngcc_fill_sizes(uint64_t *sizes, const char **instance) {
    sizes[0] = NS(CRYPTO_PUBLICKEYBYTES);
    sizes[1] = NS(CRYPTO_SECRETKEYBYTES);
    sizes[2] = NS(CRYPTO_BYTES);
    *instance = NS(CRYPTO_ALGNAME);
}
NGCC_EXPORT int ngcc_sig_keygen(unsigned char *pk, ull *pk_len, unsigned char *sk, ull *sk_len) {
    int rc = NS(crypto_sign_keypair)(pk, sk);
    *pk_len = NS(CRYPTO_PUBLICKEYBYTES);
    *sk_len = NS(CRYPTO_SECRETKEYBYTES);
    return rc;
}
NGCC_EXPORT int ngcc_sig_sign(unsigned char *sk, ull sk_len, unsigned char *m, ull m_len, unsigned char *sn,
                              ull *sn_len) {
    size_t len = 0;
    int rc;
    (void)sk_len;
    rc = NS(crypto_sign_signature)(sn, &len, m, (size_t)m_len, sk);
    *sn_len = len;
    return rc;
}
NGCC_EXPORT int ngcc_sig_verify(unsigned char *pk, ull pk_len, unsigned char *sn, ull sn_len, unsigned char *m,
                                ull m_len) {
    (void)pk_len;
    return NS(crypto_sign_verify)(sn, (size_t)sn_len, m, (size_t)m_len, pk) == 0 ? 0 : -1;
}
/* Attached signatures: what the NIST KAT files contain. */
NGCC_EXPORT int ngcc_nist_sign(unsigned char *sm, ull *sm_len, const unsigned char *m, ull m_len,
                               const unsigned char *sk) {
    size_t len = 0;
    int rc = NS(crypto_sign)(sm, &len, m, (size_t)m_len, sk);
    *sm_len = len;
    return rc;
}
NGCC_EXPORT int ngcc_nist_open(unsigned char *m, ull *m_len, const unsigned char *sm, ull sm_len,
                               const unsigned char *pk) {
    size_t len = 0;
    int rc = NS(crypto_sign_open)(m, &len, sm, (size_t)sm_len, pk);
    *m_len = len;
    return rc;
}
#else
#error "the NIST API has only kem and sig"
#endif

#else
/* ------------------------------------------------------------------ ICCS API */
#include "drng.h"

#if !defined(NGCC_OWN_DRNG_CTX)
DRNG_ctx drng_algorithm;
#else
extern DRNG_ctx drng_algorithm;
#endif

NGCC_EXPORT int ngcc_seed(const unsigned char *seed, ull len) {
    return init_random_number(&drng_algorithm, (unsigned char *)seed, len);
}
NGCC_EXPORT int ngcc_random(unsigned char *out, ull bits) { return get_random_number(&drng_algorithm, out, bits); }

#if NGCC_TYPE == 1
static void ngcc_fill_sizes(uint64_t *sizes, const char **instance) {
    sizes[0] = kem_get_pk_len_bytes();
    sizes[1] = kem_get_sk_len_bytes();
    sizes[2] = kem_get_ct_len_bytes();
    sizes[3] = kem_get_ss_len_bytes();
    *instance = ALGORITHM_INSTANCE;
}
NGCC_EXPORT int ngcc_kem_keygen(unsigned char *pk, ull *pk_len, unsigned char *sk, ull *sk_len) {
    return kem_keygen(pk, pk_len, sk, sk_len);
}
NGCC_EXPORT int ngcc_kem_enc(unsigned char *pk, ull pk_len, unsigned char *ss, ull *ss_len, unsigned char *ct,
                             ull *ct_len) {
    return kem_enc(pk, pk_len, ss, ss_len, ct, ct_len);
}
NGCC_EXPORT int ngcc_kem_dec(unsigned char *sk, ull sk_len, unsigned char *ct, ull ct_len, unsigned char *ss,
                             ull *ss_len) {
    return kem_dec(sk, sk_len, ct, ct_len, ss, ss_len);
}
#elif NGCC_TYPE == 2
static void ngcc_fill_sizes(uint64_t *sizes, const char **instance) {
    sizes[0] = sig_get_pk_len_bytes();
    sizes[1] = sig_get_sk_len_bytes();
    sizes[2] = sig_get_sn_len_bytes();
    *instance = ALGORITHM_INSTANCE;
}
NGCC_EXPORT int ngcc_sig_keygen(unsigned char *pk, ull *pk_len, unsigned char *sk, ull *sk_len) {
    return sig_keygen(pk, pk_len, sk, sk_len);
}
NGCC_EXPORT int ngcc_sig_sign(unsigned char *sk, ull sk_len, unsigned char *m, ull m_len, unsigned char *sn,
                              ull *sn_len) {
    return sig_sign(sk, sk_len, m, m_len, sn, sn_len);
}
NGCC_EXPORT int ngcc_sig_verify(unsigned char *pk, ull pk_len, unsigned char *sn, ull sn_len, unsigned char *m,
                                ull m_len) {
    return sig_verify(pk, pk_len, sn, sn_len, m, m_len);
}
#elif NGCC_TYPE == 3
typedef int (*ngcc_pass_fn)(unsigned char *, ull, unsigned char *, ull, unsigned char *, ull, unsigned char *,
                            ull *, unsigned char *, ull *);
/* Passes after the first are optional: weak, hidden references resolve to NULL when absent. */
#define NGCC_PASS_DECL(k, p)                                                                                      \
    extern int kex_generate_pass##k##_msg_##p(unsigned char *, ull, unsigned char *, ull, unsigned char *, ull, \
                                              unsigned char *, ull *, unsigned char *, ull *)                    \
        __attribute__((weak, visibility("hidden")));
NGCC_PASS_DECL(2, b)
NGCC_PASS_DECL(3, a)
NGCC_PASS_DECL(4, b)
NGCC_PASS_DECL(5, a)
NGCC_PASS_DECL(6, b)
NGCC_PASS_DECL(7, a)
NGCC_PASS_DECL(8, b)
NGCC_PASS_DECL(9, a)
NGCC_PASS_DECL(10, b)
NGCC_PASS_DECL(11, a)
NGCC_PASS_DECL(12, b)
NGCC_PASS_DECL(13, a)
NGCC_PASS_DECL(14, b)
NGCC_PASS_DECL(15, a)
NGCC_PASS_DECL(16, b)

static ngcc_pass_fn ngcc_pass_table(int k) {
    switch (k) {
    case 2: return kex_generate_pass2_msg_b;
    case 3: return kex_generate_pass3_msg_a;
    case 4: return kex_generate_pass4_msg_b;
    case 5: return kex_generate_pass5_msg_a;
    case 6: return kex_generate_pass6_msg_b;
    case 7: return kex_generate_pass7_msg_a;
    case 8: return kex_generate_pass8_msg_b;
    case 9: return kex_generate_pass9_msg_a;
    case 10: return kex_generate_pass10_msg_b;
    case 11: return kex_generate_pass11_msg_a;
    case 12: return kex_generate_pass12_msg_b;
    case 13: return kex_generate_pass13_msg_a;
    case 14: return kex_generate_pass14_msg_b;
    case 15: return kex_generate_pass15_msg_a;
    case 16: return kex_generate_pass16_msg_b;
    default: return NULL;
    }
}
static void ngcc_fill_sizes(uint64_t *sizes, const char **instance) {
    sizes[0] = kex_get_passes_num();
    sizes[1] = kex_get_pk_len_bytes();
    sizes[2] = kex_get_sk_len_bytes();
    sizes[3] = kex_get_sta_len_bytes();
    sizes[4] = kex_get_stb_len_bytes();
    sizes[5] = kex_get_ss_len_bytes();
    sizes[6] = kex_get_total_msg_len_bytes();
    *instance = ALGORITHM_INSTANCE;
}
NGCC_EXPORT int ngcc_kex_init_a(unsigned char *pk, ull *pk_len, unsigned char *sk, ull *sk_len, unsigned char *st,
                                ull *st_len) {
    return kex_init_a(pk, pk_len, sk, sk_len, st, st_len);
}
NGCC_EXPORT int ngcc_kex_init_b(unsigned char *pk, ull *pk_len, unsigned char *sk, ull *sk_len, unsigned char *st,
                                ull *st_len) {
    return kex_init_b(pk, pk_len, sk, sk_len, st, st_len);
}
NGCC_EXPORT int ngcc_kex_has_pass(int k) { return k == 1 || ngcc_pass_table(k) != NULL; }
NGCC_EXPORT int ngcc_kex_pass(int k, unsigned char *sk, ull sk_len, unsigned char *peer_pk, ull peer_pk_len,
                              unsigned char *in, ull in_len, unsigned char *st, ull *st_len, unsigned char *out,
                              ull *out_len) {
    ngcc_pass_fn fn;
    if (k == 1) {
        (void)in;
        (void)in_len;
        return kex_generate_pass1_msg_a(sk, sk_len, peer_pk, peer_pk_len, st, st_len, out, out_len);
    }
    fn = ngcc_pass_table(k);
    return fn ? fn(sk, sk_len, peer_pk, peer_pk_len, in, in_len, st, st_len, out, out_len) : NGCC_NO_PASS;
}
NGCC_EXPORT int ngcc_kex_derive_a(unsigned char *sk, ull sk_len, unsigned char *peer_pk, ull peer_pk_len,
                                  unsigned char *msg, ull msg_len, unsigned char *st, ull st_len, unsigned char *ss,
                                  ull *ss_len) {
    return kex_derive_ss_a(sk, sk_len, peer_pk, peer_pk_len, msg, msg_len, st, st_len, ss, ss_len);
}
NGCC_EXPORT int ngcc_kex_derive_b(unsigned char *sk, ull sk_len, unsigned char *peer_pk, ull peer_pk_len,
                                  unsigned char *msg, ull msg_len, unsigned char *st, ull st_len, unsigned char *ss,
                                  ull *ss_len) {
    return kex_derive_ss_b(sk, sk_len, peer_pk, peer_pk_len, msg, msg_len, st, st_len, ss, ss_len);
}
#elif NGCC_TYPE == 4
#if defined(NGCC_DIGEST_BITS)
#define NGCC_DIGEST NGCC_DIGEST_BITS
#else
#define NGCC_DIGEST DIGEST_BIT_LENGTH
#endif
static void ngcc_fill_sizes(uint64_t *sizes, const char **instance) {
    sizes[0] = NGCC_DIGEST;
    sizes[1] = (NGCC_DIGEST + 7) / 8;
    *instance = ALGORITHM_INSTANCE;
}
NGCC_EXPORT int ngcc_hash(int digest_bits, const unsigned char *msg, ull msg_bits, unsigned char *digest) {
    return CryptHash(digest_bits, (unsigned char *)msg, msg_bits, digest);
}
#endif
#endif
