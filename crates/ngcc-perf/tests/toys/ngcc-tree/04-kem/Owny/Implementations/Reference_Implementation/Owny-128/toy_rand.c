/* The package keeps the ICCS DRNG context itself (so its build needs own_drng_ctx). */
#include "drng.h"
#include "toy_rand.h"

DRNG_ctx drng_algorithm;

void toy_random(unsigned char *out, unsigned long long bytes)
{
    get_random_number(&drng_algorithm, out, 8 * bytes);
}
