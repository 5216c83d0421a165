// SPDX-License-Identifier: MIT
// example-agent: connect to mcpd, list the tools, call one asynchronously with progress, and
// hand the session to a subagent. Build: cc example-agent.c $(pkg-config --cflags --libs libmcpc)
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <unistd.h>

#include <mcpc.h>

static void on_progress(void *userdata, unsigned long long id, double progress, double total,
                        const char *message)
{
    (void)userdata;
    printf("call %llu: %.0f of %.0f %s\n", id, progress, total, message ? message : "");
}

static void on_result(void *userdata, unsigned long long id, int status, const char *json)
{
    int *done = userdata;

    printf("call %llu finished with status %d: %s\n", id, status, json ? json : "(none)");
    *done = 1;
}

int main(int argc, char **argv)
{
    const char *tool = argc > 1 ? argv[1] : "mcp_fs_read_file";
    const char *args = argc > 2 ? argv[2] : "{\"path\":\"/etc/hostname\"}";
    char cwd[PATH_MAX];
    mcpc_options o = {.client_name = "example-agent", .cwd = getcwd(cwd, sizeof(cwd))};
    mcpc_client *c = mcpc_new(&o);
    char *tools = NULL;
    int done = 0;

    if (!c || mcpc_connect(c) != 0) {
        fprintf(stderr, "example-agent: %s\n", c ? mcpc_errmsg(c) : "out of memory");
        mcpc_free(c);
        return 1;
    }
    /* Blocking: the tools this agent's workspace sees. */
    if (mcpc_list_tools(c, &tools) == 0)
        printf("tools: %.200s...\n", tools);
    mcpc_string_free(tools);
    /* Asynchronous: the call runs while this loop could serve other fds too. */
    if (mcpc_call_tool_async(c, tool, args, on_result, on_progress, &done, NULL) != 0) {
        fprintf(stderr, "example-agent: %s\n", mcpc_errmsg(c));
        mcpc_free(c);
        return 1;
    }
    while (!done) {
        struct pollfd pfd = {mcpc_fd(c), POLLIN | (mcpc_want_write(c) ? POLLOUT : 0), 0};
        if (poll(&pfd, 1, mcpc_next_timeout(c)) < 0 || mcpc_dispatch(c) != 0) {
            fprintf(stderr, "example-agent: %s\n", mcpc_errmsg(c));
            break;
        }
    }
    /* A subagent started with this in its environment joins this agent's session. */
    printf("for subagents: %s\n", mcpc_session_env(c));
    mcpc_free(c);
    return done ? 0 : 1;
}
