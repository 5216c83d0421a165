// SPDX-License-Identifier: MIT
// child: the one recipe for child processes (process group, PDEATHSIG, fds, reaping via SIGCHLD).
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include <yajl/yajl_tree.h>

typedef struct Child Child;

/* Called once from the loop when the child has been reaped; status is from waitpid(). */
typedef void (*ChildExitFn)(Child *c, int status, void *userdata);

struct Child {
    pid_t pid;           /* also the process group id */
    uint64_t serial;     /* in the MCPD_INSTANCE tag its descendants inherit */
    int fd_stdin;        /* ours to write, or -1 */
    int fd_stdout;       /* ours to read, or -1 */
    int fd_stderr;       /* ours to read, or -1 */
    uint64_t started_ms; /* monotonic */
    bool exited;
    int status;
    ChildExitFn on_exit;
    void *userdata;
};

/*
 * A sandbox's setup, run in the child before it changes directory and execs: system calls only
 * (the daemon has threads). 0, or -errno with what[0] naming the step and what[1] a path or
 * NULL, both in memory the daemon has as well (string literals, what the spec points to).
 */
typedef int (*ChildContainFn)(void *arg, const char *what[2]);

/* child_spawn's result when spec->contain failed or the kernel refused its namespaces. */
#define CHILD_E_CONTAIN 1

typedef struct ChildSpec {
    const char *file;  /* looked up in the child's PATH */
    char *const *argv; /* NULL-terminated; argv[0] shown in ps */
    yajl_val env;      /* object of strings laid over the daemon's environment, or NULL */
    const char *cwd;   /* or NULL */
} ChildSpec;

/* A sandbox a child starts in: its namespaces, then fn(arg) in the child before exec. */
typedef struct ChildContain {
    int clone_flags; /* CLONE_NEW* */
    ChildContainFn fn;
    void *arg;
} ChildContain;

/**
 * Start a child with three pipes, in its own process group, dying with the daemon. On failure
 * (including exec failure, reported through a close-on-exec pipe) return -errno and set *whyp;
 */
int child_spawn(Child **cp, const ChildSpec *spec, ChildExitFn on_exit, void *userdata,
                char **whyp);
/**
 * child_spawn in contain's namespaces, contain->fn run before exec; CHILD_E_CONTAIN (with
 * *whyp naming the step) when the kernel refused either.
 */
int child_spawn_contained(Child **cp, const ChildSpec *spec, const ChildContain *contain,
                          ChildExitFn on_exit, void *userdata, char **whyp);
/**
 * Send sig to the child's whole process group and to every descendant that left it (setsid):
 * those carrying its tag and their descendants.
 */
void child_kill_group(Child *c, int sig);
/** Reap every exited child and run its exit callback; call on SIGCHLD. */
void child_reap(void);
/** Close our pipe ends and release; the child must have been reaped (or never started). */
void child_free(Child *c);
/** Children started and not yet freed. */
unsigned child_count(void);
/** Describe a waitpid() status: "exited with status 3", "killed by signal 9 (Killed)". */
char *child_describe_status(int status);
