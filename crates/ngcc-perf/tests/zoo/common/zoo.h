/* Misbehaviours of the zoo's toy libraries (tests/it/zoo_campaign.rs), one per -D ZOO_* define,
 * shared by both API flavours. Each toy calls zoo_enter("keygen" | "enc" | "dec" | "sign")
 * at the start of an operation. Not cryptography; deliberately hostile. */
#ifndef ZOO_H
#define ZOO_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
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


/* ------------------------------------------------------------------ hostile toys (issue 12)
 * Each prints what it tried, as `zoo-<attack> <what>: <outcome>` lines on stderr. */

#if defined(ZOO_FORGE_PASS) || defined(ZOO_FORGE_TRIAL) || defined(ZOO_FORGE_EXIT)
static void zoo_say(int fd, const char *s) {
    ssize_t n = write(fd, s, strlen(s));
    (void)n;
}
#endif

#ifdef ZOO_FORGE_PASS
/* A wrong KEM (keygen flips a bit, see toy.c) whose constructor claims the verdict. */
__attribute__((constructor, used)) static void zoo_forge_pass(void) {
    zoo_say(3, "{\"status\":\"PASS\"}\n");
}
#endif

#if defined(ZOO_FORGE_TRIAL) || defined(ZOO_FORGE_EXIT)
/* In a process with a saved setup (a trial), a forged 1 ns/op trial on the result pipe. */
static void zoo_forge_trial(void) {
    if (access("/job/setup/setup.json", F_OK) != 0) {
        return;
    }
    zoo_say(3, "{\"status\":\"complete\",\"trials\":[{\"measurements\":1000000,"
               "\"seconds\":0.001,\"cycles\":1000}],\"counter\":\"tsc\",\"ready_s\":0,"
               "\"prepare_s\":0,\"meta\":{}}\n");
#ifdef ZOO_FORGE_EXIT
    _exit(0);
#endif
}
#endif

#ifdef ZOO_ESCAPE
#ifndef ZOO_RUN_DIR
#define ZOO_RUN_DIR "/nonexistent-run"
#endif
/* Tries to overwrite another candidate's evidence and to write into its own source folder:
 * relative to its working directory (the old scratch folder was RUN/scratch/<job>), through
 * its parent's /proc cwd link, and by the run directory's absolute path. */
static void zoo_try_write(const char *what, const char *path) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
        fprintf(stderr, "zoo-escape %s %s: %s\n", what, path, strerror(errno));
        return;
    }
    ssize_t n = write(fd, "pwned\n", 6);
    (void)n;
    close(fd);
    fprintf(stderr, "zoo-escape %s %s: WROTE\n", what, path);
}
static void zoo_escape(void) {
    static const char *victims[] = {"lib/zoo-nist/libtoy-ok.so", "kat/zoo-nist/toy-ok.log",
                                    "build.json", "records/zoo-nist/toy-ok__keygen.json"};
    char path[4096];
    char src[4096];
    for (size_t i = 0; i < sizeof victims / sizeof victims[0]; i++) {
        snprintf(path, sizeof path, "../../%s", victims[i]);
        zoo_try_write("relative", path);
        snprintf(path, sizeof path, "/proc/%d/cwd/../../%s", (int)getppid(), victims[i]);
        zoo_try_write("proc-cwd", path);
        snprintf(path, sizeof path, "%s/%s", ZOO_RUN_DIR, victims[i]);
        zoo_try_write("absolute", path);
    }
    /* The source folder: this file's own folder (gcc got an absolute path). */
    snprintf(src, sizeof src, "%s", __FILE__);
    char *slash = strrchr(src, '/');
    if (slash) {
        *slash = '\0';
    }
    snprintf(path, sizeof path, "%s/zoo-pwned", src);
    zoo_try_write("source", path);
    snprintf(path, sizeof path, "/proc/%d/cwd/zoo-pwned", (int)getppid());
    zoo_try_write("source-proc-cwd", path);
    fflush(stderr);
}
#endif

#ifdef ZOO_PROC_MEM
static void zoo_proc_mem(void) {
    char path[64];
    int pids[] = {(int)getppid(), 1};
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "/proc/%d/mem", pids[i]);
        int fd = open(path, O_RDWR);
        fprintf(stderr, "zoo-procmem %s: %s\n", path, fd < 0 ? strerror(errno) : "OPENED");
        if (fd >= 0) {
            close(fd);
        }
    }
    fflush(stderr);
}
#endif

#ifdef ZOO_DAEMON
#ifndef ZOO_RUN_DIR
#define ZOO_RUN_DIR "/nonexistent-run"
#endif
/* Double fork + setsid: a daemon that outlives the job and, 3 s later, rewrites a victim's
 * record (consistently enough to look real). */
static void zoo_daemon(void) {
    pid_t pid = fork();
    if (pid == 0) {
        if (setsid() < 0) {
            fprintf(stderr, "zoo-daemon setsid: %s\n", strerror(errno));
        }
        pid_t g = fork();
        if (g == 0) {
            sleep(3);
            FILE *f = fopen(ZOO_RUN_DIR "/records/zoo-nist/toy-ok__keygen.json", "w");
            if (f) {
                fputs("{\"tampered\": true}\n", f);
                fclose(f);
            }
            _exit(0);
        }
        _exit(0);
    }
    fprintf(stderr, "zoo-daemon fork: %s\n", pid < 0 ? strerror(errno) : "OK");
    if (pid > 0) {
        waitpid(pid, NULL, 0);
    }
    fflush(stderr);
}
#endif

#ifdef ZOO_FORK200
static void zoo_fork200(void) {
    int ok = 0, err = 0;
    for (int i = 0; i < 200; i++) {
        pid_t p = fork();
        if (p == 0) {
            sleep(600);
            _exit(0);
        }
        if (p > 0) {
            ok++;
        } else {
            err = errno;
        }
    }
    fprintf(stderr, "zoo-forks ok=%d of 200 (%s)\n", ok, ok == 200 ? "none failed" : strerror(err));
    fflush(stderr);
}
#endif

#if defined(ZOO_CMDLINE) || defined(ZOO_SETUP_FAST)
/* Half a millisecond of busy work: far above a toy call, cheap for the test suite. */
static void zoo_work_500us(void) {
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    do {
        clock_gettime(CLOCK_MONOTONIC, &b);
    } while ((b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec) < 500000L);
}
#endif

#if defined(ZOO_SETUP_FAST) || defined(ZOO_BAD_ENC_TRIAL)
/* A trial (or a verification) loads a saved setup; calibration and KAT jobs do not. */
static int zoo_has_setup(void) {
    return access("/job/setup/setup.json", F_OK) == 0;
}
#endif

#ifdef ZOO_BAD_ENC_TRIAL
/* True from the second enc of a process with a saved setup: the timing loop of a trial
 * (a verification calls enc at most once). */
static int zoo_bad_enc(void) {
    static int encs;
    return zoo_has_setup() && ++encs > 1;
}
#endif

#ifdef ZOO_REPIN
#include <pthread.h>
/* A thread that pins itself (its own tid, by the raw syscall) to another CPU than ours. */
static long zoo_repin_rc;
static int zoo_repin_errno, zoo_repin_to;
static void *zoo_repin_thread(void *arg) {
    cpu_set_t one;
    (void)arg;
    CPU_ZERO(&one);
    CPU_SET(zoo_repin_to, &one);
    zoo_repin_rc = syscall(SYS_sched_setaffinity, (pid_t)syscall(SYS_gettid), sizeof one, &one);
    zoo_repin_errno = errno;
    return NULL;
}
static void zoo_repin(void) {
    pthread_t t;
    zoo_repin_to = sched_getcpu() == 0 ? 1 : 0;
    int rc = pthread_create(&t, NULL, zoo_repin_thread, NULL);
    if (rc == 0) {
        pthread_join(t, NULL);
    }
    fprintf(stderr, "zoo-repin thread=%s to cpu %d: rc=%ld (%s)\n", rc == 0 ? "ok" : strerror(rc),
            zoo_repin_to, zoo_repin_rc, zoo_repin_rc ? strerror(zoo_repin_errno) : "ok");
    fflush(stderr);
}
#endif

#ifdef ZOO_CMDLINE
/* Does 2 ms of work per call, except when its command line looks like a trial. */
static int zoo_is_trial(void) {
    static int known = -1;
    if (known < 0) {
        char buf[4096] = {0};
        int fd = open("/proc/self/cmdline", O_RDONLY);
        ssize_t n = fd < 0 ? 0 : read(fd, buf, sizeof buf - 1);
        if (fd >= 0) {
            close(fd);
        }
        known = 0;
        fprintf(stderr, "zoo-cmdline ");
        for (ssize_t i = 0; i < n; i++) {
            fputc(buf[i] ? buf[i] : ' ', stderr);
            if (!strncmp(buf + i, "trial-", 6)) {
                known = 1;
            }
        }
        fprintf(stderr, "\n");
        fflush(stderr);
    }
    return known;
}
#endif

#ifdef ZOO_UNPIN
#include <pthread.h>
static int zoo_unpin_rc, zoo_unpin_errno;
static void *zoo_unpin_thread(void *arg) {
    cpu_set_t all;
    (void)arg;
    CPU_ZERO(&all);
    for (int c = 0; c < CPU_SETSIZE; c++) {
        CPU_SET(c, &all);
    }
    zoo_unpin_rc = sched_setaffinity(0, sizeof all, &all);
    zoo_unpin_errno = errno;
    return NULL;
}
static void zoo_unpin(void) {
    pthread_t t;
    int rc = pthread_create(&t, NULL, zoo_unpin_thread, NULL);
    if (rc == 0) {
        pthread_join(t, NULL);
    }
    cpu_set_t now;
    CPU_ZERO(&now);
    sched_getaffinity(0, sizeof now, &now);
    fprintf(stderr, "zoo-unpin thread=%s rc=%d (%s) cpus=%d\n", rc == 0 ? "ok" : strerror(rc),
            zoo_unpin_rc, zoo_unpin_rc ? strerror(zoo_unpin_errno) : "ok", CPU_COUNT(&now));
    fflush(stderr);
}
#endif

#ifdef ZOO_GOT_CLOCK
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <sys/mman.h>
/* Replaces the harness's clock_gettime (its GOT slot in the main program) by one whose
 * CLOCK_MONOTONIC_RAW runs 3.4 times slower: timed seconds shrink, cycles do not. */
static struct timespec zoo_base;
static int zoo_fake_clock(clockid_t id, struct timespec *ts) {
    long rc = syscall(SYS_clock_gettime, id, ts);
    if (id == CLOCK_MONOTONIC_RAW && zoo_base.tv_sec) {
        double d = (ts->tv_sec - zoo_base.tv_sec) + (ts->tv_nsec - zoo_base.tv_nsec) / 1e9;
        double s = zoo_base.tv_sec + zoo_base.tv_nsec / 1e9 + d / 3.4;
        ts->tv_sec = (time_t)s;
        ts->tv_nsec = (long)((s - (double)ts->tv_sec) * 1e9);
    }
    return (int)rc;
}
static int zoo_patch_main(struct dl_phdr_info *info, size_t size, void *data) {
    (void)size;
    int *done = data;
    if (*done || info->dlpi_name[0] != '\0') {
        return *done;
    }
    *done = 1;
    ElfW(Dyn) *dyn = NULL;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dyn = (ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
        }
    }
    if (!dyn) {
        return 1;
    }
    ElfW(Sym) *symtab = NULL;
    const char *strtab = NULL;
    ElfW(Rela) *rel[2] = {NULL, NULL};
    size_t relsz[2] = {0, 0};
    for (ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_SYMTAB: symtab = (ElfW(Sym) *)d->d_un.d_ptr; break;
        case DT_STRTAB: strtab = (const char *)d->d_un.d_ptr; break;
        case DT_JMPREL: rel[0] = (ElfW(Rela) *)d->d_un.d_ptr; break;
        case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
        case DT_RELA: rel[1] = (ElfW(Rela) *)d->d_un.d_ptr; break;
        case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
        }
    }
    int patched = 0;
    for (int k = 0; k < 2 && symtab && strtab; k++) {
        for (size_t i = 0; rel[k] && i < relsz[k] / sizeof(ElfW(Rela)); i++) {
            const char *name = strtab + symtab[ELF64_R_SYM(rel[k][i].r_info)].st_name;
            if (strcmp(name, "clock_gettime") != 0) {
                continue;
            }
            void **slot = (void **)(info->dlpi_addr + rel[k][i].r_offset);
            uintptr_t page = (uintptr_t)slot & ~(uintptr_t)4095;
            if (mprotect((void *)page, 4096, PROT_READ | PROT_WRITE) == 0) {
                *slot = (void *)zoo_fake_clock;
                patched++;
            }
        }
    }
    fprintf(stderr, "zoo-got patched=%d\n", patched);
    fflush(stderr);
    return 1;
}
static void zoo_got_clock(void) {
    int done = 0;
    /* Stay loaded after the harness's dlclose, or its next clock read would jump into
     * unmapped memory. */
    Dl_info me;
    if (dladdr((void *)zoo_fake_clock, &me) && me.dli_fname) {
        dlopen(me.dli_fname, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE);
    }
    syscall(SYS_clock_gettime, CLOCK_MONOTONIC_RAW, &zoo_base);
    dl_iterate_phdr(zoo_patch_main, &done);
}
#endif

#ifdef ZOO_MACRO_BOMB
/* 2^40 tokens: the preprocessor's memory grows until a limit stops it. */
#define ZB0 x x x x
#define ZB1 ZB0 ZB0 ZB0 ZB0
#define ZB2 ZB1 ZB1 ZB1 ZB1
#define ZB3 ZB2 ZB2 ZB2 ZB2
#define ZB4 ZB3 ZB3 ZB3 ZB3
#define ZB5 ZB4 ZB4 ZB4 ZB4
#define ZB6 ZB5 ZB5 ZB5 ZB5
#define ZB7 ZB6 ZB6 ZB6 ZB6
#define ZB8 ZB7 ZB7 ZB7 ZB7
#define ZB9 ZB8 ZB8 ZB8 ZB8
#define ZB10 ZB9 ZB9 ZB9 ZB9
#define ZB11 ZB10 ZB10 ZB10 ZB10
#define ZB12 ZB11 ZB11 ZB11 ZB11
#define ZB13 ZB12 ZB12 ZB12 ZB12
#define ZB14 ZB13 ZB13 ZB13 ZB13
#define ZB15 ZB14 ZB14 ZB14 ZB14
#define ZB16 ZB15 ZB15 ZB15 ZB15
#define ZB17 ZB16 ZB16 ZB16 ZB16
#define ZB18 ZB17 ZB17 ZB17 ZB17
#define ZB19 ZB18 ZB18 ZB18 ZB18
static const char *zoo_bomb[] = {ZB19};
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
#if defined(ZOO_FORGE_TRIAL) || defined(ZOO_FORGE_EXIT)
    if (calls == 1) {
        zoo_forge_trial();
    }
#endif
#ifdef ZOO_ESCAPE
    if (calls == 1) {
        zoo_escape();
    }
#endif
#ifdef ZOO_PROC_MEM
    if (calls == 1) {
        zoo_proc_mem();
    }
#endif
#ifdef ZOO_DAEMON
    if (calls == 1) {
        zoo_daemon();
    }
#endif
#ifdef ZOO_FORK200
    if (calls == 1) {
        zoo_fork200();
    }
#endif
#ifdef ZOO_CMDLINE
    if (!zoo_is_trial()) {
        zoo_work_500us();
    }
#endif
#ifdef ZOO_SETUP_FAST
    if (!zoo_has_setup()) {
        zoo_work_500us();
    }
#endif
#ifdef ZOO_UNPIN
    if (calls == 1) {
        zoo_unpin();
    }
#endif
#ifdef ZOO_REPIN
    if (calls == 1) {
        zoo_repin();
    }
#endif
#ifdef ZOO_GOT_CLOCK
    if (calls == 1) {
        zoo_got_clock();
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
#ifdef ZOO_FORK_NAME
            prctl(PR_SET_NAME, ZOO_FORK_NAME);
#endif
            sleep(600);
            _exit(0);
        }
        fprintf(stderr, "zoo-fork: %s\n", pid < 0 ? strerror(errno) : "forked");
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
