// SPDX-License-Identifier: MIT
// sandbox: a stdio server started contained as its policy says (reads allowed but the secrets'
// places, writes only where allowed, a private /tmp, the network off or on): in mcpd's own
// namespaces or, where the kernel refuses those, under bubblewrap.

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <yajl/yajl_tree.h>

#include "common/json.h"
#include "common/log.h"
#include "common/util.h"
#include "daemon/upstream/sandbox-bwrap.h"
#include "daemon/upstream/sandbox-ns.h"
#include "daemon/upstream/sandbox-plan.h"
#include "daemon/upstream/sandbox.h"

/*
 * Set when mcpd's own namespaces were refused (or MCPD_SANDBOX asks for bubblewrap): every later
 * sandbox is bubblewrap's, and the reason was logged once. The loop's thread only.
 */
static bool ns_refused;

/* The namespaces' try: 0 started, CHILD_E_CONTAIN refused (then bubblewrap's), or -errno. */
static int spawn_ns(Child **cp, const ChildSpec *spec, const SandboxPlan *plan, ChildExitFn on_exit,
                    void *userdata, char **whyp)
{
    const char *want = getenv("MCPD_SANDBOX");
    _cleanup_free_ char *why = NULL;
    SandboxNs ns;
    ChildContain contain = {.fn = sandbox_ns_contain, .arg = &ns};
    int r;

    if (!ns_refused && want && streq(want, "bubblewrap")) {
        ns_refused = true;
        log_info("MCPD_SANDBOX=bubblewrap: contained servers start under bubblewrap");
    }
    if (ns_refused)
        return CHILD_E_CONTAIN;
    sandbox_ns_init(&ns, plan);
    contain.clone_flags = sandbox_ns_clone_flags(plan);
    r = child_spawn_contained(cp, spec, &contain, on_exit, userdata, &why);
    if (r == CHILD_E_CONTAIN) {
        ns_refused = true;
        log_warning("the kernel refused mcpd's own sandbox (%s): contained servers start under "
                    "bubblewrap instead (docs/sandbox.md)",
                    why);
    } else if (r < 0) {
        *whyp = why;
        why = NULL;
    }
    return r;
}

int sandbox_spawn(Child **cp, const ChildSpec *spec, yajl_val policy, const char *server,
                  ChildExitFn on_exit, void *userdata, const char **howp, char **whyp)
{
    _cleanup_json_ yajl_val env = spec->env ? json_copy(spec->env) : json_object_new();
    _cleanup_free_ char *note = NULL, *why = NULL;
    char **argv = NULL;
    SandboxPlan plan;
    ChildSpec s = *spec;
    int r;

    /* Its /tmp is its own, whatever the daemon's TMPDIR names. */
    json_object_set(env, "TMPDIR", json_string_new("/tmp"));
    s.env = env;
    r = sandbox_plan_build(&plan, policy, spec->cwd, &note, &why);
    if (note)
        log_full(LOG_WARNING, server, "sandbox", "%s", note);
    if (r == 0 && (r = spawn_ns(cp, &s, &plan, on_exit, userdata, &why)) <= 0) {
        /*
         * Contained, or the command itself could not run (not found, not executable): that
         * failure reads as an unconfined server's would.
         */
        *howp = SANDBOX_HOW_NS;
        if (r < 0) {
            *whyp = why;
            why = NULL;
        }
        sandbox_plan_deinit(&plan);
        return r;
    }
    if (r == CHILD_E_CONTAIN && (r = sandbox_bwrap_argv(&argv, &plan, spec, &why)) == 0) {
        s.file = argv[0];
        s.argv = argv;
        if ((r = child_spawn(cp, &s, on_exit, userdata, &why)) == 0)
            *howp = SANDBOX_HOW_BWRAP;
    }
    sandbox_bwrap_argv_free(argv);
    sandbox_plan_deinit(&plan);
    if (r < 0)
        *whyp = sandbox_spawn_error(server, why);
    return r < 0 ? r : 0;
}

char *sandbox_spawn_error(const char *server, const char *why)
{
    return xasprintf("%s: server \"%s\" asks for a sandbox, which mcpd cannot set up, and mcpd "
                     "does not run it unconfined instead (where the kernel refuses mcpd's own "
                     "sandbox, it is bubblewrap's: Debian's package bubblewrap)",
                     why, server);
}

char *sandbox_exit_hint(const char *server, yajl_val policy, const char *how)
{
    _cleanup_free_ char *what = sandbox_describe(policy, how);

    return xasprintf("it ran in a sandbox, %s: what the sandbox refused shows in `mcpctl logs %s` "
                     "as \"Permission denied\" (a denied path), \"Read-only file system\" (a write "
                     "outside the allowed paths) or a failed connection (the network is off); "
                     "a line starting \"bwrap:\" is bubblewrap failing to set the sandbox up (for "
                     "example no user namespaces for unprivileged users on this system); "
                     "docs/sandbox.md",
                     what, server);
}

char *sandbox_describe(yajl_val policy, const char *how)
{
    const char *profile = json_get_string(policy, "profile");
    bool network = YAJL_IS_TRUE(json_get(policy, "network"));

    return xasprintf("\"%s\" (%s; network %s)", profile ? profile : "?", how,
                     network ? "on" : "off");
}
