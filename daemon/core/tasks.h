// SPDX-License-Identifier: MIT
// tasks: MCP tasks (2025-11-25, experimental) relayed for agents: each task a server created for
// an agent's tools/call is recorded under an id of mcpd's own (server task ids collide), owned by
// the agent's session; tasks/get, tasks/result, tasks/cancel and tasks/list are checked against
// that owner and go to the task's server; status notifications and a task's own requests reach
// the agent after its tools/call has been answered (docs/protocol.md, "Tasks").
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include <yajl/yajl_tree.h>

#include "common/idmap.h"
#include "common/strbuf.h"
#include "daemon/core/agent.h"
#include "daemon/core/server.h"
#include "daemon/core/workspace.h"
#include "daemon/downstream/peer.h"

/*
 * Tasks remembered per agent session: as many as calls an agent may have in flight
 * (AGENT_MAX_CALLS_IN_FLIGHT), since a task is a call that outlives its reply. One more is
 * cancelled at its server and refused.
 */
#define TASKS_MAX_PER_SESSION 256
/*
 * Tasks remembered in all: sixteen busy sessions' worth. Each record is a few hundred bytes
 * (the last Task object its server sent), so this bounds them at a few MiB.
 */
#define TASKS_MAX_TOTAL 4096
/*
 * The longest a task is remembered, and the longest a tasks/result waits: a day. A server that
 * gives no ttl (unlimited) gets this one; after it the agent's record is gone in any case.
 */
#define TASKS_TTL_MAX_MS (24 * 3600 * 1000LL)
/* A server's taskId longer than this is refused (ids are UUIDs or counters in practice). */
#define TASKS_ID_MAX 256
/* tasks/get, tasks/result and tasks/cancel requests one agent may have waiting at once; the last
 * waits for as long as the task runs, so each agent is bounded on its own. */
#define TASKS_MAX_WAITING_PER_AGENT 64
/* Tasks per tasks/list page: the whole of a session's tasks in four pages at most. */
#define TASKS_LIST_PAGE 64
/*
 * Status notifications kept for a task mcpd does not know yet: a server may send one before the
 * CreateTaskResult that names the task (it writes them from different places), so the newest
 * few are kept and applied when the result comes. A burst of task-augmented calls answered at
 * once is what fills it; the oldest goes first.
 */
#define TASKS_EARLY_MAX 64
/* How long such a notification waits for its task: the result follows it at once, so a second
 * is plenty; after that the notification is for a task mcpd never records. */
#define TASKS_EARLY_MS 5000
/* Such a notification's text larger than this is not kept (a Task object is a few hundred
 * bytes: this leaves room for a long statusMessage, and bounds the buffer at 256 KiB). */
#define TASKS_EARLY_BYTES 4096

/* A status notification that came before its task's CreateTaskResult. */
typedef struct TaskEarly {
    uint64_t server_id, upstream_id;
    uint64_t at_ms; /* when it came; 0: a free slot */
    char *up_task;  /* the server's taskId */
    char *params;   /* the notification's params, JSON text */
} TaskEarly;

/* Every task mcpd relays, and the tasks/get, tasks/result and tasks/cancel requests waiting at
 * servers. */
typedef struct TaskRegistry {
    PeerRegistry *peers;
    AgentRegistry *agents;
    ServerRegistry *servers;
    WorkspaceRegistry *workspaces; /* its ext rewrites a result's URIs for the agent's view */
    IdMap by_seq;                  /* seq -> Task */
    IdMap waiting;                 /* id -> TaskWait */
    uint64_t next_seq, next_wait;
    size_t n_tasks;
    TaskEarly early[TASKS_EARLY_MAX];
} TaskRegistry;

/* What a CreateTaskResult needs from the tools/call it answers. */
typedef struct TaskOrigin {
    Server *s;
    uint64_t upstream_id;    /* the session it lives in */
    uint64_t peer_id;        /* the agent that called */
    const char *orig_id;     /* the agent's request id, JSON text */
    const char *agent_token; /* the agent's progress token, JSON text, or NULL */
    uint64_t request_id;     /* the upstream request id (its progress token upstream) */
} TaskOrigin;

void tasks_init(TaskRegistry *tr, PeerRegistry *peers, AgentRegistry *agents,
                ServerRegistry *servers, WorkspaceRegistry *workspaces);
void tasks_deinit(TaskRegistry *tr);

/** Whether a server's capabilities accept task-augmented tools/call. */
bool tasks_server_supports(yajl_val caps);
/** The tasks capability mcpd declares to an agent: list, cancel, requests.tools.call. */
yajl_val tasks_capability(void);

/**
 * A tools/call result for a call that asked for a task: a CreateTaskResult is recorded, its
 * taskId rewritten, and the agent answered; returns true then. false: not a CreateTaskResult
 * (the server ran the call normally), the caller answers as usual.
 */
bool tasks_created(TaskRegistry *tr, const TaskOrigin *o, const char *raw, size_t n,
                   yajl_val result);

/**
 * The members text of a tools/call's params for a 2026-07-28 server, which has no params.task
 * (tasks are an extension there, which mcpd does not relay): its "task" member dropped. body is
 * returned, or freed and replaced when it had one; NULL stays NULL.
 */
char *tasks_plain_body(char *body);

/** tasks/get, tasks/result, tasks/cancel (params.taskId checked here) and tasks/list. */
void tasks_request(TaskRegistry *tr, Peer *p, yajl_val id, const char *method, yajl_val params);

/**
 * notifications/tasks/status and progress of a finished call: true when taken. A status of a
 * task not recorded yet is kept a while (TASKS_EARLY_*) for the CreateTaskResult to come.
 */
bool tasks_route_notification(TaskRegistry *tr, Server *s, const char *method, yajl_val params);
/**
 * A server request needing capability cap (AGENT_CAP_*) tied to one of its tasks (_meta
 * related-task): false when it is no task's mcpd knows (the caller routes it as any other).
 * true: its taskId is rewritten in params; *pp is the agent of the task's session that may be
 * asked (the one that started it first; legacy era, with cap; for url-mode elicitation one with
 * forms only when none has url mode, *as_formp then set), or NULL when none can; *anyp an agent
 * of the session (for roots/list's workspace), or NULL.
 */
bool tasks_request_peer(TaskRegistry *tr, Server *s, yajl_val params, unsigned cap, Peer **pp,
                        Peer **anyp, bool *as_formp);
/**
 * The agent cancelled its request orig_id (notifications/cancelled): a tasks/get, tasks/result
 * or tasks/cancel of its waiting at a server is cancelled there and forgotten; true when found.
 */
bool tasks_cancel_wait(TaskRegistry *tr, uint64_t peer_id, yajl_val orig_id);

/** An agent left: its waiting requests are cancelled; its session's tasks go with the last one. */
void tasks_peer_gone(TaskRegistry *tr, uint64_t peer_id);
/** The server's session upstream_id ended (0: the server is removed): its tasks are lost. */
void tasks_server_gone(TaskRegistry *tr, Server *s, uint64_t upstream_id);
/** Whether a task of server s's session is still working (not completed, failed, cancelled). */
bool tasks_server_busy(TaskRegistry *tr, const Server *s);
