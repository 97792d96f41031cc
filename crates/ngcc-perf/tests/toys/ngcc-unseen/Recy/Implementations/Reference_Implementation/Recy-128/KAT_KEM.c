/* Stands in for the official KAT driver (third-party, not in this repository): a main()
 * and stand-ins for the DRNG the package does not ship, so the package's own build links
 * a KAT program. The importer leaves it out; the toy's kat.sha256 was computed with the
 * official driver over the toy's sources (tests/toys/ngcc-harness/README.md). */
#include <string.h>
#include "drng.h"

DRNG_ctx drng_algorithm;

int init_random_number(DRNG_ctx *drng, const unsigned char *seed, unsigned long long n)
{
    (void)seed;
    (void)n;
    memset(drng, 0, sizeof *drng);
    return 0;
}

int get_random_number(DRNG_ctx *drng, unsigned char *out, unsigned long long bits)
{
    (void)drng;
    memset(out, 0, (size_t)((bits + 7) / 8));
    return 0;
}

int main(void)
{
    return 0;
}
