// SPDX-License-Identifier: MIT
// listener: the Unix socket (bind or inherit), its permissions, and SO_PEERCRED checks.
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include <event2/event.h>

typedef struct Listener Listener;

/* An accepted connection from our own uid: fd is the caller's. */
typedef void (*ListenerAcceptFn)(int fd, uid_t uid, pid_t pid, void *userdata);

struct Listener {
    int fd;
    char *path;
    bool owns_path; /* we bound it, so we unlink it */
    struct event *ev_accept, *ev_resume;
    ListenerAcceptFn accept_fn;
    void *userdata;
    uint64_t n_refused;
};

/**
 * Bind path (its directory created 0700 and checked), refusing when another mcpd serves it
 * and taking over a stale socket file. Return 0 or -errno with *whyp set.
 */
int listener_bind(Listener *l, const char *path, char **whyp);
/** Use an already listening fd (socket activation). */
int listener_adopt(Listener *l, int fd, const char *path);
/** Start accepting on the loop. */
void listener_start(Listener *l, struct event_base *base, ListenerAcceptFn fn, void *userdata);
/** Stop accepting, close, unlink what we bound; safe on a zeroed value. */
void listener_deinit(Listener *l);
