/* Toy KEM with known memory use (the figures tests/it/memory_phase.rs expects):
 * sk random, pk = sk ^ 0x5c; ct = r ^ pk, ss = r[0..16] ^ pk[16..32]. Not cryptography. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "api.h"
#include "randombytes.h"

#ifdef ZOO_CTOR_ALLOC
static unsigned char *volatile zoo_table; /* volatile: gcc drops an unread malloc */
/* 1000 bytes allocated at load, before any operation, and kept. */
__attribute__((constructor)) static void zoo_ctor(void) { zoo_table = malloc(1000); }
#endif

int TOY_crypto_kem_keypair(unsigned char *pk, unsigned char *sk) {
    /* 4 KiB never freed: a leak of 4096 bytes per call. */
    volatile unsigned char *leak = malloc(4096);
    if (!leak) return -1;
    leak[0] = 1;
    randombytes(sk, 32);
    for (int i = 0; i < 32; i++) pk[i] = sk[i] ^ 0x5c;
    return 0;
}

int TOY_crypto_kem_enc(unsigned char *ct, unsigned char *ss, const unsigned char *pk) {
    unsigned char r[32];
    unsigned char *b[3];
    /* Three 64 KiB blocks live at once, then freed: peak 196608 bytes. */
    for (int i = 0; i < 3; i++) {
        b[i] = malloc(64 * 1024);
        if (!b[i]) return -1;
        memset(b[i], i, 64 * 1024);
    }
    randombytes(r, 32);
    for (int i = 0; i < 32; i++) ct[i] = r[i] ^ pk[i] ^ (unsigned char)(b[2][i] ^ 2);
    for (int i = 0; i < 16; i++) ss[i] = r[i] ^ pk[16 + i];
    for (int i = 0; i < 3; i++) free(b[i]);
#ifdef ZOO_FOREIGN_FREE
    /* A pointer libc allocated (strdup is not wrapped): freed here, never allocated here. */
    free(strdup("zoo"));
#endif
#ifdef ZOO_RAW_MMAP
    {
        /* 64 KiB mapped around the allocator and the mmap wrapper, then unmapped. */
        long p = syscall(SYS_mmap, 0L, 65536L, (long)(PROT_READ | PROT_WRITE),
                         (long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);
        if (p != -1) syscall(SYS_munmap, p, 65536L);
    }
#endif
    return 0;
}

/* A 100 KiB array on the stack, touched from end to end. */
static __attribute__((noinline)) unsigned char zoo_stack(const unsigned char *ct) {
    volatile unsigned char a[100 * 1024];
    unsigned char x = 0;
    for (size_t i = 0; i < sizeof a; i++) a[i] = (unsigned char)(ct[i % 32] + i);
    for (size_t i = 0; i < sizeof a; i += 4096) x ^= a[i];
    return x;
}

int TOY_crypto_kem_dec(unsigned char *ss, const unsigned char *ct, const unsigned char *sk) {
    /* 1 MiB from calloc, freed before returning. */
    unsigned char *big = calloc(1024, 1024);
    if (!big) return -1;
    big[1024 * 1024 - 1] = zoo_stack(ct);
    for (int i = 0; i < 16; i++)
        ss[i] = (unsigned char)(ct[i] ^ sk[i] ^ 0x5c ^ sk[16 + i] ^ 0x5c ^ (big[i] & 0));
    free(big);
    return 0;
}
