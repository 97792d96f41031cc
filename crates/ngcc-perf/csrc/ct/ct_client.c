/* memcheck client requests for the ct phase's secret-taint job (child/ct.rs): mark a
 * secret's bytes undefined before a candidate operation and defined again after it, and
 * put markers into the XML log. Built with the system's valgrind/memcheck.h when it is
 * there; without it every call is a no-op and ngcc_ct_client_available() says 0, so a
 * taint job fails with a clear line instead of reporting zero sites. */
#include <stddef.h>
#ifdef NGCC_HAVE_MEMCHECK
#include <valgrind/memcheck.h>
#include <valgrind/valgrind.h>
#endif

int ngcc_ct_client_available(void) {
#ifdef NGCC_HAVE_MEMCHECK
    return 1;
#else
    return 0;
#endif
}

/* 1 when running under valgrind (the launcher's client request answers). */
unsigned ngcc_ct_running_on_valgrind(void) {
#ifdef NGCC_HAVE_MEMCHECK
    return RUNNING_ON_VALGRIND;
#else
    return 0;
#endif
}

void ngcc_ct_make_undefined(const void *p, size_t n) {
#ifdef NGCC_HAVE_MEMCHECK
    (void)VALGRIND_MAKE_MEM_UNDEFINED(p, n);
#else
    (void)p;
    (void)n;
#endif
}

void ngcc_ct_make_defined(const void *p, size_t n) {
#ifdef NGCC_HAVE_MEMCHECK
    (void)VALGRIND_MAKE_MEM_DEFINED(p, n);
#else
    (void)p;
    (void)n;
#endif
}

/* A line in the XML log (<clientmsg>), between the errors of two stages. */
void ngcc_ct_marker(const char *text) {
#ifdef NGCC_HAVE_MEMCHECK
    VALGRIND_PRINTF("%s\n", text);
#else
    (void)text;
#endif
}
