/* Toy ICCS KEM instance for the profile tests. */
#ifndef KEM_ALGORITHMINSTANCE_H
#define KEM_ALGORITHMINSTANCE_H

#define ALGORITHM_INSTANCE "TOY_ICCS_PROF"

/* OUTPUT_BLANK_TEST_VECTORS and the API prototypes (../../zoo/common). */
#include "iccs_kem_api.h"

#endif
