/* Hash/XOF/DRNG profiling wrappers (reference-harness.md §5.2), linked into a copy of an
 * instance's library with -Wl,--wrap=<symbol>. One translation unit: the core below, then
 * the per-instance list NGCC_PROF_FNS(X) from the generated ngcc_prof_wraps.h, one entry
 * X(id, symbol, "fn", SHAPE, param) per wrapped symbol.
 *
 * Accounting runs only while the driver has enabled it, and only for the outermost wrapped
 * call (a helper calling another wrapped helper is timed once, as the outer one). The child
 * is single-threaded, so plain statics are enough (C99 has no thread-local storage). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime under -std=c99 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "ngcc_prof_wraps.h"

#define NGCC_PROF_EXPORT __attribute__((visibility("default")))
#define NGCC_PROF_SLOTS 8192u
/* Linear probing gives up after this many slots: a full or clustered table counts the call
 * in overflow_calls instead of scanning 8192 slots per call. */
#define NGCC_PROF_MAX_PROBE 256u

/* ------------------------------------------------------------------ tick source */
#if defined(__x86_64__) || defined(__i386__)
static const char ngcc_prof_source[] = "rdtsc";
static __inline__ uint64_t ngcc_prof_tick(void) {
    uint32_t lo, hi;
    __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
    return ((uint64_t)hi << 32) | lo;
}
#elif defined(__aarch64__)
static const char ngcc_prof_source[] = "cntvct_el0";
static __inline__ uint64_t ngcc_prof_tick(void) {
    uint64_t v;
    __asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v) : : "memory");
    return v;
}
#else
static const char ngcc_prof_source[] = "clock_gettime_ns";
static __inline__ uint64_t ngcc_prof_tick(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#endif

/* ------------------------------------------------------------------ call table */
typedef struct {
    uint64_t in_bits;
    uint64_t out_bits;
    uint64_t calls;
    uint64_t ticks;
    uint32_t fn;
    uint32_t used;
} ngcc_prof_slot_t;

/* What ngcc_prof_entries copies out (mirrored in src/child/profile.rs). */
typedef struct {
    const char *fn;
    uint64_t in_bits;
    uint64_t out_bits;
    uint64_t calls;
    uint64_t ticks;
} ngcc_prof_entry_t;

static ngcc_prof_slot_t ngcc_prof_table[NGCC_PROF_SLOTS];
static uint64_t ngcc_prof_overflow;

/* Journal of the current operation's records, so the driver can take back an operation that
 * was disturbed (preempted) instead of keeping its inflated ticks. Slot index per record;
 * NGCC_PROF_SLOTS marks an overflowed call. A longer operation cannot be taken back. */
#define NGCC_PROF_JOURNAL 65536u
static uint32_t ngcc_prof_journal_slot[NGCC_PROF_JOURNAL];
static uint64_t ngcc_prof_journal_dt[NGCC_PROF_JOURNAL];
static uint32_t ngcc_prof_journal_n;
static int ngcc_prof_journal_full;

static void ngcc_prof_journal(uint32_t slot, uint64_t dt) {
    if (ngcc_prof_journal_n < NGCC_PROF_JOURNAL) {
        ngcc_prof_journal_slot[ngcc_prof_journal_n] = slot;
        ngcc_prof_journal_dt[ngcc_prof_journal_n] = dt;
        ngcc_prof_journal_n++;
    } else {
        ngcc_prof_journal_full = 1;
    }
}
static volatile int ngcc_prof_on;
static int ngcc_prof_depth;

#define NGCC_PROF_NAME(id, sym, name, shape, param) name,
/* The probe (last id) measures the wrappers' own cost; "" keeps the array non-empty. */
static const char *const ngcc_prof_names[] = {NGCC_PROF_FNS(NGCC_PROF_NAME) "ngcc_prof_probe", ""};
#define NGCC_PROF_PROBE_ID ((uint32_t)(sizeof ngcc_prof_names / sizeof ngcc_prof_names[0] - 2u))

static void ngcc_prof_record(uint32_t fn, uint64_t in_bits, uint64_t out_bits, uint64_t dt) {
    uint64_t h = in_bits * 0x9E3779B97F4A7C15ull ^ out_bits * 0xC2B2AE3D27D4EB4Full ^
                 (uint64_t)(fn + 1u) * 0x165667B19E3779F9ull;
    uint32_t i = (uint32_t)(h >> 51) & (NGCC_PROF_SLOTS - 1u);
    uint32_t n;
    for (n = 0; n < NGCC_PROF_MAX_PROBE; n++) {
        uint32_t k = (i + n) & (NGCC_PROF_SLOTS - 1u);
        ngcc_prof_slot_t *s = &ngcc_prof_table[k];
        if (!s->used) {
            s->used = 1;
            s->fn = fn;
            s->in_bits = in_bits;
            s->out_bits = out_bits;
            s->calls = 1;
            s->ticks = dt;
            ngcc_prof_journal(k, dt);
            return;
        }
        if (s->fn == fn && s->in_bits == in_bits && s->out_bits == out_bits) {
            s->calls += 1;
            s->ticks += dt;
            ngcc_prof_journal(k, dt);
            return;
        }
    }
    ngcc_prof_overflow += 1;
    ngcc_prof_journal(NGCC_PROF_SLOTS, 0);
}

/* ------------------------------------------------------------------ wrapper shapes */
/* Every wrapper and every __real_ declaration returns int whatever the real return type:
 * the int-returning copies (randombytes, the ICCS helpers, some private fips202 copies) get
 * their value forwarded in rax/x0, and callers of void functions ignore it. The real
 * prototypes are declared here, not taken from the candidate's headers, so one file serves
 * every candidate; pointer and size_t arguments pass in the same registers whatever their
 * declared pointee type. */
#define NGCC_PROF_CAT(a, b) a##b
#define NGCC_PROF_REAL(sym) NGCC_PROF_CAT(__real_, sym)
#define NGCC_PROF_WRAP(sym) NGCC_PROF_CAT(__wrap_, sym)

/* Untimed when disabled or nested; otherwise ticks around the real call, then the record
 * (outside the timed window, but inside the operation: see ngcc_prof_overhead). */
#define NGCC_PROF_BODY(id, call, in_bits, out_bits)                                        \
    uint64_t t0_, t1_;                                                                     \
    int r_;                                                                                \
    if (!ngcc_prof_on || ngcc_prof_depth) {                                                \
        return call;                                                                       \
    }                                                                                      \
    ngcc_prof_depth = 1;                                                                   \
    t0_ = ngcc_prof_tick();                                                                \
    r_ = call;                                                                             \
    t1_ = ngcc_prof_tick();                                                                \
    ngcc_prof_depth = 0;                                                                   \
    ngcc_prof_record((uint32_t)(id), (uint64_t)(in_bits), (uint64_t)(out_bits), t1_ - t0_); \
    return r_;

#define NGCC_PROF_DEF(sym, params) \
    int NGCC_PROF_REAL(sym) params; \
    int NGCC_PROF_WRAP(sym) params; \
    int NGCC_PROF_WRAP(sym) params

/* One-shot XOF: f(out, outlen, in, inlen). */
#define NGCC_PROF_W_XOF(id, sym, p)                                                        \
    NGCC_PROF_DEF(sym, (void *out, size_t outlen, const void *in, size_t inlen)) {         \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, outlen, in, inlen), 8u * (uint64_t)inlen, \
                       8u * (uint64_t)outlen)                                              \
    }
/* One-shot hash with a fixed digest of p bits: f(out, in, inlen). */
#define NGCC_PROF_W_HASH(id, sym, p)                                                     \
    NGCC_PROF_DEF(sym, (void *out, const void *in, size_t inlen)) {                      \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, in, inlen), 8u * (uint64_t)inlen, p) \
    }
/* Absorb into a state: f(state, in, inlen). */
#define NGCC_PROF_W_ABSORB(id, sym, p)                                                     \
    NGCC_PROF_DEF(sym, (void *st, const void *in, size_t inlen)) {                         \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(st, in, inlen), 8u * (uint64_t)inlen, 0u)   \
    }
/* Squeeze whole blocks of p bytes: f(out, nblocks, state). */
#define NGCC_PROF_W_BLOCKS_OUT(id, sym, p)                                                      \
    NGCC_PROF_DEF(sym, (void *out, size_t nblocks, void *st)) {                                 \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, nblocks, st), 0u, 8u * (uint64_t)(p) * nblocks) \
    }
/* Squeeze bytes: f(out, outlen, state). */
#define NGCC_PROF_W_SQUEEZE(id, sym, p)                                                    \
    NGCC_PROF_DEF(sym, (void *out, size_t outlen, void *st)) {                             \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, outlen, st), 0u, 8u * (uint64_t)outlen) \
    }
/* State only (init, finalize, release): f(state). */
#define NGCC_PROF_W_STATE(id, sym, p)                                  \
    NGCC_PROF_DEF(sym, (void *st)) {                                   \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(st), 0u, 0u)            \
    }
/* Two pointers, p input bits (clone: 0; AES key expansion: the key bits): f(a, b). */
#define NGCC_PROF_W_TWO_PTR(id, sym, p)                                \
    NGCC_PROF_DEF(sym, (void *a, const void *b)) {                     \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(a, b), p, 0u)           \
    }
/* Digest of p bits out of a state: f(out, state). */
#define NGCC_PROF_W_DIGEST_OUT(id, sym, p)                             \
    NGCC_PROF_DEF(sym, (void *out, void *st)) {                        \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, st), 0u, p)        \
    }
/* Whole input blocks of p bytes: f(state, in, nblocks). */
#define NGCC_PROF_W_BLOCKS_IN(id, sym, p)                                                        \
    NGCC_PROF_DEF(sym, (void *st, const void *in, size_t nblocks)) {                             \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(st, in, nblocks), 8u * (uint64_t)(p) * nblocks, 0u) \
    }
/* SHA-2 finalize with the tail: f(out, state, in, inlen), p digest bits. */
#define NGCC_PROF_W_SHA2_FINAL(id, sym, p)                                                         \
    NGCC_PROF_DEF(sym, (void *out, void *st, const void *in, size_t inlen)) {                      \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, st, in, inlen), 8u * (uint64_t)inlen, p)       \
    }
/* AES ECB: f(out, in, nblocks, ctx), 128-bit blocks in and out. */
#define NGCC_PROF_W_ECB(id, sym, p)                                                             \
    NGCC_PROF_DEF(sym, (void *out, const void *in, size_t nblocks, const void *ctx)) {          \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, in, nblocks, ctx), 128u * (uint64_t)nblocks, \
                       128u * (uint64_t)nblocks)                                                \
    }
/* AES CTR keystream: f(out, outlen, iv, ctx). */
#define NGCC_PROF_W_CTR(id, sym, p)                                                           \
    NGCC_PROF_DEF(sym, (void *out, size_t outlen, const void *iv, const void *ctx)) {         \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, outlen, iv, ctx), 0u, 8u * (uint64_t)outlen) \
    }
/* randombytes(out, n). */
#define NGCC_PROF_W_RNG(id, sym, p)                                              \
    NGCC_PROF_DEF(sym, (void *out, size_t n)) {                                  \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out, n), 0u, 8u * (uint64_t)n)    \
    }
/* sm3hash / pseudohash(int digest_bits, msg, msg_bits, digest). */
#define NGCC_PROF_W_ICCS_HASH(id, sym, p)                                                     \
    NGCC_PROF_DEF(sym, (int out_bits, const unsigned char *msg, unsigned long long in_bits,   \
                        unsigned char *out)) {                                                \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out_bits, msg, in_bits, out), in_bits,         \
                       out_bits < 0 ? 0u : (uint64_t)out_bits)                                \
    }
/* pseudoXOF(out_bits, msg, msg_bits, out). */
#define NGCC_PROF_W_ICCS_XOF(id, sym, p)                                                          \
    NGCC_PROF_DEF(sym, (unsigned long long out_bits, const unsigned char *msg,                    \
                        unsigned long long in_bits, unsigned char *out)) {                        \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(out_bits, msg, in_bits, out), in_bits, out_bits)   \
    }
/* get_random_number(ctx, out, bits), recorded as fn "drng". */
#define NGCC_PROF_W_DRNG(id, sym, p)                                                         \
    NGCC_PROF_DEF(sym, (void *ctx, unsigned char *out, unsigned long long bits)) {           \
        NGCC_PROF_BODY(id, NGCC_PROF_REAL(sym)(ctx, out, bits), 0u, bits)                    \
    }

#define NGCC_PROF_DEFINE(id, sym, name, shape, param) NGCC_PROF_W_##shape(id, sym, param)
NGCC_PROF_FNS(NGCC_PROF_DEFINE)

/* ------------------------------------------------------------------ overhead probe */
/* An empty function reached like a wrapped helper: __wrap_ngcc_prof_probe has exactly the
 * body every wrapper has, and calls this out-of-line "real" function. */
int __real_ngcc_prof_probe(void *out, size_t n) __attribute__((noinline));
int __real_ngcc_prof_probe(void *out, size_t n) {
    __asm__ __volatile__("" : : "r"(out), "r"(n) : "memory");
    return 0;
}
NGCC_PROF_W_RNG(NGCC_PROF_PROBE_ID, ngcc_prof_probe, 0)

typedef int (*ngcc_prof_probe_fn)(void *, size_t);
/* Volatile pointers: the loops below cannot inline either function. */
static ngcc_prof_probe_fn volatile ngcc_prof_direct = __real_ngcc_prof_probe;
static ngcc_prof_probe_fn volatile ngcc_prof_wrapped = __wrap_ngcc_prof_probe;

/* ------------------------------------------------------------------ exported interface */
NGCC_PROF_EXPORT const char *ngcc_prof_tick_source(void) { return ngcc_prof_source; }

NGCC_PROF_EXPORT uint64_t ngcc_prof_ticks(void) { return ngcc_prof_tick(); }

NGCC_PROF_EXPORT void ngcc_prof_enable(int on) { ngcc_prof_on = on != 0; }

NGCC_PROF_EXPORT void ngcc_prof_reset(void) {
    memset(ngcc_prof_table, 0, sizeof ngcc_prof_table);
    ngcc_prof_overflow = 0;
    ngcc_prof_depth = 0;
    ngcc_prof_journal_n = 0;
    ngcc_prof_journal_full = 0;
}

/* Starts an operation's journal. */
NGCC_PROF_EXPORT void ngcc_prof_mark(void) {
    ngcc_prof_journal_n = 0;
    ngcc_prof_journal_full = 0;
}

/* Takes back every record since ngcc_prof_mark; 0 when the journal overflowed (nothing
 * taken back), else 1. Emptied slots stay claimed (probe chains) and are not reported. */
NGCC_PROF_EXPORT int ngcc_prof_rollback(void) {
    uint32_t j;
    if (ngcc_prof_journal_full) {
        return 0;
    }
    for (j = 0; j < ngcc_prof_journal_n; j++) {
        uint32_t k = ngcc_prof_journal_slot[j];
        if (k == NGCC_PROF_SLOTS) {
            ngcc_prof_overflow -= 1;
        } else {
            ngcc_prof_table[k].calls -= 1;
            ngcc_prof_table[k].ticks -= ngcc_prof_journal_dt[j];
        }
    }
    ngcc_prof_journal_n = 0;
    return 1;
}

/* Copies up to cap used slots (table order) and returns how many are used in all. */
NGCC_PROF_EXPORT size_t ngcc_prof_entries(ngcc_prof_entry_t *out, size_t cap, uint64_t *overflow_calls) {
    size_t i, n = 0;
    for (i = 0; i < NGCC_PROF_SLOTS; i++) {
        const ngcc_prof_slot_t *s = &ngcc_prof_table[i];
        if (!s->used || s->calls == 0) {
            continue;
        }
        if (n < cap) {
            out[n].fn = ngcc_prof_names[s->fn];
            out[n].in_bits = s->in_bits;
            out[n].out_bits = s->out_bits;
            out[n].calls = s->calls;
            out[n].ticks = s->ticks;
        }
        n++;
    }
    if (overflow_calls) {
        *overflow_calls = ngcc_prof_overflow;
    }
    return n;
}

/* One overhead round of n calls each: out[0] = ticks of n direct calls of the empty probe,
 * out[1] = ticks of n calls through its enabled wrapper, out[2] = ticks the wrapper recorded
 * for those calls (what a helper's own ticks include besides its work). Resets the table. */
NGCC_PROF_EXPORT void ngcc_prof_overhead(uint64_t n, uint64_t out[3]) {
    uint64_t i, t0, t1;
    unsigned char sink = 0;
    uint64_t overflow;
    ngcc_prof_entry_t e;
    ngcc_prof_reset();
    t0 = ngcc_prof_tick();
    for (i = 0; i < n; i++) {
        ngcc_prof_direct(&sink, 0);
    }
    t1 = ngcc_prof_tick();
    out[0] = t1 - t0;
    ngcc_prof_on = 1;
    t0 = ngcc_prof_tick();
    for (i = 0; i < n; i++) {
        ngcc_prof_wrapped(&sink, 0);
    }
    t1 = ngcc_prof_tick();
    ngcc_prof_on = 0;
    out[1] = t1 - t0;
    out[2] = 0;
    if (ngcc_prof_entries(&e, 1, &overflow) == 1 && e.calls == n) {
        out[2] = e.ticks;
    }
    ngcc_prof_reset();
}
