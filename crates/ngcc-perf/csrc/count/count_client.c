/* callgrind client requests for the count phase's job (child/count.rs). Collection itself is
 * switched by callgrind's --toggle-collect on the shim's entry point of the counted operation
 * (ngcc_kem_enc, …), so only the library call is counted; these requests start the
 * instrumentation before the library is loaded and dump the counters (which zeroes them)
 * after the warm-up calls and after each counted call.
 * Built with the system's valgrind/callgrind.h when it is there; without it every call is a
 * no-op and ngcc_count_client_available() says 0, so the job fails with a clear line. */
#ifdef NGCC_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#include <valgrind/valgrind.h>
#endif

int ngcc_count_client_available(void) {
#ifdef NGCC_HAVE_CALLGRIND
    return 1;
#else
    return 0;
#endif
}

unsigned ngcc_count_running_on_valgrind(void) {
#ifdef NGCC_HAVE_CALLGRIND
    return RUNNING_ON_VALGRIND;
#else
    return 0;
#endif
}

/* Starts instrumentation (the job runs with --instr-atstart=no): the worker's start-up is
 * translated without it, which is most of a short job's cost. */
void ngcc_count_start_instrumentation(void) {
#ifdef NGCC_HAVE_CALLGRIND
    CALLGRIND_START_INSTRUMENTATION;
#endif
}

/* Dumps (and zeroes) the counters; `name` becomes the dump's "Trigger" line. */
void ngcc_count_dump(const char *name) {
#ifdef NGCC_HAVE_CALLGRIND
    CALLGRIND_DUMP_STATS_AT(name);
#else
    (void)name;
#endif
}
