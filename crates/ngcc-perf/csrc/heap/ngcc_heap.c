/* Heap recorder of the memory phase (issue 36), linked into a copy of an instance's library
 * with -Wl,--wrap=<symbol> for every allocator entry point below. Only the instance's own
 * objects are relinked, so only the candidate's calls come here: the harness's allocations,
 * libc's internal ones and the loader's never do.
 *
 * The driver (src/child/heap.rs) calls ngcc_heap_loaded() after dlopen: every allocation
 * before it was made by a library constructor. Around one call of an operation it calls
 * ngcc_heap_begin() and ngcc_heap_end(); blocks are tagged with the call's generation, so a
 * block left by an earlier call and freed in this one lowers nothing this call counts.
 * The child is single-threaded, so plain statics are enough (C99 has no thread-local
 * storage). The live-block table lives in anonymous mappings of its own (taken with the real
 * mmap), never on the heap it watches.
 *
 * The ICCS helper files (drng.c, auxfunc.c: the package's copies or the official ones) are
 * relinked with their allocator calls renamed to ngcc_heap_h_* (objcopy --redefine-sym), so
 * their blocks are counted apart: the algorithm's figures are the algorithm's alone. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

#define NGCC_HEAP_EXPORT __attribute__((visibility("default")))

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void *__real_reallocarray(void *p, size_t n, size_t m);
void __real_free(void *p);
int __real_posix_memalign(void **p, size_t a, size_t n);
void *__real_aligned_alloc(size_t a, size_t n);
void *__real_memalign(size_t a, size_t n);
void *__real_valloc(size_t n);
void *__real_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off);
int __real_munmap(void *a, size_t n);
long __real_syscall(long nr, ...);

/* The counters ngcc_heap_stats copies out, in this order (mirrored in src/child/heap.rs). */
enum {
    /* Whole process. */
    S_LOAD_ALLOCATIONS,  /* allocations before ngcc_heap_loaded (library constructors) */
    S_LOAD_BYTES,
    S_OUTSIDE_ALLOCATIONS, /* allocations between counted calls (setup, seeding) */
    S_OUTSIDE_BYTES,
    S_FOREIGN_FREES_TOTAL, /* frees of pointers the library never got from an allocator */
    S_TABLE_FAILURES,      /* blocks the table could not hold (figures incomplete) */
    S_RAW_SYSCALLS_TOTAL,  /* syscall(2) for brk/mmap/mremap/munmap */
    /* The last counted call. */
    S_ALLOCATIONS,
    S_ALLOCATED_BYTES,
    S_PEAK_LIVE_BYTES,
    S_LIVE_BYTES, /* bytes allocated in the call and not freed (after end: the leak) */
    S_LIVE_BLOCKS,
    S_FREES,
    S_FREES_OF_EARLIER, /* blocks allocated before the call, freed in it */
    S_FOREIGN_FREES,
    S_MMAP_CALLS, /* anonymous mmap (also counted as allocations) */
    S_MMAP_BYTES,
    S_UNTRACKED_MUNMAPS, /* munmap of a region no wrapped mmap returned */
    S_RAW_SYSCALLS,
    S_RAW_BYTES, /* anonymous mmap lengths and brk growth those asked for */
    /* The ICCS helper files' own blocks in the last counted call. */
    S_H_ALLOCATIONS,
    S_H_ALLOCATED_BYTES,
    S_H_PEAK_LIVE_BYTES,
    S_H_LIVE_BYTES,
    S_COUNT
};

static uint64_t st[S_COUNT];
/* 0 while loading, 1 between calls, 2 inside a counted call. */
static int phase;
static uint32_t generation;

/* ------------------------------------------------------------------ live-block table */
#define EMPTY ((uintptr_t)0)
#define GONE ((uintptr_t)1)
#define F_MMAP 1u
#define F_HELPER 2u

/* 1 while a helper file's allocator call is in progress (see ngcc_heap_h_*). */
static int helper;

typedef struct {
    uintptr_t key;
    uint64_t size;
    uint32_t gen; /* 0: allocated outside any counted call */
    uint32_t flags;
} slot_t;

static slot_t *tab;
static size_t cap;  /* power of two */
static size_t used; /* live + tombstones */

static size_t hash(uintptr_t p) {
    uint64_t x = (uint64_t)p >> 4;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x & (cap - 1);
}

static int grow(void) {
    size_t ncap = cap ? cap * 2 : (size_t)1 << 14;
    slot_t *n = __real_mmap(NULL, ncap * sizeof(slot_t), PROT_READ | PROT_WRITE,
                            MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    size_t i, ocap = cap;
    slot_t *old = tab;
    if (n == MAP_FAILED) return 0;
    tab = n;
    cap = ncap;
    used = 0;
    for (i = 0; i < ocap; i++) {
        if (old[i].key > GONE) {
            size_t j = hash(old[i].key);
            while (tab[j].key != EMPTY) j = (j + 1) & (cap - 1);
            tab[j] = old[i];
            used++;
        }
    }
    if (old) __real_munmap(old, ocap * sizeof(slot_t));
    return 1;
}

static slot_t *find(const void *p) {
    size_t j;
    if (!cap) return NULL;
    j = hash((uintptr_t)p);
    while (tab[j].key != EMPTY) {
        if (tab[j].key == (uintptr_t)p) return &tab[j];
        j = (j + 1) & (cap - 1);
    }
    return NULL;
}

/* Records a new block (p non-null) of n bytes. */
static void record(void *p, uint64_t n, uint32_t flags) {
    size_t j;
    if ((used + 1) * 2 > cap && !grow()) {
        st[S_TABLE_FAILURES]++;
        return;
    }
    j = hash((uintptr_t)p);
    while (tab[j].key > GONE) j = (j + 1) & (cap - 1);
    if (tab[j].key == EMPTY) used++;
    tab[j].key = (uintptr_t)p;
    tab[j].size = n;
    tab[j].gen = phase == 2 ? generation : 0;
    if (helper) flags |= F_HELPER;
    tab[j].flags = flags;
    if (phase == 0) {
        st[S_LOAD_ALLOCATIONS]++;
        st[S_LOAD_BYTES] += n;
    } else if (phase == 1) {
        st[S_OUTSIDE_ALLOCATIONS]++;
        st[S_OUTSIDE_BYTES] += n;
    } else if (helper) {
        st[S_H_ALLOCATIONS]++;
        st[S_H_ALLOCATED_BYTES] += n;
        st[S_H_LIVE_BYTES] += n;
        if (st[S_H_LIVE_BYTES] > st[S_H_PEAK_LIVE_BYTES])
            st[S_H_PEAK_LIVE_BYTES] = st[S_H_LIVE_BYTES];
    } else {
        st[S_ALLOCATIONS]++;
        st[S_ALLOCATED_BYTES] += n;
        st[S_LIVE_BYTES] += n;
        st[S_LIVE_BLOCKS]++;
        if (st[S_LIVE_BYTES] > st[S_PEAK_LIVE_BYTES]) st[S_PEAK_LIVE_BYTES] = st[S_LIVE_BYTES];
    }
}

/* Forgets the block at s (freed, reallocated or unmapped). */
static void forget(slot_t *s) {
    if (phase == 2) {
        if (s->gen == generation && (s->flags & F_HELPER)) {
            st[S_H_LIVE_BYTES] -= s->size;
        } else if (s->gen == generation) {
            st[S_LIVE_BYTES] -= s->size;
            st[S_LIVE_BLOCKS]--;
        } else {
            st[S_FREES_OF_EARLIER]++;
        }
    }
    s->key = GONE;
}

/* A free or realloc of p: 1 if p was ours (now forgotten), 0 if null, -1 if foreign. */
static int release(void *p) {
    slot_t *s;
    if (!p) return 0;
    s = find(p);
    if (phase == 2) st[S_FREES]++;
    if (!s || (s->flags & F_MMAP)) {
        st[S_FOREIGN_FREES_TOTAL]++;
        if (phase == 2) st[S_FOREIGN_FREES]++;
        return -1;
    }
    forget(s);
    return 1;
}

/* ------------------------------------------------------------------ the wrappers */
void *__wrap_malloc(size_t n);
void *__wrap_malloc(size_t n) {
    void *p = __real_malloc(n);
    if (p) record(p, n, 0);
    return p;
}

void *__wrap_calloc(size_t n, size_t m);
void *__wrap_calloc(size_t n, size_t m) {
    void *p = __real_calloc(n, m);
    if (p) record(p, (uint64_t)n * m, 0);
    return p;
}

void *__wrap_realloc(void *p, size_t n);
void *__wrap_realloc(void *p, size_t n) {
    void *q = __real_realloc(p, n);
    /* realloc(p, 0) frees p and may return NULL; a failed realloc leaves p alone. */
    if (q || n == 0) release(p);
    if (q) record(q, n, 0);
    return q;
}

void *__wrap_reallocarray(void *p, size_t n, size_t m);
void *__wrap_reallocarray(void *p, size_t n, size_t m) {
    void *q = __real_reallocarray(p, n, m);
    if (q) {
        release(p);
        record(q, (uint64_t)n * m, 0);
    }
    return q;
}

void __wrap_free(void *p);
void __wrap_free(void *p) {
    release(p);
    __real_free(p);
}

int __wrap_posix_memalign(void **p, size_t a, size_t n);
int __wrap_posix_memalign(void **p, size_t a, size_t n) {
    int r = __real_posix_memalign(p, a, n);
    if (r == 0 && *p) record(*p, n, 0);
    return r;
}

void *__wrap_aligned_alloc(size_t a, size_t n);
void *__wrap_aligned_alloc(size_t a, size_t n) {
    void *p = __real_aligned_alloc(a, n);
    if (p) record(p, n, 0);
    return p;
}

void *__wrap_memalign(size_t a, size_t n);
void *__wrap_memalign(size_t a, size_t n) {
    void *p = __real_memalign(a, n);
    if (p) record(p, n, 0);
    return p;
}

void *__wrap_valloc(size_t n);
void *__wrap_valloc(size_t n) {
    void *p = __real_valloc(n);
    if (p) record(p, n, 0);
    return p;
}

static uint64_t pages(size_t n) {
    uint64_t pg = (uint64_t)sysconf(_SC_PAGESIZE);
    if (pg == 0 || pg > ((uint64_t)1 << 30)) pg = 4096;
    return ((uint64_t)n + pg - 1) / pg * pg;
}

void *__wrap_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off);
void *__wrap_mmap(void *a, size_t n, int prot, int flags, int fd, off_t off) {
    void *p = __real_mmap(a, n, prot, flags, fd, off);
    if (p != MAP_FAILED && (flags & MAP_ANONYMOUS)) {
        record(p, pages(n), F_MMAP);
        if (phase == 2) {
            st[S_MMAP_CALLS]++;
            st[S_MMAP_BYTES] += pages(n);
        }
    }
    return p;
}

int __wrap_munmap(void *a, size_t n);
int __wrap_munmap(void *a, size_t n) {
    int r = __real_munmap(a, n);
    slot_t *s = find(a);
    if (r == 0) {
        if (s && (s->flags & F_MMAP) && pages(n) >= s->size) {
            forget(s);
        } else if (s && (s->flags & F_MMAP)) {
            /* The head of a region: the rest stays mapped, and counted, under its start. */
            uint64_t gone = pages(n);
            if (phase == 2 && s->gen == generation) st[S_LIVE_BYTES] -= gone;
            s->size -= gone;
        } else if (phase == 2) {
            st[S_UNTRACKED_MUNMAPS]++;
        }
    }
    return r;
}

/* syscall(2) is how C reaches brk or mmap without the allocator: counted, not modelled. */
long __wrap_syscall(long nr, ...);
long __wrap_syscall(long nr, ...) {
    va_list ap;
    long a[6];
    int i;
    va_start(ap, nr);
    for (i = 0; i < 6; i++) a[i] = va_arg(ap, long);
    va_end(ap);
    if (nr == SYS_brk || nr == SYS_mmap || nr == SYS_mremap || nr == SYS_munmap) {
        st[S_RAW_SYSCALLS_TOTAL]++;
        if (phase == 2) {
            st[S_RAW_SYSCALLS]++;
            if (nr == SYS_mmap && (a[3] & MAP_ANONYMOUS)) {
                st[S_RAW_BYTES] += pages((size_t)a[1]);
            } else if (nr == SYS_brk) {
                long now = __real_syscall(SYS_brk, 0L);
                if (a[0] > now) st[S_RAW_BYTES] += (uint64_t)(a[0] - now);
            }
        }
    }
    return __real_syscall(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}

/* ------------------------------------------------------------------ the helpers' allocator */
#define NGCC_HEAP_HELPER(ret, name, params, args)   \
    ret ngcc_heap_h_##name params;                 \
    ret ngcc_heap_h_##name params {                \
        ret r;                                     \
        helper = 1;                                \
        r = __wrap_##name args;                    \
        helper = 0;                                \
        return r;                                  \
    }
NGCC_HEAP_HELPER(void *, malloc, (size_t n), (n))
NGCC_HEAP_HELPER(void *, calloc, (size_t n, size_t m), (n, m))
NGCC_HEAP_HELPER(void *, realloc, (void *p, size_t n), (p, n))
NGCC_HEAP_HELPER(void *, reallocarray, (void *p, size_t n, size_t m), (p, n, m))
NGCC_HEAP_HELPER(int, posix_memalign, (void **p, size_t a, size_t n), (p, a, n))
NGCC_HEAP_HELPER(void *, aligned_alloc, (size_t a, size_t n), (a, n))
NGCC_HEAP_HELPER(void *, memalign, (size_t a, size_t n), (a, n))
NGCC_HEAP_HELPER(void *, valloc, (size_t n), (n))

void ngcc_heap_h_free(void *p);
void ngcc_heap_h_free(void *p) {
    helper = 1;
    __wrap_free(p);
    helper = 0;
}

/* ------------------------------------------------------------------ the driver's side */
NGCC_HEAP_EXPORT void ngcc_heap_loaded(void);
NGCC_HEAP_EXPORT void ngcc_heap_loaded(void) {
    if (phase == 0) phase = 1;
}

NGCC_HEAP_EXPORT void ngcc_heap_begin(void);
NGCC_HEAP_EXPORT void ngcc_heap_begin(void) {
    memset(&st[S_ALLOCATIONS], 0, sizeof(uint64_t) * (S_COUNT - S_ALLOCATIONS));
    generation++;
    if (generation == 0) generation = 1;
    phase = 2;
}

NGCC_HEAP_EXPORT void ngcc_heap_end(void);
NGCC_HEAP_EXPORT void ngcc_heap_end(void) { phase = 1; }

/* Copies up to n counters into out; returns how many there are. */
NGCC_HEAP_EXPORT size_t ngcc_heap_stats(uint64_t *out, size_t n);
NGCC_HEAP_EXPORT size_t ngcc_heap_stats(uint64_t *out, size_t n) {
    size_t i;
    for (i = 0; i < n && i < S_COUNT; i++) out[i] = st[i];
    return S_COUNT;
}
