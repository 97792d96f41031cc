/* Sample-owned randombytes.h for PQClean code inside ICCS candidates. It shadows PQClean's
 * header (which renames the symbol to PQCLEAN_randombytes): the include path lists this
 * folder first. */
#ifndef NGCC_SAMPLES_RANDOMBYTES_H
#define NGCC_SAMPLES_RANDOMBYTES_H

#include <stddef.h>
#include <stdint.h>

/* Exactly one get_random_number(&drng_algorithm, output, 8 * n) per call. */
int randombytes(uint8_t *output, size_t n);

#endif
