/* The fips202.h functions of the SM3 instantiations, over the ICCS helpers (auxfunc.h). */
#include "fips202.h"

#include <stdlib.h>
#include <string.h>

#include "auxfunc.h"

/* Out of memory ends the process with 111, like PQClean's own fips202.c. */
static void *grow(void *p, size_t n) {
    p = realloc(p, n ? n : 1);
    if (p == NULL) {
        exit(111);
    }
    return p;
}

static void xof_init(ngcc_xof_state *s) { memset(s, 0, sizeof *s); }

static void xof_absorb(ngcc_xof_state *s, const uint8_t *in, size_t n) {
    if (n == 0) {
        return;
    }
    if (s->msg_len + n > s->msg_cap) {
        size_t cap = 2 * s->msg_cap;
        if (cap < s->msg_len + n) {
            cap = s->msg_len + n;
        }
        if (cap < 64) {
            cap = 64;
        }
        s->msg = grow(s->msg, cap);
        s->msg_cap = cap;
    }
    memcpy(s->msg + s->msg_len, in, n);
    s->msg_len += n;
}

/* pseudoXOF only computes prefixes (block i depends on the message and i alone), so a
 * longer squeeze recomputes a longer prefix; doubling keeps the total work linear. */
static void xof_squeeze(uint8_t *out, size_t n, ngcc_xof_state *s) {
    size_t need = s->pos + n;
    if (need > s->out_len) {
        size_t want = 2 * s->out_len;
        if (want < need) {
            want = need;
        }
        s->out = grow(s->out, want);
        pseudoXOF(8ULL * want, s->msg ? s->msg : (const uint8_t *)"", 8ULL * s->msg_len, s->out);
        s->out_len = want;
    }
    memcpy(out, s->out + s->pos, n);
    s->pos += n;
}

static void xof_release(ngcc_xof_state *s) {
    free(s->msg);
    free(s->out);
    memset(s, 0, sizeof *s);
}

static void xof_clone(ngcc_xof_state *d, const ngcc_xof_state *s) {
    *d = *s;
    d->msg = NULL;
    d->out = NULL;
    if (s->msg_cap) {
        d->msg = grow(NULL, s->msg_cap);
        memcpy(d->msg, s->msg, s->msg_len);
    }
    if (s->out_len) {
        d->out = grow(NULL, s->out_len);
        memcpy(d->out, s->out, s->out_len);
    }
}

void shake128_absorb(shake128ctx *state, const uint8_t *input, size_t inlen) {
    xof_init(state);
    xof_absorb(state, input, inlen);
}
void shake128_squeezeblocks(uint8_t *output, size_t nblocks, shake128ctx *state) {
    xof_squeeze(output, nblocks * SHAKE128_RATE, state);
}
void shake128_ctx_release(shake128ctx *state) { xof_release(state); }
void shake128_ctx_clone(shake128ctx *dest, const shake128ctx *src) { xof_clone(dest, src); }

void shake128_inc_init(shake128incctx *state) { xof_init(state); }
void shake128_inc_absorb(shake128incctx *state, const uint8_t *input, size_t inlen) {
    xof_absorb(state, input, inlen);
}
void shake128_inc_finalize(shake128incctx *state) { (void)state; }
void shake128_inc_squeeze(uint8_t *output, size_t outlen, shake128incctx *state) {
    xof_squeeze(output, outlen, state);
}
void shake128_inc_ctx_clone(shake128incctx *dest, const shake128incctx *src) { xof_clone(dest, src); }
void shake128_inc_ctx_release(shake128incctx *state) { xof_release(state); }

void shake256_absorb(shake256ctx *state, const uint8_t *input, size_t inlen) {
    xof_init(state);
    xof_absorb(state, input, inlen);
}
void shake256_squeezeblocks(uint8_t *output, size_t nblocks, shake256ctx *state) {
    xof_squeeze(output, nblocks * SHAKE256_RATE, state);
}
void shake256_ctx_release(shake256ctx *state) { xof_release(state); }
void shake256_ctx_clone(shake256ctx *dest, const shake256ctx *src) { xof_clone(dest, src); }

void shake256_inc_init(shake256incctx *state) { xof_init(state); }
void shake256_inc_absorb(shake256incctx *state, const uint8_t *input, size_t inlen) {
    xof_absorb(state, input, inlen);
}
void shake256_inc_finalize(shake256incctx *state) { (void)state; }
void shake256_inc_squeeze(uint8_t *output, size_t outlen, shake256incctx *state) {
    xof_squeeze(output, outlen, state);
}
void shake256_inc_ctx_clone(shake256incctx *dest, const shake256incctx *src) { xof_clone(dest, src); }
void shake256_inc_ctx_release(shake256incctx *state) { xof_release(state); }

/* One-shot calls write exactly outlen bytes: one pseudoXOF call, no state. */
void shake128(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen) {
    pseudoXOF(8ULL * outlen, input, 8ULL * inlen, output);
}
void shake256(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen) {
    pseudoXOF(8ULL * outlen, input, 8ULL * inlen, output);
}

void sha3_256(uint8_t *output, const uint8_t *input, size_t inlen) {
    sm3hash(256, input, 8ULL * inlen, output);
}
void sha3_512(uint8_t *output, const uint8_t *input, size_t inlen) {
    pseudohash(512, input, 8ULL * inlen, output);
}
