#ifndef TOY_RAND_H
#define TOY_RAND_H
void toy_random(unsigned char *out, unsigned long long bytes);
#endif
