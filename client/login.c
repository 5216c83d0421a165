// SPDX-License-Identifier: MIT
// login: mcpctl login and logout (sign-in to remote MCP servers through mcpd).

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "client/include/mcpc.h"
#include "client/login.h"
#include "common/json.h"
#include "common/mcp.h"
#include "common/util.h"

static int fail(mcpc_client *c, int r)
{
    fprintf(stderr, "mcpctl: %s\n", mcpc_errmsg(c));
    return r == -ECONNRESET || r == -ECONNREFUSED || r == -ENOENT ? 3 : 1;
}

static char *server_params(const char *server, bool headless)
{
    yajl_val p = json_object_new();
    char *s;

    json_object_set(p, "server", json_string_new(server));
    if (headless)
        json_object_set(p, "headless", json_bool_new(true));
    s = json_to_string(p);
    json_free(p);
    return s;
}

/* xdg-open in the background, detached, its output discarded; a failure only loses the hint. */
static void open_browser(const char *url)
{
    const char *d = getenv("DISPLAY"), *w = getenv("WAYLAND_DISPLAY");
    pid_t pid;

    if ((!d || !*d) && (!w || !*w))
        return;
    pid = fork();
    if (pid == 0) {
        int fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            dup2(fd, STDIN_FILENO);
            dup2(fd, STDOUT_FILENO);
            dup2(fd, STDERR_FILENO);
        }
        /* A grandchild, so that xdg-open never becomes a zombie of a long wait. */
        if (fork() == 0) {
            execlp("xdg-open", "xdg-open", url, (char *)NULL);
            _exit(127);
        }
        _exit(0);
    }
    if (pid > 0)
        (void)waitpid(pid, NULL, 0);
}

int login_run(mcpc_client *c, const char *server, LoginMode mode, bool json)
{
    _cleanup_free_ char *params = server_params(server, mode == LOGIN_HEADLESS), *out = NULL,
                        *wait_params = NULL, *done = NULL;
    _cleanup_json_ yajl_val res = NULL;
    const char *url;
    int r = mcpc_request(c, MCPD_METHOD_LOGIN, params, &out);

    if (r != 0)
        return fail(c, r);
    res = json_parse(out, NULL);
    url = json_get_string(res, "authorizationUrl");
    if (url) {
        /* To stderr with --json, so stdout stays one JSON document. */
        fprintf(json ? stderr : stdout, "Open this URL to sign in to %s:\n\n  %s\n\n", server, url);
        fflush(json ? stderr : stdout);
        if (mode == LOGIN_BROWSER)
            open_browser(url);
        wait_params = server_params(server, false);
        r = mcpc_request(c, MCPD_METHOD_LOGIN_WAIT, wait_params, &done);
        if (r != 0)
            return fail(c, r);
    }
    if (json)
        printf("%s\n", done ? done : out);
    else
        printf("%s: signed in\n", server);
    return 0;
}

int logout_run(mcpc_client *c, const char *server, bool json)
{
    _cleanup_free_ char *params = server_params(server, false), *out = NULL;
    _cleanup_json_ yajl_val res = NULL;
    int r = mcpc_request(c, MCPD_METHOD_LOGOUT, params, &out);

    if (r != 0)
        return fail(c, r);
    res = json_parse(out, NULL);
    if (json)
        printf("%s\n", out);
    else
        printf("%s: %s\n", server,
               YAJL_IS_TRUE(json_get(res, "removed")) ? "signed out" : "was not signed in");
    return 0;
}
