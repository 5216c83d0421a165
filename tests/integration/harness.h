// SPDX-License-Identifier: MIT
// harness: start the real mcpd on a private runtime dir and socket, and check what it leaves.
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <sys/types.h>

#include <yajl/yajl_tree.h>

#include "client/include/mcpc.h"
#include "tests/check.h"

/* Failed checks so far (tests/check.h counts them for the whole program). */
#define h_failures check_n_failed

/*
 * Generous bounds: tests check behaviour, never speed, and must not flake on a loaded box. Under
 * a wrapper (valgrind: mcpd runs 20 to 50 times slower) a wait is four times as long.
 */
#define H_START_TIMEOUT_MS 20000
#define H_WAIT_MS          h_wait_ms()
int h_wait_ms(void);

typedef struct Harness {
    char dir[256];
    char socket[320];
    char config[320];
    char settings[320];
    char log[320];
    pid_t pid;
    int baseline_fds;
    char settled[512]; /* servers h_settle() saw connected, each followed by '\n' */
} Harness;

/** Make a private tree (runtime, config, cache, home) and point the environment at it. */
void h_setup(Harness *h, const char *name);
/** Write the mcp.json that mcpd will discover ($XDG_CONFIG_HOME/mcpd/mcp.json). */
/** Write text to path, making its missing directories (0700); exits 99 when it cannot. */
void h_write_text(const char *path, const char *text);
void h_write_config(Harness *h, const char *json);
/** Write mcpd.json (daemon settings). */
void h_write_settings(Harness *h, const char *json);
/** Start mcpd (extra args NULL-terminated) and wait until its socket answers. */
void h_start(Harness *h, ...);
/** Start mcpd and return its exit status without waiting for the socket (expected failures). */
int h_run_expect_exit(Harness *h, int timeout_ms, ...);
/** SIGTERM, wait; return the exit status (-1 on timeout, after SIGKILL). */
int h_stop(Harness *h);
/** Check nothing tagged with this harness still runs, then remove the tree. */
void h_teardown(Harness *h);
/** Processes (other than mcpd itself) still carrying this harness's tag. */
int h_tagged_processes(const Harness *h, bool include_mcpd);
/** The same count, without printing them. */
int h_count_tagged(const Harness *h);
/** SIGKILL every process carrying this harness's tag (what a cgroup kill would do). */
void h_kill_tagged(const Harness *h);
/** Open fds of the running mcpd. */
int h_mcpd_fds(const Harness *h);
/*
 * Whether mcpd runs as itself, so that its RSS and its speed mean something: false under a tool
 * (MCPD_WRAPPER, the valgrind setup: the pid is the tool's, which keeps 20 MB of freed blocks of
 * its own and runs mcpd some 20 times slower). what names the check left out, said once.
 */
bool h_measurable(const char *what);
/** Resident set size of a process in KiB (VmRSS), or -1. */
long h_rss_kib(pid_t pid);
/** Proportional set size of a process (smaps_rollup), in KiB, or -1. */
long h_pss_kib(pid_t pid);

/** Connect a client; fatal on failure. */
mcpc_client *h_client(Harness *h, const char *name);
/** Path of the fake server (from $FAKE_SERVER). */
const char *h_fake(void);

/** Call a tool; return the text of its first content item (to free) and isError. */
char *h_call_text(mcpc_client *c, const char *tool, const char *args, int *is_errorp);
/** mcpd/status parsed. */
yajl_val h_status(mcpc_client *c);
/** The status object of one server, borrowed from st. */
yajl_val h_server(yajl_val st, const char *name);
/** An integer member of a server's status, or -1. */
int64_t h_server_int(mcpc_client *c, const char *server, const char *key);
/** A string member of a server's status (to free; "" when absent). */
char *h_server_str(mcpc_client *c, const char *server, const char *key);
/** Poll status until server reaches state (or timeout); return whether it did. */
bool h_wait_state(mcpc_client *c, const char *server, const char *state, int timeout_ms);
/** Wait until server has failed needing a sign-in (needsAuthorization). */
bool h_wait_needs_auth(mcpc_client *c, const char *server, int timeout_ms);
/** Number of tools in a tools/list, and whether name is among them. */
int h_list_count(mcpc_client *c, const char *name, bool *foundp);
/** Sleep ms. */
void h_sleep_ms(int ms);
/** Read a file's whole content (to free), or NULL. */
char *h_read_file(const char *path);
/** Wait until the daemon log holds needle (polled every 50 ms); return whether it came. */
bool h_wait_log(const Harness *h, const char *needle, int timeout_ms);
/** Times needle occurs in the file at path (0 when it cannot be read). */
int h_count_in_file(const char *path, const char *needle);
/** Whether one line of text holds both a and b, a first (a log line of one server, say). */
bool h_line_has(const char *text, const char *a, const char *b);
/**
 * The node_modules path (to free) of the pinned npm packages of folder (relative to the source
 * tree: "tests/bench/ondemand"), installed by tests/interop/npm-setup.sh; NULL with *exitp set
 * to the program's exit status (77: skipped, no node or registry) when it cannot be had.
 */
char *h_npm_modules(const char *folder, int *exitp);
/** The N of the last "[name] connected in N ms" in a daemon log's text, or -1. */
long h_connect_ms(const char *log, const char *name);
/* What a fake server run with --log FILE writes once per start: its initialize request. */
#define H_FAKE_STARTED "\"method\":\"initialize\""
/** Print the daemon log (on failure). */
void h_dump_log(const Harness *h);
/*
 * End-of-scenario checks for the fault suites: after h_settle() has taken the baseline (the
 * named servers connected, mcpd's fd count then), h_check_healthy() proves the daemon came
 * through: a new control agent gets an answer from echo_tool, the settled servers are connected
 * again, mcpd's fds are back to the baseline, and no process is left that is not a live
 * server or in a live server's process group.
 */
/** Wait until each named server (NULL-terminated) is connected and mcpd's fd count is steady. */
void h_settle(Harness *h, mcpc_client *c, ...);
/** The end-of-scenario check; scenario names the failure. Returns whether all held. */
bool h_check_healthy(Harness *h, const char *scenario, const char *echo_tool);
/** Tagged processes that are neither mcpd, a live server, nor in a live server's group. */
int h_stray_processes(const Harness *h, mcpc_client *c, bool print);

/** Connect a raw socket to mcpd (-1 on failure): for clients that misbehave on purpose. */
int h_raw_connect(const Harness *h);
/** Write all n bytes (blocking); return false if the peer went away first. */
bool h_raw_write(int fd, const void *data, size_t n);
/** Read until EOF or timeout_ms of silence; return what came (to free). */
char *h_raw_read(int fd, int timeout_ms);
/** A raw client's initialize request line (with its newline), id 0. */
extern const char h_raw_initialize[];

/** Exit status for main: prints a summary. */
int h_finish(const char *name);

/**
 * End pid and its process group (SIGTERM, then SIGKILL after a few seconds; reaped) when the
 * test exits by any path: return from main, exit() (a failed h_sh, the harness giving up), or
 * SIGTERM/SIGINT/SIGHUP (meson's timeout). Only while pid is still an unreaped child of the
 * test. mcpd (h_start) and bg_spawn()'s helpers are added by the harness itself.
 */
void h_helper_add(pid_t pid);
/** Run a shell command line that must succeed (fixture set-up): exit 99 naming it if not. */
void h_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/** h_shell with a va_list. */
char *h_vshell(int *statusp, const char *fmt, va_list ap);
/** Run a shell command line; return its stdout (to free) and set *statusp to its exit code. */
char *h_shell(int *statusp, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
