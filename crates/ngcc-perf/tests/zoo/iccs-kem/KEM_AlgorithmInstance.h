/* A toy ICCS-API KEM for the zoo (iccs-api.md §1.2): not cryptography. -D ZOO_* misbehaves. */
#ifndef KEM_ALGORITHMINSTANCE_H
#define KEM_ALGORITHMINSTANCE_H

#define ALGORITHM_INSTANCE "ZooToy_KEM"

/* OUTPUT_BLANK_TEST_VECTORS and the API prototypes (../common). */
#include "iccs_kem_api.h"

#endif
