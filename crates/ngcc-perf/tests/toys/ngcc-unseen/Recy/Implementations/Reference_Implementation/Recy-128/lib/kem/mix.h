#ifndef TOY_MIX_H
#define TOY_MIX_H
void toy_mix(unsigned char *out, const unsigned char *in, unsigned long long n, int rounds);
#endif
