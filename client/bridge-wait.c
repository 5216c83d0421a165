// SPDX-License-Identifier: MIT
// bridge-wait: mcpctl-bridge-wait, what `mcpctl bridge` becomes (exec, same pid) once mcpd has
// its host's pipes: it holds only its connection to mcpd and stderr, and exits with the status
// mcpd gives, so that the process the host supervises costs well under 1 MiB (linked
// statically where the build can; docs/performance.md).

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client/handoff-wait.h"

/* The highest fd number taken as the connection: far above any the bridge passes. */
#define BRIDGE_WAIT_FD_MAX 65535

/* Usage: mcpctl-bridge-wait FD, FD the connection to mcpd (the bridge passes it, see handoff.c). */
int main(int argc, char **argv)
{
    static const char usage[] = "mcpctl-bridge-wait: run by `mcpctl bridge` after it handed its "
                                "host's pipes to mcpd, not by hand\n";
    char *end = NULL;
    long fd = argc == 2 ? strtol(argv[1], &end, 10) : -1;

    /* The bridge passes the lowest free fd from 3 (tens at most); anything else is not it. */
    if (fd < 3 || fd > BRIDGE_WAIT_FD_MAX || !end || *end) {
        (void)!write(STDERR_FILENO, usage, sizeof(usage) - 1);
        return 2;
    }
    return handoff_wait((int)fd, NULL, 0);
}
