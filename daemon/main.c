// SPDX-License-Identifier: MIT
// main: mcpd's command line and start-up.

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/log.h"
#include "common/util.h"
#include "common/version.h"
#include "daemon/daemon.h"

static void usage(FILE *f)
{
    fprintf(f, "Usage: mcpd [OPTIONS]\n"
               "\n"
               "Per-user MCP aggregator daemon: owns MCP server connections and serves agents\n"
               "over a Unix socket ($MCPD_SOCKET or $XDG_RUNTIME_DIR/mcpd/mcpd.sock).\n"
               "\n"
               "  -c, --config FILE      use only this mcp.json-style file (no discovery)\n"
               "  -s, --socket PATH      listen on PATH\n"
               "      --listen ADDR:PORT also serve MCP over HTTP on this loopback address\n"
               "                         (token: mcpctl http-token)\n"
               "  -l, --log-level LEVEL  error, warning, notice, info (default) or debug\n"
               "  -h, --help             show this help\n"
               "  -V, --version          show the version\n");
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, NULL, 'c'},
        {"socket", required_argument, NULL, 's'},
        {"log-level", required_argument, NULL, 'l'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, 'V'},
        {"listen", required_argument, NULL, 'L'},
        {NULL, 0, NULL, 0},
    };
    DaemonOptions o = {.log_level = LOG_INFO};
    Daemon d;
    int c, r;

    while ((c = getopt_long(argc, argv, "c:s:l:hV", opts, NULL)) != -1) {
        switch (c) {
        case 'c':
            o.config_file = optarg;
            break;
        case 's':
            o.socket_path = optarg;
            break;
        case 'L':
            o.listen = optarg;
            break;
        case 'l':
            if ((o.log_level = log_level_from_string(optarg)) < 0) {
                fprintf(stderr, "mcpd: unknown log level \"%s\"\n", optarg);
                return 2;
            }
            break;
        case 'h':
            usage(stdout);
            return 0;
        case 'V':
            printf("mcpd %s\n", mcpd_version);
            return 0;
        default:
            usage(stderr);
            return 2;
        }
    }
    if (optind < argc) {
        usage(stderr);
        return 2;
    }
    log_set_level(o.log_level);
    r = daemon_init(&d, &o);
    if (r < 0) {
        daemon_deinit(&d);
        return 1;
    }
    r = daemon_run(&d);
    daemon_deinit(&d);
    log_notice("stopped");
    return r;
}
