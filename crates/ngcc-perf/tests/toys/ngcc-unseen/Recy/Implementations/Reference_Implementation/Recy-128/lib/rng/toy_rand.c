/* Randomness from the ICCS DRNG context the KAT driver seeds (declared, not defined here). */
#include "drng.h"
#include "toy_rand.h"

extern DRNG_ctx drng_algorithm;

void toy_random(unsigned char *out, unsigned long long bytes)
{
    get_random_number(&drng_algorithm, out, 8 * bytes);
}
