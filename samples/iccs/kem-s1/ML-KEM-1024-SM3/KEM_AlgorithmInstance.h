/* ML-KEM-1024, symmetric primitives: SHA3-256 -> sm3hash, SHA3-512 -> pseudohash, SHAKE -> pseudoXOF.
 * Randomness: get_random_number(&drng_algorithm, ...) through ../../common/randombytes.h. */
#ifndef KEM_ALGORITHMINSTANCE_H
#define KEM_ALGORITHMINSTANCE_H

#define ALGORITHM_INSTANCE "ML_KEM_1024_SM3"
/* The PQClean parameter set kem_adapter.c calls. */
#define KEM_S1_NAMESPACE PQCLEAN_MLKEM1024_CLEAN

/* OUTPUT_BLANK_TEST_VECTORS and the API prototypes, shared by every instance (../../common). */
#include "iccs_kem_api.h"

#endif
