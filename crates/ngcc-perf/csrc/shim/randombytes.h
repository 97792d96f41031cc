/* Harness-owned randombytes.h: shadows PQClean's (which renames the symbol) so the
 * library calls the host-provided generator through the shim. */
#ifndef NGCC_RANDOMBYTES_H
#define NGCC_RANDOMBYTES_H
#include <stddef.h>
#include <stdint.h>
int randombytes(uint8_t *output, size_t n);
#endif
