/* A byte mixer (not cryptography). Its rotation is a plain `inline` function whose address
 * is taken: in C99 that is an inline definition only, with no external one, so the symbol
 * is undefined unless gnu89 inline semantics apply (this package builds with -std=gnu89). */
#include "mix.h"

inline unsigned char toy_rot(unsigned char v)
{
    return (unsigned char)((v << 3) | (v >> 5));
}

void toy_mix(unsigned char *out, const unsigned char *in, unsigned long long n, int rounds)
{
    unsigned char (*volatile rot)(unsigned char) = toy_rot;
    unsigned long long i;
    int r;
    for (i = 0; i < n; i++) {
        out[i] = in[i];
    }
    for (r = 0; r < rounds; r++) {
        unsigned char carry = (unsigned char)(r + 1);
        for (i = 0; i < n; i++) {
            out[i] = rot((unsigned char)(out[i] + carry));
            carry = out[i];
        }
    }
}
