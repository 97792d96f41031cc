/* The trust zoo's attacks on the time accounting and on our output (issue 33), one per
 * -D TRUST_* define; expected outcomes in tests/it/zoo_trust.rs. Each attack prints what it
 * tried as a `trust-<attack> …` line on stderr. Deliberately hostile; not cryptography. */
#ifndef TRUST_H
#define TRUST_H
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* Rounds of the mixing function: about 0.1 ms of work per operation. */
#ifndef TRUST_ROUNDS
#define TRUST_ROUNDS 100000L
#endif
/* The memoising instances do this many calls' work up front. */
#define TRUST_CACHED_CALLS 1500

/* Volatile: the compiler cannot fold the work into a constant. */
static volatile uint64_t trust_seed = 0x0123456789abcdefu;
void trust_work(unsigned char mask[32]);

#ifdef TRUST_HOME_ERROR
/* (d) a build error that quotes a host path: the build log must be published quarantined. */
#error /home/victim/.ssh/id_ed25519 is where the key lives
#endif

#if defined(TRUST_CTOR) || defined(TRUST_FIRST_CALL)
/* (c) the work of the next TRUST_CACHED_CALLS calls, done once and cached: the timed calls
 * only copy the cached mask. The outputs stay correct (the mask never changes). */
static unsigned char trust_cache[32];
static int trust_cached;
static void trust_fill(void) {
    for (int k = 0; k < TRUST_CACHED_CALLS; k++) {
        trust_work(trust_cache);
    }
    trust_cached = 1;
}
#endif

#ifdef TRUST_CTOR
__attribute__((constructor, used)) static void trust_ctor(void) {
    trust_fill();
}
#endif

#if defined(TRUST_TSC) && defined(__x86_64__)
/* (a) rdtsc faults after PR_SET_TSC(PR_TSC_SIGSEGV); the handler answers every rdtsc and
 * rdtscp (the harness's counter, the vDSO's clock) with a TSC that runs at half speed. */
#include <signal.h>
#include <sys/prctl.h>
#include <ucontext.h>
static uint64_t trust_tsc_base;
static uint64_t trust_rdtsc(void) {
    uint32_t lo, hi;
    __asm__ volatile("rdtsc" : "=a"(lo), "=d"(hi));
    return (uint64_t)hi << 32 | lo;
}
static void trust_segv(int sig, siginfo_t *si, void *ctx) {
    ucontext_t *uc = ctx;
    greg_t *r = uc->uc_mcontext.gregs;
    const unsigned char *ip = (const unsigned char *)r[REG_RIP];
    int len = 0;
    (void)sig;
    (void)si;
    if (ip[0] == 0x0f && ip[1] == 0x31) {
        len = 2;
    } else if (ip[0] == 0x0f && ip[1] == 0x01 && ip[2] == 0xf9) {
        len = 3;
        r[REG_RCX] = 0;
    }
    if (len == 0) {
        signal(SIGSEGV, SIG_DFL); /* a real fault: let it crash */
        return;
    }
    prctl(PR_SET_TSC, PR_TSC_ENABLE);
    uint64_t v = trust_tsc_base + (trust_rdtsc() - trust_tsc_base) / 2;
    prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
    r[REG_RAX] = (uint32_t)v;
    r[REG_RDX] = v >> 32;
    r[REG_RIP] += len;
}
static void trust_tsc(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = trust_segv;
    sa.sa_flags = SA_SIGINFO;
    sigaction(SIGSEGV, &sa, NULL);
    trust_tsc_base = trust_rdtsc();
    int rc = prctl(PR_SET_TSC, PR_TSC_SIGSEGV);
    fprintf(stderr, "trust-tsc prctl=%d (%s)\n", rc,
            rc ? strerror(errno) : "rdtsc runs at half speed");
    fflush(stderr);
}
#endif

#ifdef TRUST_GOT
/* (b) the harness's clock_gettime GOT slot (in the main program) pointed at a clock that
 * runs at half speed, for the wall clock and the process CPU clock alike. */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
static struct timespec trust_base[2];
static int trust_half_clock(clockid_t id, struct timespec *ts) {
    long rc = syscall(SYS_clock_gettime, id, ts);
    int k = id == CLOCK_MONOTONIC_RAW ? 0 : id == CLOCK_PROCESS_CPUTIME_ID ? 1 : -1;
    if (k >= 0 && trust_base[k].tv_sec) {
        double b = trust_base[k].tv_sec + trust_base[k].tv_nsec / 1e9;
        double s = b + (ts->tv_sec + ts->tv_nsec / 1e9 - b) / 2;
        ts->tv_sec = (time_t)s;
        ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
    }
    return (int)rc;
}
static int trust_patch_main(struct dl_phdr_info *info, size_t size, void *data) {
    int *patched = data;
    (void)size;
    if (info->dlpi_name[0] != '\0') {
        return 0; /* the main program has the empty name */
    }
    ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dyn = (ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        }
    }
    ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    ElfW(Rela) *rel[2] = {NULL, NULL};
    size_t relsz[2] = {0, 0};
    for (ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (ElfW(Sym) *)d->d_un.d_ptr; break;
        case DT_STRTAB: strtab = (const char *)d->d_un.d_ptr; break;
        case DT_JMPREL: rel[0] = (ElfW(Rela) *)d->d_un.d_ptr; break;
        case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
        case DT_RELA: rel[1] = (ElfW(Rela) *)d->d_un.d_ptr; break;
        case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
        }
    }
    for (int k = 0; k < 2 && symtab && strtab; k++) {
        for (size_t i = 0; rel[k] && i < relsz[k] / sizeof(ElfW(Rela)); i++) {
            if (strcmp(strtab + symtab[ELF64_R_SYM(rel[k][i].r_info)].st_name, "clock_gettime")) {
                continue;
            }
            void **slot = (void **)(info->dlpi_addr + rel[k][i].r_offset);
            uintptr_t page = (uintptr_t)slot & ~(uintptr_t)4095;
            if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) == 0) {
                *slot = (void *)trust_half_clock;
                (*patched)++;
            }
        }
    }
    return 1;
}
static void trust_got(void) {
    int patched = 0;
    Dl_info me;
    /* Stay mapped after the harness's dlclose: the slot keeps pointing here. */
    if (dladdr((void *)trust_half_clock, &me) && me.dli_fname) {
        dlopen(me.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    }
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC_RAW, &trust_base[0]);
    syscall(SYS_clock_gettime, CLOCK_PROCESS_CPUTIME_ID, &trust_base[1]);
    dl_iterate_phdr(trust_patch_main, &patched);
    fprintf(stderr, "trust-got patched=%d\n", patched);
    fflush(stderr);
}
#endif

/* The mask every operation needs: computed (the work), or taken from the cache. */
static void trust_mask(unsigned char mask[32]) {
    static int calls;
    calls++;
#if defined(TRUST_TSC) && defined(__x86_64__)
    if (calls == 1) {
        trust_tsc();
    }
#endif
#ifdef TRUST_GOT
    if (calls == 1) {
        trust_got();
    }
#endif
#ifdef TRUST_LEAK
    /* (d) a host path in the candidate's own output (KAT log, record stderr). */
    if (calls == 1) {
        fprintf(stderr, "trust-leak read /home/victim/.ssh/id_ed25519 and /root/secret.txt\n");
        fflush(stderr);
    }
#endif
#ifdef TRUST_ANSI
    /* (e) terminal control bytes (OSC window title, clear screen, colour) and markup. */
    if (calls == 1) {
        fprintf(stderr, "trust-ansi \033]0;pwned\007\033[2J\033[31mred\033[0m | <b>bold</b>\n");
        fflush(stderr);
    }
#endif
#if defined(TRUST_CTOR) || defined(TRUST_FIRST_CALL)
    if (!trust_cached) {
        trust_fill();
    }
    memcpy(mask, trust_cache, 32);
#else
    trust_work(mask);
#endif
}

#endif
