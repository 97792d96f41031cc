/* A byte mixer (not cryptography): each round adds the previous byte and rotates. */
#include "mix.h"

void toy_mix(unsigned char *out, const unsigned char *in, unsigned long long n, int rounds)
{
    unsigned long long i;
    int r;
    for (i = 0; i < n; i++) {
        out[i] = in[i];
    }
    for (r = 0; r < rounds; r++) {
        unsigned char carry = (unsigned char)(r + 1);
        for (i = 0; i < n; i++) {
            unsigned char v = (unsigned char)(out[i] + carry);
            out[i] = (unsigned char)((v << 3) | (v >> 5));
            carry = out[i];
        }
    }
}
