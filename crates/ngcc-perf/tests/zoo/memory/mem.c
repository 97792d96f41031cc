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

#ifdef ZOO_RAW_ASM
static long zoo_raw6(long nr, long a0, long a1, long a2, long a3, long a4, long a5) {
#if defined(__x86_64__)
    register long r10 __asm__("r10") = a3;
    register long r8 __asm__("r8") = a4;
    register long r9 __asm__("r9") = a5;
    long ret;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(nr), "D"(a0), "S"(a1), "d"(a2), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
#elif defined(__aarch64__)
    register long x8 __asm__("x8") = nr;
    register long x0 __asm__("x0") = a0;
    register long x1 __asm__("x1") = a1;
    register long x2 __asm__("x2") = a2;
    register long x3 __asm__("x3") = a3;
    register long x4 __asm__("x4") = a4;
    register long x5 __asm__("x5") = a5;
    __asm__ volatile("svc #0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
#else
    return syscall(nr, a0, a1, a2, a3, a4, a5);
#endif
}
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
#ifdef ZOO_RAW_ASM
    {
        /* The same 64 KiB through the syscall instruction itself: no libc function at all. */
        long p = zoo_raw6(SYS_mmap, 0L, 65536L, (long)(PROT_READ | PROT_WRITE),
                          (long)(MAP_PRIVATE | MAP_ANONYMOUS), -1L, 0L);
        if (p > 0) zoo_raw6(SYS_munmap, p, 65536L, 0L, 0L, 0L, 0L);
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
