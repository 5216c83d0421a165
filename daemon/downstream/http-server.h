// SPDX-License-Identifier: MIT
// http-server: Streamable HTTP for agents: connections handed over from the socket (first byte
// of HTTP) and, opt-in, a loopback TCP listener with a bearer token; requests checked and
// bounded, then handed to their session (http-session.c).
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <event2/event.h>

#include "common/ratelimit.h"
#include "daemon/downstream/http-session.h"
#include "daemon/downstream/peer.h"

/*
 * HTTP connections open at once, from the socket and loopback together. An MCP client keeps one
 * to a few (a POST stream per call in flight and a GET stream): a person's HTTP clients are tens
 * of connections. 512 keeps a runaway client from taking the daemon's fds (the line protocol's
 * PEER_MAX is 2048 and the process's limit is raised to fit both) while a real user never meets
 * it; past it an idle one is closed to make room, or the new one refused with 503.
 */
#define HTTP_MAX_CONNS 512
/*
 * ... and per client process on the socket (SO_PEERCRED's pid): one client's parallel streams
 * (HTTP_MAX_STREAMS_PER_SESSION) plus its GET stream and a few spare; one process can then hold
 * an eighth of the places, not all of them.
 */
#define HTTP_MAX_CONNS_PER_PID 64
/*
 * A request must arrive whole (head and body) within this long of its first byte: a client
 * writes a request at once, a maximal body crosses loopback in well under a second, and a
 * request still unfinished after 30 s is a slowloris holding a place (as partialLineTimeoutMs
 * on the line protocol, whose hidden setting also sets this: request_timeout_ms).
 */
#define HTTP_REQUEST_TIMEOUT_MS 30000
/*
 * A kept-alive connection with no request and no stream open is closed after this: clients
 * reconnect at no cost (undici keeps idle sockets 4 s, curl 118 s); two minutes spans a pause.
 */
#define HTTP_IDLE_TIMEOUT_MS 120000
/* Bytes of the bearer token: 256 random bits, in hex. */
#define HTTP_TOKEN_LEN 64

typedef struct HttpConn HttpConn;

typedef struct HttpServer {
    struct event_base *base;
    HttpSessions sessions;
    size_t max_body;            /* maxMessageBytes: a POST body is one message */
    int64_t request_timeout_ms; /* HTTP_REQUEST_TIMEOUT_MS, or partialLineTimeoutMs */
    HttpConn *conns;            /* newest first */
    size_t n_conns;
    uint64_t next_conn_id;
    int tcp_fd; /* the loopback listener, or -1 */
    int tcp_port;
    struct event *ev_tcp, *ev_sweep, *ev_reap;
    char token[HTTP_TOKEN_LEN + 1]; /* required on TCP; "" without a TCP listener */
    char *token_path;
    HttpConn *reap; /* closed connections freed from the loop */
    RateLimit refused_log;
    uint64_t n_refused; /* requests refused for a missing token or a foreign Host/Origin */
} HttpServer;

/** Set up an HTTP server whose agents are peers of peers; max_body bounds a POST body. */
void http_server_init(HttpServer *srv, struct event_base *base, PeerRegistry *peers,
                      size_t max_body);
/**
 * Listen on loopback at spec ("127.0.0.1:PORT", "[::1]:PORT", "localhost:PORT"; port 0 picks
 * one) and write a new token, 0600, at token_path. Returns 0 or -errno with *whyp set.
 */
int http_server_listen(HttpServer *srv, const char *spec, const char *token_path, char **whyp);
/** Take a connection handed over by the socket (a PeerHandoffFn). */
void http_server_adopt(int fd, uid_t uid, pid_t pid, const char *data, size_t n, void *srv);
/** Close every connection and session, stop listening, remove the token file. */
void http_server_deinit(HttpServer *srv);
