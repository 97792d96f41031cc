/* SM3 (GB/T 32905) as an ICCS hash candidate: 256-bit digests of bit strings. */
#ifndef CRYPTHASH_ALGORITHMINSTANCE_H
#define CRYPTHASH_ALGORITHMINSTANCE_H

#define OUTPUT_BLANK_TEST_VECTORS 0
#define ALGORITHM_INSTANCE "SM3_256"
#define DIGEST_BIT_LENGTH 256

/* msg is msg_len_bits bits, MSB-first; bits past the length in the last byte are ignored.
 * Returns 0, or -1 when digest_len_bits is not 256. */
int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest);

#endif
