/* ML-KEM-512, symmetric primitives: PQClean's own FIPS 202 (SHAKE/SHA3).
 * Randomness: get_random_number(&drng_algorithm, ...) through ../../common/randombytes.h. */
#ifndef KEM_ALGORITHMINSTANCE_H
#define KEM_ALGORITHMINSTANCE_H

#define ALGORITHM_INSTANCE "ML_KEM_512_SHAKE"
/* The PQClean parameter set kem_adapter.c calls. */
#define KEM_S1_NAMESPACE PQCLEAN_MLKEM512_CLEAN

/* OUTPUT_BLANK_TEST_VECTORS and the API prototypes, shared by every instance (../../common). */
#include "iccs_kem_api.h"

#endif
