/*
 * One ICCS helper (sm3hash, pseudohash or pseudoXOF) as a hash instance, for the campaign's
 * baseline phase: the instance header of the generated "iccs" candidate. NGCC_HELPER picks
 * the helper (1 sm3hash, 2 pseudohash, 3 pseudoXOF) and NGCC_HELPER_BITS its output width;
 * both are defines of the generated manifest.
 */
#ifndef NGCC_HELPER_HASH_H
#define NGCC_HELPER_HASH_H

#define NGCC_HELPER_STR2(x) #x
#define NGCC_HELPER_STR(x) NGCC_HELPER_STR2(x)

#if NGCC_HELPER == 1
#define NGCC_HELPER_NAME "sm3hash"
#elif NGCC_HELPER == 2
#define NGCC_HELPER_NAME "pseudohash"
#elif NGCC_HELPER == 3
#define NGCC_HELPER_NAME "pseudoXOF"
#else
#error "NGCC_HELPER must be 1 (sm3hash), 2 (pseudohash) or 3 (pseudoXOF)"
#endif

/* "pseudoXOF-256": the label the summary's helper table and the records use. */
#define ALGORITHM_INSTANCE NGCC_HELPER_NAME "-" NGCC_HELPER_STR(NGCC_HELPER_BITS)
#define DIGEST_BIT_LENGTH NGCC_HELPER_BITS

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest);

#endif
