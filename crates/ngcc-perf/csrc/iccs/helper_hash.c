/* CryptHash over the ICCS helper that helper_hash.h selects; the helper itself comes from the
 * auxfunc.c the baseline phase links (the official API file or ngcc-perf's). */
#include "helper_hash.h"
#include "auxfunc.h"

int CryptHash(int digest_len_bits, const unsigned char *msg, unsigned long long msg_len_bits,
              unsigned char *digest) {
#if NGCC_HELPER == 3
    return pseudoXOF((unsigned long long)digest_len_bits, msg, msg_len_bits, digest);
#elif NGCC_HELPER == 2
    return pseudohash(digest_len_bits, msg, msg_len_bits, digest);
#else
    return sm3hash(digest_len_bits, msg, msg_len_bits, digest);
#endif
}
