// SPDX-License-Identifier: MIT
// audit: one entry per tool call (who called which tool of which server, how long it took, how
// it ended), to the journal, a log line or a file of JSON lines (docs/audit.md).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "common/strbuf.h"
#include "daemon/config/config.h"
#include "daemon/core/agent.h"
#include "daemon/core/server.h"
#include "daemon/core/workspace.h"

/*
 * The arguments an entry carries (auditArguments) are cut after this many bytes of their
 * redacted JSON text: journald keeps fields up to 64 KiB by default (and drops larger ones), and
 * an audit trail is for reading which call it was, not for replaying its payload.
 */
#define AUDIT_ARGS_MAX 16384
/*
 * The file sink ("audit": "file") is renamed to audit.jsonl.1 (replacing the one before) when it
 * passes this size, so an audit left on for months keeps at most twice this on disk: 64 MiB is
 * about 200 000 entries, weeks of heavy use.
 */
#define AUDIT_FILE_MAX (64 * 1024 * 1024)
/*
 * The file sink's entries are written together at most this long after the first of them, or
 * once this many bytes wait: one write a second instead of one a loop turn keeps the audit's
 * cost per call within a few percent (bench-audit), and a crash loses at most the last second
 * of entries.
 */
#define AUDIT_FLUSH_MS     1000
#define AUDIT_BUFFER_FLUSH 65536

/* How a call ended, as an entry says it (MCPD_OUTCOME=, "outcome"). */
typedef enum AuditOutcome {
    AUDIT_CANCELLED,   /* no answer: the agent cancelled, or the agent went away */
    AUDIT_OK,          /* a result */
    AUDIT_TOOL_ERROR,  /* a result with isError: true (the tool said it failed) */
    AUDIT_ERROR,       /* a JSON-RPC error from the server */
    AUDIT_TIMEOUT,     /* no answer within callTimeout, or its server did not connect in time */
    AUDIT_CLOSED,      /* the server's connection ended during the call */
    AUDIT_UNAVAILABLE, /* the server was not connected */
    AUDIT_TASK, /* the server made it a task (its result comes later, through the tasks methods) */
    AUDIT_REFUSED, /* refused before any server had it: an unknown tool, not in the profile */
} AuditOutcome;

/* Where the entries go, from the settings; the file's state. Zeroed: not set up. */
typedef struct Audit {
    const Settings *settings;      /* the manager's, updated in place on reload */
    WorkspaceRegistry *workspaces; /* the agents, their peers and workspaces */
    bool journal;                  /* mcpd logs to the journal (systemd_stderr_is_journal) */
    char *path;                    /* the file sink's path, made on first use */
    int fd;                        /* the file sink, or -1 */
    int64_t file_size;             /* its size as last known, for AUDIT_FILE_MAX */
    bool file_failed;              /* its last open failed (said once until it works again) */
    StrBuf buf;                    /* the file sink's entries not yet written */
    struct event *flush;           /* writes buf AUDIT_FLUSH_MS after its first entry */
    uint64_t entries;              /* entries made, for status and tests */
} Audit;

/* One ended tool call, as call.c hands it over (everything borrowed). */
typedef struct AuditCall {
    uint64_t peer_id;       /* its agent (the agent and its peer may have gone) */
    const Server *server;   /* NULL once it has gone (or, refused, when the tool had none) */
    uint64_t tool_key;      /* the tool's key in server->tool_stats (its name) */
    const char *request_id; /* the agent's id, JSON text */
    const char *meta;       /* the _meta members passed on, as text, or NULL */
    const char *arguments;  /* kept by audit_copy_arguments, or NULL */
    uint64_t took_ms;       /* from its arrival to its end */
    AuditOutcome outcome;
    int64_t code; /* the error's code, for AUDIT_ERROR .. AUDIT_UNAVAILABLE and AUDIT_REFUSED */
    const char *tool_name; /* refused: the tool's name (no stats are kept for it), or NULL */
} AuditCall;

/**
 * Set up for the agents of workspaces, under its settings (read on every call: a reload takes
 * effect at once).
 */
void audit_init(Audit *au, WorkspaceRegistry *workspaces);
/** Write what is buffered and close the file. */
void audit_deinit(Audit *au);
/** Whether a call's end makes an entry: one test on the hot path. */
static inline bool audit_enabled(const Audit *au)
{
    return au->settings && au->settings->audit != SETTINGS_AUDIT_OFF &&
           (au->settings->audit != SETTINGS_AUDIT_AUTO || au->journal);
}
/**
 * The call's arguments (JSON text) kept for its entry, redacted (common/redact.c) and cut at
 * AUDIT_ARGS_MAX; NULL unless auditArguments is on. To free.
 */
char *audit_copy_arguments(const Audit *au, const char *args, size_t n);
/** The outcome of a failure mcpd gives the agent with this code (call.c's call_fail). */
AuditOutcome audit_outcome_of_code(int64_t code);
/** The outcome of a result's text: AUDIT_TOOL_ERROR when it says isError: true. */
AuditOutcome audit_outcome_of_result(const Audit *au, const char *raw, size_t n);
/** Name of an outcome ("ok", "tool-error", ...). */
const char *audit_outcome_name(AuditOutcome o);
/** A call ended (or was refused: outcome AUDIT_REFUSED): its entry, to where the settings say. */
void audit_call_end(Audit *au, const AuditCall *ac);
