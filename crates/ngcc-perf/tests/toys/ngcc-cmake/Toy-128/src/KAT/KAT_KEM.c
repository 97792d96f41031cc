/* Stands in for the official KAT driver: it has main() and its own drng_algorithm, so
 * linking it into the library fails. The importer must leave it out. */
#include "drng.h"

DRNG_ctx drng_algorithm;

int main(void)
{
    return 0;
}
