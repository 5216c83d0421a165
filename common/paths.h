// SPDX-License-Identifier: MIT
// paths: XDG base directories, the socket path, and private-directory checks.
#pragma once

#include <sys/types.h>

/** $HOME, else the passwd entry; never NULL (newly allocated). */
char *paths_home(void);
/** $XDG_CONFIG_HOME or ~/.config (newly allocated). */
char *paths_config_home(void);
/** $XDG_CACHE_HOME or ~/.cache (newly allocated). */
char *paths_cache_home(void);
/** mcpd's runtime dir: $XDG_RUNTIME_DIR/mcpd, else /tmp/mcpd-<uid> (newly allocated). */
char *paths_runtime_dir(void);
/** The socket: $MCPD_SOCKET, else <runtime dir>/mcpd.sock (newly allocated). */
char *paths_socket(void);
/** Join two path parts with one '/' (newly allocated). */
char *paths_join(const char *a, const char *b);
/** Directory part of a path (newly allocated; "." when there is none). */
char *paths_dirname(const char *path);

/*
 * Create dir (mode 0700, parents as needed) and check it is a directory owned by uid and not
 * accessible to group or others when strict, or at least not writable by them otherwise.
 * Return 0 or -errno; on failure *whyp (if given) explains what is wrong, to free.
 */
int paths_ensure_private_dir(const char *dir, uid_t uid, int strict, char **whyp);
/** mkdir -p with mode; return 0 or -errno. */
int paths_mkdir_p(const char *dir, mode_t mode);
