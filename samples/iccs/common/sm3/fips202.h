/* fips202.h for the SM3 instantiations of PQClean code: the declarations ML-KEM and ML-DSA
 * use, routed to the ICCS helpers (SHA3-256 -> sm3hash, SHA3-512 -> pseudohash(512),
 * SHAKE128/SHAKE256 -> pseudoXOF). This folder precedes PQClean's common/ on the include
 * path, so the same PQClean sources compile against it unchanged.
 *
 * The rates keep their FIPS 202 values: callers size buffers in rate-sized blocks. Both
 * SHAKEs become the same pseudoXOF, as in NGCC candidates that replace them one for one. */
#ifndef FIPS202_H
#define FIPS202_H

#include <stddef.h>
#include <stdint.h>

#define SHAKE128_RATE 168
#define SHAKE256_RATE 136
#define SHA3_256_RATE 136
#define SHA3_384_RATE 104
#define SHA3_512_RATE 72

/* The absorbed message and the output computed so far; squeezing continues at pos. */
typedef struct {
    uint8_t *msg;
    size_t msg_len;
    size_t msg_cap;
    uint8_t *out;
    size_t out_len;
    size_t pos;
} ngcc_xof_state;

typedef ngcc_xof_state shake128incctx;
typedef ngcc_xof_state shake128ctx;
typedef ngcc_xof_state shake256incctx;
typedef ngcc_xof_state shake256ctx;

void shake128_absorb(shake128ctx *state, const uint8_t *input, size_t inlen);
void shake128_squeezeblocks(uint8_t *output, size_t nblocks, shake128ctx *state);
void shake128_ctx_release(shake128ctx *state);
void shake128_ctx_clone(shake128ctx *dest, const shake128ctx *src);

void shake128_inc_init(shake128incctx *state);
void shake128_inc_absorb(shake128incctx *state, const uint8_t *input, size_t inlen);
void shake128_inc_finalize(shake128incctx *state);
void shake128_inc_squeeze(uint8_t *output, size_t outlen, shake128incctx *state);
void shake128_inc_ctx_clone(shake128incctx *dest, const shake128incctx *src);
void shake128_inc_ctx_release(shake128incctx *state);

void shake256_absorb(shake256ctx *state, const uint8_t *input, size_t inlen);
void shake256_squeezeblocks(uint8_t *output, size_t nblocks, shake256ctx *state);
void shake256_ctx_release(shake256ctx *state);
void shake256_ctx_clone(shake256ctx *dest, const shake256ctx *src);

void shake256_inc_init(shake256incctx *state);
void shake256_inc_absorb(shake256incctx *state, const uint8_t *input, size_t inlen);
void shake256_inc_finalize(shake256incctx *state);
void shake256_inc_squeeze(uint8_t *output, size_t outlen, shake256incctx *state);
void shake256_inc_ctx_clone(shake256incctx *dest, const shake256incctx *src);
void shake256_inc_ctx_release(shake256incctx *state);

void shake128(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen);
void shake256(uint8_t *output, size_t outlen, const uint8_t *input, size_t inlen);

void sha3_256(uint8_t *output, const uint8_t *input, size_t inlen);
void sha3_512(uint8_t *output, const uint8_t *input, size_t inlen);

#endif
