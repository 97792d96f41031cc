/* randombytes over the ICCS DRNG. One request = one DRNG call: the DRNG output depends on
 * the number of calls, so splitting or merging requests would change every KAT. */
#include "randombytes.h"

#include "drng.h"

extern DRNG_ctx drng_algorithm;

int randombytes(uint8_t *output, size_t n) {
    return get_random_number(&drng_algorithm, output, 8ULL * (unsigned long long)n);
}
