/*
 * ICCS auxiliary functions (ngcc-perf, written from the ICCS API description).
 *
 * Messages are bit strings: bit i is bit (7 - i % 8) of byte i / 8, and bits past the
 * length in the last byte are ignored. Lengths are in bits. Return 0 on success,
 * -4 for an unsupported digest length (-2 and -3 exist for compatibility; this
 * implementation does not allocate and cannot fail otherwise).
 */
#ifndef NGCC_ICCS_AUXFUNC_H
#define NGCC_ICCS_AUXFUNC_H

#ifdef __cplusplus
extern "C" {
#endif

/* SM3 (GB/T 32905); digest_len_bits must be 256. */
int sm3hash(int digest_len_bits, const unsigned char *msg,
            unsigned long long msg_len_bits, unsigned char *digest);

/* SM3/HMAC-SM3 cascade; digest_len_bits is 512, 768 or 1024. Not a secure hash. */
int pseudohash(int digest_len_bits, const unsigned char *msg,
               unsigned long long msg_len_bits, unsigned char *digest);

/* SM3 KDF (GB/T 32918.4): writes ceil(output_len_bits / 8) bytes, unused low bits zero.
 * Documented limit: fewer than 2^40 - 2^8 output bits (not enforced). */
int pseudoXOF(unsigned long long output_len_bits, const unsigned char *msg,
              unsigned long long msg_len_bits, unsigned char *output);

#ifdef __cplusplus
}
#endif

#endif
