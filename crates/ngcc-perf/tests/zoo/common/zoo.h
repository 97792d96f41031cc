/* Misbehaviours of the zoo's toy libraries (tests/zoo_campaign.rs), one per -D ZOO_* define,
 * shared by both API flavours. Each toy calls zoo_enter("keygen" | "enc" | "dec" | "sign")
 * at the start of an operation. Not cryptography; deliberately hostile. */
#ifndef ZOO_H
#define ZOO_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

/* Keeps the compiler from dropping allocations or loops that have no visible effect. */
static void *volatile zoo_sink;
/* NULL, but the compiler cannot know: a write through it is a real SIGSEGV, not UB it may
 * optimise away (GCC drops a constructor that visibly dereferences NULL). */
static unsigned char *volatile zoo_null;

#ifdef ZOO_CTOR_CRASH
__attribute__((constructor, used)) static void zoo_ctor(void) { *zoo_null = 1; }
#endif

#ifdef ZOO_BROKEN_SOURCE
this is not C
#endif

#ifdef ZOO_MISSING_SYMBOL
/* Declared, never defined: keygen calls it, so the library does not link. */
void toy_never_defined(void);
#endif

#ifdef ZOO_PROBE
/* Reports the sandbox as candidate code sees it, on stderr (the KAT log and the records
 * keep stderr). One line per fact; the test parses them. */
static void zoo_probe(void) {
    struct rlimit r;
    char cwd[4096];
    DIR *d = opendir("/proc/self/fd");
    fprintf(stderr, "zoo-probe fds=");
    if (d) {
        struct dirent *e;
        int first = 1;
        while ((e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.' || atoi(e->d_name) == dirfd(d)) {
                continue;
            }
            fprintf(stderr, "%s%s", first ? "" : ",", e->d_name);
            first = 0;
        }
        closedir(d);
    }
    fprintf(stderr, "\n");
    fprintf(stderr, "zoo-probe cwd=%s\n", getcwd(cwd, sizeof cwd) ? cwd : "?");
    getrlimit(RLIMIT_AS, &r);
    fprintf(stderr, "zoo-probe as=%llu\n", (unsigned long long)r.rlim_cur);
    getrlimit(RLIMIT_CPU, &r);
    fprintf(stderr, "zoo-probe cpu=%llu\n", (unsigned long long)r.rlim_cur);
    getrlimit(RLIMIT_CORE, &r);
    fprintf(stderr, "zoo-probe core=%llu\n", (unsigned long long)r.rlim_cur);
    /* Interfaces visible to us: only "lo" inside a fresh network namespace. */
    FILE *f = fopen("/proc/net/dev", "r");
    fprintf(stderr, "zoo-probe net=");
    if (f) {
        char line[512];
        int n = 0;
        while (fgets(line, sizeof line, f)) {
            char *colon = strchr(line, ':');
            char *name = line;
            if (!colon) {
                continue;
            }
            *colon = '\0';
            while (*name == ' ') {
                name++;
            }
            fprintf(stderr, "%s%s", n++ ? "," : "", name);
        }
        fclose(f);
    }
    fprintf(stderr, "\n");
    fflush(stderr);
}
#endif

__attribute__((unused)) static void zoo_enter(const char *op) {
    static int calls;
    calls++;
    (void)op;
#ifdef ZOO_PROBE
    if (calls == 1) {
        zoo_probe();
    }
#endif
#ifdef ZOO_MISSING_SYMBOL
    if (!strcmp(op, "keygen")) {
        toy_never_defined();
    }
#endif
#ifdef ZOO_CRASH_KEYGEN
    if (!strcmp(op, "keygen")) {
        *zoo_null = 1;
    }
#endif
#ifdef ZOO_ABORT_DEC
    if (!strcmp(op, "dec")) {
        abort();
    }
#endif
#ifdef ZOO_LOOP_ENC
    if (!strcmp(op, "enc")) {
        for (volatile unsigned long i = 0;; i++) {
        }
    }
#endif
#ifdef ZOO_MALLOC_KEYGEN
    /* A leak that never checks malloc: writes into every chunk, then through NULL. (Only
     * the first page of each chunk is touched: the limit is on address space, and faulting
     * in every page would only make the zoo slow.) */
    if (!strcmp(op, "keygen")) {
        for (;;) {
            unsigned char *p = malloc(32u << 20);
            if (p == NULL) {
                p = zoo_null; /* as if unchecked, without UB the compiler could exploit */
            }
            memset(p, 1, 4096);
            zoo_sink = p;
        }
    }
#endif
#ifdef ZOO_EXIT_KEYGEN
    if (!strcmp(op, "keygen")) {
        exit(0);
    }
#endif
#ifdef ZOO_STDOUT
    /* Chatty: a line per keygen, and once 200 kB, more than the harness keeps (64 KiB). */
    if (!strcmp(op, "keygen")) {
        printf("zoo: hello from keygen %d\n", calls);
        if (calls == 1) {
            for (int i = 0; i < 4000; i++) {
                printf("zoo: padding line %04d ..........................................\n", i);
            }
        }
        fflush(stdout);
    }
#endif
#ifdef ZOO_FORK
    /* Once per process: a child that would outlive us; it records its pid in the cwd. */
    if (calls == 1) {
        pid_t pid = fork();
        if (pid == 0) {
            sleep(600);
            _exit(0);
        }
        if (pid > 0) {
            FILE *f = fopen("zoo-fork.pid", "a");
            if (f) {
                fprintf(f, "%d\n", (int)pid);
                fclose(f);
            }
        }
    }
#endif
#ifdef ZOO_SLEEP_LONG
    if (!strcmp(op, "keygen")) {
        sleep(20);
    }
#endif
#ifdef ZOO_SLEEP_SHORT
    if (!strcmp(op, "keygen")) {
        usleep(100000);
    }
#endif
}

/* ZOO_NONDET: a byte that differs from run to run (the clock), never 0. */
__attribute__((unused)) static unsigned char zoo_noise(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned char)(ts.tv_nsec | 1);
}

#endif
