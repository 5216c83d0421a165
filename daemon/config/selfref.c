// SPDX-License-Identifier: MIT
// selfref: recognise mcpd's own bridge, in a config entry or in a connection that comes back.

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/util.h"
#include "daemon/config/selfref.h"

/* mcpctl's global options that take a value (client/mcpctl.c): their value is not a command. */
static bool takes_value(const char *opt)
{
    return streq(opt, "-s") || streq(opt, "--socket") || streq(opt, "-t") ||
           streq(opt, "--timeout");
}

bool selfref_is_bridge_command(const char *command, char *const *args, size_t n_args)
{
    const char *base;

    if (!command)
        return false;
    base = strrchr(command, '/');
    base = base ? base + 1 : command;
    if (!streq(base, "mcpctl"))
        return false;
    for (size_t i = 0; i < n_args; i++) {
        if (streq(args[i], "--"))
            return i + 1 < n_args && streq(args[i + 1], "bridge");
        if (args[i][0] != '-')
            return streq(args[i], "bridge");
        /* --socket=PATH carries its value; --socket PATH takes the next word. */
        if (takes_value(args[i]))
            i++;
    }
    return false;
}

bool selfref_is_bridge(const ServerConfig *c)
{
    return c->type == TRANSPORT_STDIO && selfref_is_bridge_command(c->command, c->args, c->n_args);
}

/* The parent of pid from /proc/<pid>/stat, or -1. The name field may hold spaces and ')'. */
static pid_t parent_of(pid_t pid)
{
    char path[64], buf[512];
    const char *close_paren;
    FILE *f;
    size_t n;
    int ppid;

    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "re");
    if (!f)
        return -1;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    close_paren = strrchr(buf, ')');
    if (!close_paren || sscanf(close_paren + 1, " %*c %d", &ppid) != 1)
        return -1;
    return ppid;
}

bool selfref_pid_is_descendant(pid_t pid)
{
    pid_t self = getpid();

    for (int depth = 0; depth < SELFREF_MAX_ANCESTRY && pid > 1; depth++) {
        pid_t parent = parent_of(pid);
        if (parent == self)
            return true;
        pid = parent;
    }
    return false;
}
