// SPDX-License-Identifier: MIT
// paths: XDG base directories, the socket path, and private-directory checks.
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/types.h>

/** $HOME, else the passwd entry; never NULL (newly allocated). */
char *paths_home(void);
/** $XDG_CONFIG_HOME or ~/.config (newly allocated). */
char *paths_config_home(void);
/** $XDG_CACHE_HOME or ~/.cache (newly allocated). */
char *paths_cache_home(void);
/** $XDG_STATE_HOME or ~/.local/state (newly allocated). */
char *paths_state_home(void);
/* The per-user runtime directory a login manager (systemd-logind) makes, for a uid. */
#define PATHS_USER_RUNTIME_FMT "/run/user/%u"
/** Whether dir is a real directory (not a link) owned by uid and closed to everyone else. */
bool paths_user_runtime_ok(const char *dir, uid_t uid);
/**
 * mcpd's runtime dir (newly allocated): $XDG_RUNTIME_DIR/mcpd; without that variable,
 * /run/user/<uid>/mcpd when /run/user/<uid> passes paths_user_runtime_ok; else /tmp/mcpd-<uid>.
 * mcpd, mcpctl, the bridge and libmcpc all resolve it here, so they meet at one socket.
 */
char *paths_runtime_dir(void);
/** The socket: $MCPD_SOCKET, else <runtime dir>/mcpd.sock (newly allocated). */
char *paths_socket(void);
/** Join two path parts with one '/' (newly allocated). */
char *paths_join(const char *a, const char *b);
/** Directory part of a path (newly allocated; "." when there is none). */
char *paths_dirname(const char *path);
/** Whether path is dir or lies below it (both absolute and normalised, as realpath gives). */
bool paths_within(const char *path, const char *dir);

/*
 * Create dir (mode 0700, parents as needed) and check it is a directory owned by uid and not
 * accessible to group or others when strict, or at least not writable by them otherwise.
 * Return 0 or -errno; on failure *whyp (if given) explains what is wrong, to free.
 */
int paths_ensure_private_dir(const char *dir, uid_t uid, int strict, char **whyp);
/** mkdir -p with mode; return 0 or -errno. */
int paths_mkdir_p(const char *dir, mode_t mode);

/*
 * Read a whole regular file of at most max bytes into *textp (NUL-terminated, to free; length
 * in *lenp when given, its fstat in *stp when given). Never blocks on what is not a regular
 * file: a FIFO, device, socket or directory is refused without reading it (and a device is
 * never even opened), as is a symbolic link when follow is false. Return 0, or -errno with
 * *whyp (to free, without the path) saying what it is and what to do, except for -ENOENT and
 * -ENOTDIR (the file is simply not there), which leave *whyp alone.
 */
int paths_read_regular(const char *path, bool follow, size_t max, struct stat *stp, char **textp,
                       size_t *lenp, char **whyp);
/** "a FIFO (named pipe)", "a directory", ...: what a file type is called in messages (static). */
const char *paths_type_name(mode_t mode);
