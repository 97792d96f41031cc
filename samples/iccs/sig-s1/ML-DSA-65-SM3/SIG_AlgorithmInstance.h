/* ML-DSA-65, symmetric primitives: SHAKE128/SHAKE256 -> pseudoXOF.
 * Randomness: get_random_number(&drng_algorithm, ...) through ../../common/randombytes.h. */
#ifndef SIG_ALGORITHMINSTANCE_H
#define SIG_ALGORITHMINSTANCE_H

#define ALGORITHM_INSTANCE "ML_DSA_65_SM3"
/* The PQClean parameter set sig_adapter.c calls. */
#define SIG_S1_NAMESPACE PQCLEAN_MLDSA65_CLEAN

/* OUTPUT_BLANK_TEST_VECTORS and the API prototypes, shared by every instance (../../common). */
#include "iccs_sig_api.h"

#endif
