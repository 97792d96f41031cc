/* The uniform ABI every ngcc-perf library exports (only ngcc_* symbols are exported).
 * The metadata layout follows the reference harness (magic "NGGC", abi 1). */
#ifndef NGCC_SHIM_H
#define NGCC_SHIM_H

#include <stdint.h>

#define NGCC_MAGIC 0x4347474Eu
#define NGCC_ABI 1u
#define NGCC_NO_PASS (-100)

typedef struct {
    uint32_t magic;
    uint32_t abi;
    uint32_t type; /* 1 kem, 2 sig, 3 kex, 4 hash */
    uint32_t struct_size;
    char id[16];
    char algorithm[64];
    char instance[64];
    char variant[32];
    char source_dir[256];
    char compiler[64];
    char build_flags[128];
    /* kem: pk, sk, ct, ss; sig: pk, sk, sn; kex: passes, pk, sk, sta, stb, ss, total_msg;
     * hash: digest_bits, digest_len */
    uint64_t sizes[8];
} ngcc_meta_t;

#endif
