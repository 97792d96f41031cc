/* ML-DSA-65, symmetric primitives: PQClean's own FIPS 202 (SHAKE).
 * Randomness: get_random_number(&drng_algorithm, ...) through ../../common/randombytes.h. */
#ifndef SIG_ALGORITHMINSTANCE_H
#define SIG_ALGORITHMINSTANCE_H

#define ALGORITHM_INSTANCE "ML_DSA_65_SHAKE"
/* The PQClean parameter set sig_adapter.c calls. */
#define SIG_S1_NAMESPACE PQCLEAN_MLDSA65_CLEAN

/* OUTPUT_BLANK_TEST_VECTORS and the API prototypes, shared by every instance (../../common). */
#include "iccs_sig_api.h"

#endif
