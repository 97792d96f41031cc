/* Whole-job bounds: attacks on the job's disk and memory, run once by a constructor when the
 * library is loaded, in the job's scratch folder (the working directory). Not cryptography. */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(ZOO_SPARSE) || defined(ZOO_EMPTY_FILES)
/* Calls f on the working directory and each folder in it (the KAT folder among them). */
static void each_dir(void (*f)(const char *)) {
    f(".");
    DIR *d = opendir(".");
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_type == DT_DIR && e->d_name[0] != '.') f(e->d_name);
    }
    closedir(d);
}
#endif

#ifdef ZOO_MANY_FILES
static char zoo_mib[1 << 20];
static void attack(void) {
    memset(zoo_mib, 'x', sizeof zoo_mib);
    char p[64];
    for (int i = 0; i < 1400; i++) {
        snprintf(p, sizeof p, "junk_%04d.rsp", i);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) return;
        ssize_t n = write(fd, zoo_mib, sizeof zoo_mib);
        close(fd);
        if (n != (ssize_t)sizeof zoo_mib) return;
    }
}
#elif defined(ZOO_SPARSE)
static void sparse(const char *dir) {
    char p[512];
    snprintf(p, sizeof p, "%s/KAT_SPARSE.txt", dir);
    int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return;
    /* 1 GiB: under the per-file limit, over the scratch size, almost all hole */
    if (ftruncate(fd, 1LL << 30) != 0) return;
    (void)!write(fd, "x", 1);
    close(fd);
}
static void attack(void) { each_dir(sparse); }
#elif defined(ZOO_EMPTY_FILES)
static void empty(const char *dir) {
    if (strcmp(dir, ".") == 0) return;
    char p[512];
    for (int i = 0; i < 100000; i++) {
        snprintf(p, sizeof p, "%s/e%06d", dir, i);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) return;
        close(fd);
    }
}
static void attack(void) { each_dir(empty); }
#elif defined(ZOO_FORK_MEMORY)
#include <poll.h>
static void attack(void) {
    int fds[2];
    if (pipe(fds) != 0) return;
    int forked = 0;
    for (int i = 0; i < 12; i++) {
        pid_t p = fork();
        if (p == 0) {
            close(fds[0]);
            /* up to 128 MiB each, in pieces (each child is under the address-space limit) */
            for (int k = 0; k < 8; k++) {
                char *m = malloc(16u << 20);
                if (!m) break;
                memset(m, 1, 16u << 20);
            }
            (void)!write(fds[1], "x", 1); /* holding it now */
            sleep(60);
            _exit(0);
        }
        if (p < 0) break; /* refused (seccomp, the pids group): the attack ends here */
        forked++;
    }
    close(fds[1]);
    /* Wait until every child holds its memory (a killed one never says so: 5 s at most). */
    char c;
    struct pollfd pfd = {fds[0], POLLIN, 0};
    for (int got = 0; got < forked && poll(&pfd, 1, 5000) > 0;) {
        if (read(fds[0], &c, 1) != 1) break;
        got++;
    }
    close(fds[0]);
}
#else
static void attack(void) {}
#endif

__attribute__((constructor)) static void zoo_bounds(void) { attack(); }

/* The library's own data, so the honest control links the same way. */
int zoo_bounds_linked;
