// SPDX-License-Identifier: MIT
// oauth: a sign-in to a remote server (the MCP authorization flow: OAuth 2.1 code + PKCE, client
// credentials, jwt-bearer), from the server's first challenge to the token stored.

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <curl/curl.h>
#include <event2/event.h>
#include <event2/buffer.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>

#include "common/hash.h"
#include "common/json.h"
#include "common/log.h"
#include "common/mcp.h"
#include "common/strbuf.h"
#include "common/util.h"
#include "daemon/upstream/http.h"
#include "daemon/upstream/oauth-client-auth.h"
#include "daemon/upstream/oauth-fetch.h"
#include "daemon/upstream/oauth-issuer.h"
#include "daemon/upstream/oauth-listener.h"
#include "daemon/upstream/oauth-parse.h"
#include "daemon/upstream/oauth-refresh.h"
#include "daemon/upstream/oauth-store.h"
#include "daemon/upstream/oauth-tokens.h"
#include "daemon/upstream/oauth.h"

/* The "error" of a redirect is a short code (RFC 6749 4.1.2.1); anyone on the machine sends it. */
#define REDIRECT_ERROR_SHOWN_MAX 100
/* RFC 7636: 32 random bytes give a 43-character verifier, the shortest allowed. */
#define PKCE_VERIFIER_BYTES 32
/* The state value only has to be unguessable for the few minutes of a sign-in. */
#define STATE_BYTES 16
/* Well-known locations tried per document (RFC 9728 and RFC 8414/OIDC orders give at most 3). */
#define MAX_CANDIDATES 4

typedef enum FlowStep {
    STEP_PROBE,    /* unauthenticated POST to learn the challenge */
    STEP_PRM,      /* Protected Resource Metadata */
    STEP_ASMETA,   /* authorization server metadata */
    STEP_REGISTER, /* dynamic client registration */
    STEP_WAIT,     /* the person (or the headless follower) at the authorization endpoint */
    STEP_TOKEN,    /* code (or client credentials) for tokens */
} FlowStep;

static const char *const step_names[] = {
    "probing the server",
    "protected resource metadata",
    "authorization server metadata",
    "client registration",
    "authorization",
    "token request",
};

struct OAuthFlow {
    struct event_base *base;
    char *server, *resource;
    FlowStep step;
    Fetch *x, *hx; /* the step's exchange; the headless follower's */
    char *challenge;
    char *cands[MAX_CANDIDATES];
    size_t n_cands, i_cand;
    bool legacy; /* no resource metadata: the 2025-03-26 server-as-AS rules */
    char *prm_resource, *issuer;
    yajl_val prm, asm_;
    char *authz_ep, *token_ep, *reg_ep;
    /* options */
    char *opt_client_id, *opt_client_secret, *opt_scopes, *opt_cimd;
    char *opt_key, *opt_alg;     /* private_key_jwt: PEM private key and its algorithm */
    char *opt_authz, *opt_token; /* endpoints given in the config (Gemini CLI): no discovery */
    char *opt_redirect;          /* a fixed redirect URI on loopback, or NULL */
    char *opt_issuer;            /* the authorization server the configured client is for */
    char *redirect_path;         /* what the listener answers: "/callback" or opt_redirect's */
    int64_t opt_port;
    bool redirect_localhost; /* opt_redirect names "localhost": ::1 is listened on too */
    bool config_endpoints;   /* the token (and authorization) endpoint came from the config */
    bool client_credentials, headless; /* client_credentials: no person, no browser */
    bool jwt_bearer;                   /* SEP-990: IdP token exchange, then the jwt-bearer grant */
    char *opt_id_token, *opt_idp_token_ep, *opt_idp_client_id;
    char *assertion; /* the ID-JAG from the IdP */
    /* registration and request */
    char *client_id, *client_secret, *auth_method, *scope;
    char *verifier, *state, *redirect_uri;
    OAuthListener *listener;
    unsigned n_foreign; /* redirects ignored for a state not this sign-in's */
    struct event *ev_timeout, *ev_next;
    char *code;
    char *error; /* set by the listener; reported from the loop */
    bool started;
    OAuthUrlFn url_fn;
    OAuthDoneFn done_fn;
    void *userdata;
};

/* ---- lifecycle and ending ---- */

OAuthFlow *oauth_flow_free(OAuthFlow *f)
{
    if (!f)
        return NULL;
    fetch_free(f->x);
    fetch_free(f->hx);
    oauth_listener_close(f->listener);
    if (f->ev_timeout)
        event_free(f->ev_timeout);
    if (f->ev_next)
        event_free(f->ev_next);
    for (size_t i = 0; i < f->n_cands; i++)
        free(f->cands[i]);
    json_free(f->prm);
    json_free(f->asm_);
    free(f->server);
    free(f->resource);
    free(f->challenge);
    free(f->prm_resource);
    free(f->issuer);
    free(f->authz_ep);
    free(f->token_ep);
    free(f->reg_ep);
    free(f->opt_client_id);
    if (f->opt_client_secret)
        explicit_bzero(f->opt_client_secret, strlen(f->opt_client_secret));
    free(f->opt_client_secret);
    free(f->opt_scopes);
    free(f->opt_cimd);
    if (f->opt_key)
        explicit_bzero(f->opt_key, strlen(f->opt_key));
    free(f->opt_key);
    free(f->opt_alg);
    free(f->opt_authz);
    free(f->opt_token);
    free(f->opt_redirect);
    free(f->opt_issuer);
    free(f->redirect_path);
    if (f->opt_id_token)
        explicit_bzero(f->opt_id_token, strlen(f->opt_id_token));
    free(f->opt_id_token);
    free(f->opt_idp_token_ep);
    free(f->opt_idp_client_id);
    if (f->assertion)
        explicit_bzero(f->assertion, strlen(f->assertion));
    free(f->assertion);
    free(f->client_id);
    if (f->client_secret)
        explicit_bzero(f->client_secret, strlen(f->client_secret));
    free(f->client_secret);
    free(f->auth_method);
    free(f->scope);
    free(f->verifier);
    free(f->state);
    free(f->redirect_uri);
    if (f->code)
        explicit_bzero(f->code, strlen(f->code));
    free(f->code);
    free(f->error);
    free(f);
    return NULL;
}

static void flow_end(OAuthFlow *f, int r, const char *fmt, ...) _printf_(3, 4);
static void flow_end(OAuthFlow *f, int r, const char *fmt, ...)
{
    StrBuf sb = STRBUF_INIT;
    OAuthDoneFn fn = f->done_fn;
    va_list ap;

    if (!fn)
        return;
    f->done_fn = NULL;
    if (fmt) {
        va_list aq;
        va_start(ap, fmt);
        va_copy(aq, ap);
        strbuf_printf(&sb, "sign-in to server %s failed at %s: ", f->server, step_names[f->step]);
        strbuf_vprintf(&sb, fmt, aq);
        va_end(aq);
        va_end(ap);
        log_full(LOG_WARNING, f->server, "oauth", "%s", strbuf_str(&sb));
    } else {
        log_full(LOG_INFO, f->server, "oauth", "signed in (token stored for %s)", f->resource);
    }
    /* The owner may free f from its callback: nothing of f is touched after this. */
    fn(f->userdata, r, fmt ? strbuf_str(&sb) : NULL);
    strbuf_deinit(&sb);
}

static void on_flow_timeout(evutil_socket_t fd, short what, void *arg)
{
    OAuthFlow *f = arg;

    (void)fd, (void)what;
    flow_end(f, -ETIMEDOUT, "no answer within %d s%s", OAUTH_FLOW_TIMEOUT_MS / 1000,
             f->n_foreign ? " (redirects with another sign-in's state came, and were ignored)"
                          : "");
}

/* Start the step's exchange; on failure end the flow. Return whether it started. */
static bool flow_fetch(OAuthFlow *f, const char *url, const char *body, const char *ctype,
                       const char *extra, FetchFn fn)
{
    _cleanup_free_ char *why = NULL;

    f->x = fetch_free(f->x);
    f->x = fetch_start(f->base, f->resource, url, body, ctype, extra, fn, f, &why);
    if (!f->x)
        flow_end(f, -EINVAL, "%s", why);
    return f->x != NULL;
}

/* ---- token response ---- */

static void on_token(void *owner, Fetch *x)
{
    OAuthFlow *f = owner;
    _cleanup_free_ char *why = NULL;
    OAuthToken base_tok = {
        .resource = f->resource,
        .issuer = f->issuer,
        .token_endpoint = f->token_ep,
        .client_id = f->client_id,
        .client_secret = f->client_secret,
        .auth_method = f->auth_method,
        .scope = f->scope,
        .token_resource = f->prm_resource,
    };
    int r;

    (void)x;
    r = oauth_tokens_take(f->x, &base_tok, &why);
    if (r < 0)
        return flow_end(f, r, "%s", why);
    flow_end(f, 0, NULL);
}

static void token_request(OAuthFlow *f);

static void on_exchange(void *owner, Fetch *x)
{
    OAuthFlow *f = owner;
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val v = fetch_json(x, &why);
    const char *jag = json_get_string(v, "access_token");

    if (!v)
        return flow_end(f, -EPROTO, "identity provider token exchange: %s", why);
    if (!jag || !*jag)
        return flow_end(f, -EPROTO,
                        "the identity provider's answer from %s has no "
                        "\"access_token\" (the ID-JAG)",
                        x->url);
    f->assertion = xstrdup(jag);
    token_request(f);
}

/* SEP-990: the enterprise ID token becomes an ID-JAG for this authorization server (RFC 8693). */
static void token_exchange(OAuthFlow *f)
{
    StrBuf form = STRBUF_INIT;

    fetch_form_add(&form, "grant_type", "urn:ietf:params:oauth:grant-type:token-exchange");
    fetch_form_add(&form, "subject_token", f->opt_id_token);
    fetch_form_add(&form, "subject_token_type", "urn:ietf:params:oauth:token-type:id_token");
    fetch_form_add(&form, "requested_token_type", "urn:ietf:params:oauth:token-type:id-jag");
    fetch_form_add(&form, "audience", f->issuer);
    fetch_form_add(&form, "resource", f->prm_resource);
    if (f->opt_idp_client_id)
        fetch_form_add(&form, "client_id", f->opt_idp_client_id);
    if (f->scope)
        fetch_form_add(&form, "scope", f->scope);
    flow_fetch(f, f->opt_idp_token_ep, strbuf_str(&form), "application/x-www-form-urlencoded", NULL,
               on_exchange);
    explicit_bzero(form.data, form.cap);
    strbuf_deinit(&form);
}

static void token_request(OAuthFlow *f)
{
    StrBuf form = STRBUF_INIT;
    _cleanup_free_ char *auth = NULL;

    f->step = STEP_TOKEN;
    if (f->jwt_bearer && !f->assertion)
        return token_exchange(f);
    if (f->jwt_bearer) {
        fetch_form_add(&form, "grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer");
        fetch_form_add(&form, "assertion", f->assertion);
        if (f->scope)
            fetch_form_add(&form, "scope", f->scope);
    } else if (f->client_credentials) {
        fetch_form_add(&form, "grant_type", "client_credentials");
        if (f->scope)
            fetch_form_add(&form, "scope", f->scope);
    } else {
        fetch_form_add(&form, "grant_type", "authorization_code");
        fetch_form_add(&form, "code", f->code);
        fetch_form_add(&form, "redirect_uri", f->redirect_uri);
        fetch_form_add(&form, "code_verifier", f->verifier);
    }
    /* RFC 8707: the token is asked for this resource only. */
    fetch_form_add(&form, "resource", f->prm_resource);
    if (f->opt_key) {
        _cleanup_free_ char *why = NULL;
        if (oauth_client_assertion(&form, f->client_id, f->issuer, f->opt_key, f->opt_alg, &why) <
            0) {
            strbuf_deinit(&form);
            return flow_end(f, -EINVAL, "private_key_jwt: %s", why);
        }
    } else {
        auth = oauth_client_auth(&form, f->auth_method, f->client_id, f->client_secret);
    }
    flow_fetch(f, f->token_ep, strbuf_str(&form), "application/x-www-form-urlencoded", auth,
               on_token);
    explicit_bzero(form.data, form.cap);
    strbuf_deinit(&form);
    if (auth)
        explicit_bzero(auth, strlen(auth));
}

/* ---- the redirect ---- */

static void flow_begin(OAuthFlow *f);

static void on_next(evutil_socket_t fd, short what, void *arg)
{
    OAuthFlow *f = arg;

    (void)fd, (void)what;
    if (!f->started) {
        f->started = true;
        return flow_begin(f);
    }
    /* The redirect came: the listener goes, from the loop, not from its callback. */
    f->listener = oauth_listener_close(f->listener);
    f->hx = fetch_free(f->hx);
    if (f->error)
        return flow_end(f, -EACCES, "%s", f->error);
    token_request(f);
}

/* SEP-2468: the response must name the issuer whose metadata was used (none: given by hand). */
static bool iss_refused(OAuthFlow *f, const char *iss, char **whyp)
{
    yajl_val adv = json_get(f->asm_, "authorization_response_iss_parameter_supported");

    return f->asm_ && oauth_check_response_iss(f->issuer, iss, YAJL_IS_TRUE(adv), whyp) < 0;
}

/* The redirect's state is this sign-in's (compared in constant time). */
static bool state_matches(const OAuthFlow *f, const char *state)
{
    return f->state && state && strlen(state) == strlen(f->state) &&
           mem_equal_consttime(state, f->state, strlen(f->state));
}

/*
 * Any process on the machine can reach the listener, so a redirect without this sign-in's state
 * is answered and ignored: the sign-in waits on for the real one (within OAUTH_FLOW_TIMEOUT_MS).
 * Only a redirect carrying the state, which came by the authorization server, ends the wait.
 */
static int on_redirect(void *userdata, const char *q, const char **textp)
{
    OAuthFlow *f = userdata;
    const char *code, *err, *iss;
    struct evkeyvalq kv;
    char *why = NULL;

    if (f->code || f->error) {
        *textp = "This sign-in has its answer already.";
        return 400;
    }
    TAILQ_INIT(&kv);
    if (!q || evhttp_parse_query_str(q, &kv) < 0 ||
        !state_matches(f, evhttp_find_header(&kv, "state"))) {
        evhttp_clear_headers(&kv);
        if (f->n_foreign++ == 0)
            log_full(LOG_WARNING, f->server, "oauth",
                     "ignored a redirect to %s whose state is not this sign-in's (stale, or sent "
                     "by another program on this machine); still waiting for the browser",
                     f->redirect_uri ? f->redirect_uri : "the listener");
        *textp = "This redirect does not belong to the sign-in under way and was ignored; "
                 "finish signing in from the link mcpctl showed.";
        return 400;
    }
    code = evhttp_find_header(&kv, "code");
    err = evhttp_find_header(&kv, "error");
    iss = evhttp_find_header(&kv, "iss");
    if (iss_refused(f, iss, &why))
        f->error = why;
    else if (err) {
        _cleanup_free_ char *shown = oauth_text_shown(err, REDIRECT_ERROR_SHOWN_MAX);
        f->error = xasprintf("the authorization server refused: %s", shown);
    } else if (!code || !*code)
        f->error = xstrdup("the redirect carried no code");
    else
        f->code = xstrdup(code);
    evhttp_clear_headers(&kv);
    *textp = f->error ? "Sign-in failed; see mcpctl for why." : "Signed in to mcpd.";
    event_active(f->ev_next, EV_TIMEOUT, 0);
    return f->error ? 400 : 200;
}

static int listener_open(OAuthFlow *f, char **whyp)
{
    uint16_t port = 0;

    f->listener = oauth_listener_new(
        f->base, f->server, (uint16_t)f->opt_port, f->redirect_localhost,
        f->opt_redirect ? f->redirect_path : "/callback", on_redirect, f, &port, whyp);
    if (!f->listener)
        return -EADDRINUSE;
    if (f->opt_redirect) {
        f->redirect_uri = xstrdup(f->opt_redirect);
    } else {
        f->redirect_path = xstrdup("/callback");
        f->redirect_uri = xasprintf("http://127.0.0.1:%u/callback", port);
    }
    return 0;
}

/* ---- headless: follow the authorization endpoint's redirect here ---- */

static void on_headless_redirect(void *owner, Fetch *x)
{
    (void)owner, (void)x; /* the listener takes it from here; the answer does not matter */
}

/* The state in the query of a redirect location is this sign-in's. */
static bool location_state_matches(const OAuthFlow *f, const char *loc)
{
    const char *q = strchr(loc, '?');
    _cleanup_free_ char *query = q ? xstrndup(q + 1, strcspn(q + 1, "#")) : NULL;
    struct evkeyvalq kv;
    bool ok;

    TAILQ_INIT(&kv);
    ok = query && evhttp_parse_query_str(query, &kv) == 0 &&
         state_matches(f, evhttp_find_header(&kv, "state"));
    evhttp_clear_headers(&kv);
    return ok;
}

static void on_headless_authorize(void *owner, Fetch *x)
{
    OAuthFlow *f = owner;
    _cleanup_free_ char *why = NULL, *loc = NULL;

    if (x->status / 100 != 3 || !x->location) {
        _cleanup_free_ char *d = fetch_describe(x);
        return flow_end(f, -EPROTO, "headless sign-in needs a redirect at once, but %s", d);
    }
    loc = xstrdup(x->location);
    f->hx = fetch_free(f->hx);
    if (!startswith(loc, f->redirect_uri))
        return flow_end(f, -EPROTO, "the authorization endpoint redirected elsewhere than %s",
                        f->redirect_uri);
    /* The listener ignores a foreign state; here it is the server's own answer, so it ends. */
    if (!location_state_matches(f, loc))
        return flow_end(f, -EACCES,
                        "the redirect's state does not match this sign-in (a stale "
                        "or forged redirect); run mcpctl login again");
    /* To mcpd's own listener: judged as the redirect URI's host, also for an https server. */
    f->hx =
        fetch_start(f->base, f->redirect_uri, loc, NULL, NULL, NULL, on_headless_redirect, f, &why);
    if (!f->hx)
        flow_end(f, -EIO, "%s", why);
}

static void authorize(OAuthFlow *f)
{
    _cleanup_free_ char *challenge = NULL, *why = NULL;
    StrBuf url = STRBUF_INIT, q = STRBUF_INIT;

    f->step = STEP_WAIT;
    f->verifier = oauth_random_token(PKCE_VERIFIER_BYTES);
    f->state = oauth_random_token(STATE_BYTES);
    if (!f->verifier || !f->state)
        return flow_end(f, -EIO, "no random bytes for PKCE");
    challenge = oauth_pkce_challenge(f->verifier);
    fetch_form_add(&q, "response_type", "code");
    fetch_form_add(&q, "client_id", f->client_id);
    fetch_form_add(&q, "redirect_uri", f->redirect_uri);
    fetch_form_add(&q, "code_challenge", challenge);
    fetch_form_add(&q, "code_challenge_method", "S256");
    fetch_form_add(&q, "state", f->state);
    fetch_form_add(&q, "resource", f->prm_resource);
    if (f->scope)
        fetch_form_add(&q, "scope", f->scope);
    strbuf_printf(&url, "%s%c%s", f->authz_ep, strchr(f->authz_ep, '?') ? '&' : '?',
                  strbuf_str(&q));
    strbuf_deinit(&q);
    log_full(LOG_INFO, f->server, "oauth", "waiting for the redirect on %s", f->redirect_uri);
    if (f->headless) {
        f->hx = fetch_start(f->base, f->resource, strbuf_str(&url), NULL, NULL, NULL,
                            on_headless_authorize, f, &why);
        if (!f->hx)
            flow_end(f, -EIO, "%s", why);
    } else if (f->url_fn) {
        f->url_fn(f->userdata, strbuf_str(&url));
    }
    strbuf_deinit(&url);
}

/* ---- registration ---- */

static void registered(OAuthFlow *f)
{
    if (!f->auth_method)
        f->auth_method = xstrdup(oauth_client_auth_method(f->asm_, f->client_secret));
    if (f->client_credentials)
        return token_request(f);
    authorize(f);
}

static void on_register(void *owner, Fetch *x)
{
    OAuthFlow *f = owner;
    _cleanup_free_ char *why = NULL;
    _cleanup_json_ yajl_val v = fetch_json(x, &why);
    const char *id, *secret, *method;

    if (!v)
        return flow_end(f, -EPROTO, "%s", why);
    id = json_get_string(v, "client_id");
    secret = json_get_string(v, "client_secret");
    method = json_get_string(v, "token_endpoint_auth_method");
    if (!id || !*id || !oauth_url_text_ok(id))
        return flow_end(f, -EPROTO,
                        "the answer from %s has no usable \"client_id\" (printable ASCII, at "
                        "most %d bytes)",
                        x->url, OAUTH_URL_MAX);
    f->client_id = xstrdup(id);
    f->client_secret = secret && *secret ? xstrdup(secret) : NULL;
    if (method && (streq(method, "none") || streq(method, "client_secret_basic") ||
                   streq(method, "client_secret_post")))
        f->auth_method = xstrdup(method);
    registered(f);
}

/*
 * Configured client credentials belong to one authorization server: the one the config names
 * ("oauth.issuer"), else the one they were first used with, recorded in the token store. The
 * resource's metadata chooses the issuer, so a server that changes it (or whoever answers for
 * it) must not get the user's client secret or private key: a sign-in to another issuer stops
 * before anything is sent. Return whether the sign-in may go on (else it has ended).
 */
static bool client_issuer_ok(OAuthFlow *f)
{
    /* Endpoints the config gives (tokenUrl) name the issuer as surely as "oauth.issuer". */
    const char *configured = f->opt_issuer ? f->opt_issuer : f->config_endpoints ? f->issuer : NULL;
    const char *bound =
        configured ? configured : oauth_store_client_issuer(f->resource, f->opt_client_id);
    _cleanup_free_ char *why = NULL;

    if (!bound) {
        if (oauth_store_bind_client(f->resource, f->opt_client_id, f->issuer, &why) < 0) {
            flow_end(f, -EIO,
                     "cannot record which authorization server the configured client "
                     "goes to: %s",
                     why);
            return false;
        }
        log_full(LOG_INFO, f->server, "oauth",
                 "the configured client \"%s\" is now bound to the authorization server %s",
                 f->opt_client_id, f->issuer);
        return true;
    }
    if (streq(bound, f->issuer))
        return true;
    flow_end(f, -EPERM,
             "the client credentials configured for server %s (oauth.clientId \"%s\") belong to "
             "the authorization server %s (%s), but the server now sends the sign-in to %s; "
             "that server gets none of them (no client id, secret or key was sent). If %s is "
             "really the server's new authorization server, set \"oauth\": {\"issuer\": "
             "\"%s\"} in the server's config (with the credentials it gave you); otherwise tell "
             "the server's operator",
             f->server, f->opt_client_id, bound,
             f->opt_issuer ? "oauth.issuer in the config" : "the first one they were used with",
             f->issuer, f->issuer, f->issuer);
    return false;
}

static void register_client(OAuthFlow *f)
{
    _cleanup_json_ yajl_val body = json_object_new(), uris = json_array_new(),
                            grants = json_array_new(), types = json_array_new();
    _cleanup_free_ char *text = NULL;

    f->step = STEP_REGISTER;
    /* The order of the spec: pre-registered, then a metadata document URL, then RFC 7591. */
    if (f->opt_client_id) {
        if (!client_issuer_ok(f))
            return;
        f->client_id = xstrdup(f->opt_client_id);
        f->client_secret = f->opt_client_secret ? xstrdup(f->opt_client_secret) : NULL;
        return registered(f);
    }
    if (f->opt_cimd && json_get(f->asm_, "client_id_metadata_document_supported") &&
        YAJL_IS_TRUE(json_get(f->asm_, "client_id_metadata_document_supported"))) {
        f->client_id = xstrdup(f->opt_cimd);
        return registered(f);
    }
    if (!f->reg_ep)
        return flow_end(f, -ENOTSUP,
                        "the authorization server %s offers no registration: set "
                        "\"oauth\": {\"clientId\": ...} for this server",
                        f->issuer);
    json_object_set(body, "client_name", json_string_new("mcpd"));
    /* SEP-837: a program on the person's machine with a loopback redirect (RFC 8252). */
    json_object_set(body, "application_type", json_string_new("native"));
    json_array_push(uris, json_string_new(f->redirect_uri ? f->redirect_uri : ""));
    json_object_set(body, "redirect_uris", uris);
    uris = NULL;
    json_array_push(grants, json_string_new(f->client_credentials ? "client_credentials"
                                                                  : "authorization_code"));
    json_array_push(grants, json_string_new("refresh_token"));
    json_object_set(body, "grant_types", grants);
    grants = NULL;
    json_array_push(types, json_string_new("code"));
    json_object_set(body, "response_types", types);
    types = NULL;
    json_object_set(body, "token_endpoint_auth_method", json_string_new("none"));
    text = json_to_string(body);
    flow_fetch(f, f->reg_ep, text, "application/json", NULL, on_register);
}

/* ---- authorization server metadata ---- */

static void choose_scope(OAuthFlow *f)
{
    _cleanup_free_ char *ch = f->challenge ? oauth_challenge_param(f->challenge, "scope") : NULL;
    yajl_val as_scopes = json_get_array(f->asm_, "scopes_supported");
    const OAuthToken *old = oauth_store_find(f->resource);

    /* The spec's order: configured, the challenge's scope, then what the resource supports. */
    if (f->opt_scopes)
        f->scope = xstrdup(f->opt_scopes);
    else if (ch && *ch &&
             oauth_scope_text_ok(ch)) /* SEP-2350: with what this issuer granted before (step-up) */
        f->scope = oauth_scope_union(old && streq(old->issuer, f->issuer) ? old->scope : NULL, ch);
    else
        f->scope = oauth_str_or_list(json_get(f->prm, "scopes_supported"));
    /* A refresh token needs offline_access where the server lists it (SEP-2207). */
    if (f->scope && !f->client_credentials && oauth_list_has(as_scopes, "offline_access") &&
        !strstr(f->scope, "offline_access")) {
        char *s = xasprintf("%s offline_access", f->scope);
        free(f->scope);
        f->scope = s;
    }
}

static void endpoints_known(OAuthFlow *f)
{
    _cleanup_free_ char *why = NULL;
    int r;

    choose_scope(f);
    if (!f->prm_resource)
        f->prm_resource = xstrdup(f->resource);
    if (!f->client_credentials && (r = listener_open(f, &why)) < 0)
        return flow_end(f, r, "%s", why);
    register_client(f);
}

static bool take_endpoint(OAuthFlow *f, char **dst, yajl_val meta, const char *key)
{
    const char *s = json_get_string(meta, key);

    if (!s || oauth_url_verdict(f->resource, s) != 0)
        return false;
    *dst = xstrdup(s);
    return true;
}

static void next_candidate(OAuthFlow *f, void (*fn)(void *, Fetch *));

static void legacy_defaults(OAuthFlow *f)
{
    /* 2025-03-26: no metadata at all: the default paths on the server's origin. */
    _cleanup_free_ char *o = oauth_url_origin(f->resource);

    f->authz_ep = xasprintf("%s/authorize", o);
    f->token_ep = xasprintf("%s/token", o);
    f->reg_ep = xasprintf("%s/register", o);
    free(f->issuer);
    f->issuer = xstrdup(o);
    endpoints_known(f);
}

/* The endpoints of authorization server metadata a sign-in may visit or send secrets to. */
static const char *const endpoint_keys[] = {"token_endpoint", "authorization_endpoint",
                                            "registration_endpoint"};

static void on_asmeta(void *owner, Fetch *x)
{
    OAuthFlow *f = owner;
    _cleanup_free_ char *why = NULL;
    yajl_val v = fetch_json(x, &why), pkce;

    if (!v) {
        if (f->i_cand < f->n_cands)
            return next_candidate(f, on_asmeta);
        if (f->legacy)
            return legacy_defaults(f);
        return flow_end(f, -ENOENT, "no metadata for the authorization server %s (last: %s)",
                        f->issuer, why);
    }
    f->asm_ = v;
    /* 2025-03-26 servers name no issuer (no resource metadata): the metadata's own is taken. */
    if (f->legacy && json_get_string(v, "issuer")) {
        if (oauth_check_url_scheme(f->resource, "issuer", json_get_string(v, "issuer"), &why) < 0)
            return flow_end(f, -EPERM, "the metadata at %s: %s", x->url, why);
        free(f->issuer);
        f->issuer = xstrdup(json_get_string(v, "issuer"));
    } else if (oauth_check_metadata_issuer(f->issuer, json_get_string(v, "issuer"), x->url, &why) <
               0) {
        return flow_end(f, -EPERM, "%s", why);
    }
    pkce = json_get_array(v, "code_challenge_methods_supported");
    if (!f->client_credentials && !oauth_list_has(pkce, "S256"))
        return flow_end(f, -ENOTSUP,
                        "the authorization server %s does not advertise PKCE S256 "
                        "(code_challenge_methods_supported); refusing it",
                        f->issuer);
    for (size_t i = 0; i < N_ELEMENTS(endpoint_keys); i++) {
        const char *u = json_get_string(v, endpoint_keys[i]);
        if (u && oauth_check_url_scheme(f->resource, endpoint_keys[i], u, &why) < 0)
            return flow_end(f, -EPERM, "the metadata at %s: %s", x->url, why);
    }
    if (!take_endpoint(f, &f->token_ep, v, "token_endpoint") ||
        (!f->client_credentials && !take_endpoint(f, &f->authz_ep, v, "authorization_endpoint")))
        return flow_end(f, -EPROTO, "the metadata at %s lacks an authorization or token endpoint",
                        x->url);
    take_endpoint(f, &f->reg_ep, v, "registration_endpoint");
    endpoints_known(f);
}

static void set_candidates(OAuthFlow *f, const char *const *fmts, size_t n, const char *origin,
                           const char *path)
{
    for (size_t i = 0; i < f->n_cands; i++)
        free(f->cands[i]);
    f->n_cands = f->i_cand = 0;
    for (size_t i = 0; i < n && f->n_cands < MAX_CANDIDATES; i++) {
        if (!fmts[i])
            continue;
        f->cands[f->n_cands++] = xasprintf(fmts[i], origin, path);
    }
}

static void asmeta_discover(OAuthFlow *f)
{
    /* RFC 8414 with the path inserted, OpenID both ways (spec "Authorization Server Metadata"). */
    static const char *const with_path[] = {"%s/.well-known/oauth-authorization-server%s",
                                            "%s/.well-known/openid-configuration%s",
                                            "%s%s/.well-known/openid-configuration"};
    static const char *const root[] = {"%s/.well-known/oauth-authorization-server%s",
                                       "%s/.well-known/openid-configuration%s"};
    _cleanup_free_ char *o = oauth_url_origin(f->issuer), *p = oauth_url_path(f->issuer);

    f->step = STEP_ASMETA;
    if (!o || !p)
        return flow_end(f, -EINVAL, "the authorization server \"%s\" is not a URL", f->issuer);
    if (*p)
        set_candidates(f, with_path, N_ELEMENTS(with_path), o, p);
    else
        set_candidates(f, root, N_ELEMENTS(root), o, "");
    next_candidate(f, on_asmeta);
}

/* ---- protected resource metadata ---- */

static void on_prm(void *owner, Fetch *x)
{
    OAuthFlow *f = owner;
    _cleanup_free_ char *why = NULL;
    yajl_val v = fetch_json(x, &why), as;
    const char *res;

    if (!v) {
        if (f->i_cand < f->n_cands)
            return next_candidate(f, on_prm);
        /* 2025-03-26 servers have none: the server's origin is the authorization server. */
        log_full(LOG_INFO, f->server, "oauth",
                 "no protected resource metadata (%s): trying the server's origin as the "
                 "authorization server",
                 why);
        f->legacy = true;
        f->issuer = oauth_url_origin(f->resource);
        return asmeta_discover(f);
    }
    f->prm = v;
    res = json_get_string(v, "resource");
    if (res && (!oauth_url_text_ok(res) || !oauth_resource_matches(res, f->resource))) {
        _cleanup_free_ char *shown = oauth_text_shown(res, OAUTH_URL_MAX);
        return flow_end(f, -EPERM,
                        "the metadata at %s is for resource \"%s\", not for %s; "
                        "refusing it",
                        x->url, shown, f->resource);
    }
    f->prm_resource = xstrdup(res ? res : f->resource);
    as = json_get_array(v, "authorization_servers");
    if (!as || !YAJL_IS_STRING(json_array_at(as, 0)))
        return flow_end(f, -EPROTO, "the metadata at %s names no authorization server", x->url);
    if (oauth_check_url_scheme(f->resource, "authorization server", json_array_at(as, 0)->u.string,
                               &why) < 0)
        return flow_end(f, -EPERM, "the metadata at %s: %s", x->url, why);
    f->issuer = xstrdup(json_array_at(as, 0)->u.string);
    asmeta_discover(f);
}

static void next_candidate(OAuthFlow *f, void (*fn)(void *, Fetch *))
{
    const char *url = f->cands[f->i_cand++];

    flow_fetch(f, url, NULL, NULL, NULL, fn);
}

static void prm_discover(OAuthFlow *f)
{
    /* RFC 9728 3.1: the path-inserted location first, then the root. */
    static const char *const fmts[] = {"%s/.well-known/oauth-protected-resource%s",
                                       "%s/.well-known/oauth-protected-resource"};
    _cleanup_free_ char *rm = oauth_challenge_param(f->challenge, "resource_metadata");
    _cleanup_free_ char *o = oauth_url_origin(f->resource), *p = oauth_url_path(f->resource);

    f->step = STEP_PRM;
    if (rm && *rm) {
        _cleanup_free_ char *why = NULL;
        if (oauth_check_url_scheme(f->resource, "resource_metadata", rm, &why) < 0)
            return flow_end(f, -EPERM, "the 401's WWW-Authenticate: %s", why);
        set_candidates(f, NULL, 0, NULL, NULL);
        f->cands[f->n_cands++] = xstrdup(rm);
    } else if (p && *p) {
        set_candidates(f, fmts, N_ELEMENTS(fmts), o, p);
    } else {
        set_candidates(f, fmts + 1, 1, o, "");
    }
    next_candidate(f, on_prm);
}

static void on_probe(void *owner, Fetch *x)
{
    OAuthFlow *f = owner;

    if (x->www_auth.len) {
        free(f->challenge);
        f->challenge = xstrdup(strbuf_str(&x->www_auth));
    }
    prm_discover(f);
}

/* ---- start ---- */

static void flow_begin(OAuthFlow *f)
{
    static const char probe[] =
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":"
        "{\"protocolVersion\":\"" MCP_PROTOCOL_LATEST "\",\"capabilities\":{},"
        "\"clientInfo\":{\"name\":\"mcpd\",\"version\":\"" MCPD_VERSION "\"}}}";

    if (f->opt_token && (f->opt_authz || f->client_credentials)) {
        /* Endpoints from the config: the server's own metadata is not consulted. */
        f->token_ep = xstrdup(f->opt_token);
        f->authz_ep = f->opt_authz ? xstrdup(f->opt_authz) : NULL;
        f->issuer = oauth_url_origin(f->opt_token);
        f->config_endpoints = true;
        return endpoints_known(f);
    }
    if (f->challenge)
        return prm_discover(f);
    /* Learn the challenge (resource_metadata, scope) from an unauthenticated request. */
    flow_fetch(f, f->resource, probe, "application/json",
               "Accept: application/json, text/event-stream", on_probe);
}

static char *opt_string(yajl_val o, const char *a, const char *b)
{
    const char *s = json_get_string(o, a);

    if (!s && b)
        s = json_get_string(o, b);
    return s && *s ? xstrdup(s) : NULL;
}

/* A fixed redirect URI must be plain http on loopback with a port: the listener is there. */
static int take_redirect(OAuthFlow *f, char **whyp)
{
    CURLU *u = curl_url();
    char *scheme = NULL, *host = NULL, *port = NULL, *path = NULL;
    int r = -EINVAL;

    if (curl_url_set(u, CURLUPART_URL, f->opt_redirect, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PORT, &port, 0) == CURLUE_OK &&
        curl_url_get(u, CURLUPART_PATH, &path, 0) == CURLUE_OK && streq(scheme, "http") &&
        (streq(host, "127.0.0.1") || streq(host, "localhost")) && atoi(port) > 0) {
        f->opt_port = atoi(port);
        f->redirect_localhost = streq(host, "localhost");
        f->redirect_path = xstrdup(path);
        r = 0;
    } else {
        *whyp = xasprintf("server %s: \"oauth.redirectUri\" must be http://localhost:PORT/PATH "
                          "or http://127.0.0.1:PORT/PATH (the redirect comes to mcpd)",
                          f->server);
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(port);
    curl_free(path);
    curl_url_cleanup(u);
    return r;
}

/* The grant and what it needs: client credentials, or the enterprise IdP's ID token. */
static int take_grant(OAuthFlow *f, yajl_val o, const char *grant, char **whyp)
{
    if (grant && !streq(grant, "authorization_code") && !streq(grant, "client_credentials") &&
        !streq(grant, "jwt-bearer")) {
        *whyp = xasprintf("server %s: \"oauth.grantType\" must be \"authorization_code\", "
                          "\"client_credentials\" or \"jwt-bearer\", not \"%s\"",
                          f->server, grant);
        return -EINVAL;
    }
    f->jwt_bearer = streq(grant, "jwt-bearer");
    f->client_credentials = streq(grant, "client_credentials") || f->jwt_bearer;
    f->opt_id_token = opt_string(o, "idToken", "id_token");
    f->opt_idp_token_ep = opt_string(o, "idpTokenEndpoint", "idp_token_endpoint");
    f->opt_idp_client_id = opt_string(o, "idpClientId", "idp_client_id");
    if (f->jwt_bearer && (!f->opt_id_token || !f->opt_idp_token_ep)) {
        *whyp = xasprintf("server %s: the jwt-bearer grant needs \"oauth.idToken\" and "
                          "\"oauth.idpTokenEndpoint\" (the enterprise identity provider)",
                          f->server);
        return -EINVAL;
    }
    if (f->client_credentials && (!f->opt_client_id || (!f->opt_client_secret && !f->opt_key))) {
        *whyp = xasprintf("server %s: the client_credentials grant needs \"oauth.clientId\" and "
                          "\"oauth.clientSecret\" or \"oauth.privateKey\"",
                          f->server);
        return -EINVAL;
    }
    return 0;
}

/* The endpoints a config names get the checks of those a server names (issue 39). */
static int check_config_urls(OAuthFlow *f, char **whyp)
{
    const struct {
        const char *field, *url;
    } urls[] = {
        {"tokenUrl", f->opt_token},
        {"authorizationUrl", f->opt_authz},
        {"idpTokenEndpoint", f->opt_idp_token_ep},
    };

    for (size_t i = 0; i < N_ELEMENTS(urls); i++)
        if (urls[i].url &&
            oauth_check_config_url(f->server, f->resource, urls[i].field, urls[i].url, whyp) < 0)
            return -EINVAL;
    return 0;
}

static int take_options(OAuthFlow *f, yajl_val o, char **whyp)
{
    _cleanup_free_ char *grant = NULL;
    yajl_val scopes;
    int r;

    if (o && !YAJL_IS_OBJECT(o)) {
        *whyp = xasprintf("server %s: \"oauth\" must be an object", f->server);
        return -EINVAL;
    }
    f->opt_client_id = opt_string(o, "clientId", "client_id");
    f->opt_client_secret = opt_string(o, "clientSecret", "client_secret");
    f->opt_cimd = opt_string(o, "clientMetadataUrl", "client_metadata_url");
    f->opt_key = opt_string(o, "privateKey", "private_key");
    f->opt_authz = opt_string(o, "authorizationUrl", "authorization_url");
    f->opt_token = opt_string(o, "tokenUrl", "token_url");
    f->opt_redirect = opt_string(o, "redirectUri", "redirect_uri");
    f->opt_issuer = opt_string(o, "issuer", NULL);
    if (f->opt_redirect && (r = take_redirect(f, whyp)) < 0)
        return r;
    f->opt_alg = opt_string(o, "signingAlgorithm", "signing_algorithm");
    grant = opt_string(o, "grantType", "grant_type");
    scopes = json_get(o, "scopes");
    if (!scopes)
        scopes = json_get(o, "scope");
    f->opt_scopes = oauth_str_or_list(scopes);
    if (json_get(o, "callbackPort") || json_get(o, "redirectPort")) {
        if (json_get_int(o, json_get(o, "callbackPort") ? "callbackPort" : "redirectPort",
                         &f->opt_port) < 0 ||
            f->opt_port < 0 || f->opt_port > 65535) {
            *whyp = xasprintf("server %s: \"oauth.callbackPort\" must be a port number (0-65535)",
                              f->server);
            return -EINVAL;
        }
    }
    if ((r = take_grant(f, o, grant, whyp)) < 0 || (r = check_config_urls(f, whyp)) < 0)
        return r;
    if (f->opt_cimd && !startswith(f->opt_cimd, "https://")) {
        *whyp =
            xasprintf("server %s: \"oauth.clientMetadataUrl\" must be an https:// URL", f->server);
        return -EINVAL;
    }
    return 0;
}

int oauth_flow_start(OAuthFlow **fp, struct event_base *base, const OAuthRequest *req,
                     OAuthUrlFn url_fn, OAuthDoneFn done_fn, void *userdata, char **whyp)
{
    OAuthFlow *f = xcalloc(1, sizeof(*f));
    struct timeval tv = {OAUTH_FLOW_TIMEOUT_MS / 1000, 0};
    int r;

    f->base = base;
    f->server = xstrdup(req->server);
    f->resource = xstrdup(req->resource);
    f->headless = req->headless;
    f->url_fn = url_fn;
    f->done_fn = done_fn;
    f->userdata = userdata;
    if ((r = take_options(f, req->options, whyp)) < 0) {
        oauth_flow_free(f);
        return r;
    }
    f->ev_timeout = evtimer_new(base, on_flow_timeout, f);
    f->ev_next = event_new(base, -1, 0, on_next, f);
    evtimer_add(f->ev_timeout, &tv);
    *fp = f;
    log_full(LOG_INFO, f->server, "oauth", "signing in to %s", f->resource);
    if (req->challenge && *req->challenge)
        f->challenge = xstrdup(req->challenge);
    /* The first step runs from the loop: callbacks never run inside this call. */
    event_active(f->ev_next, EV_TIMEOUT, 0);
    return 0;
}

void oauth_shutdown(void)
{
    oauth_listener_shutdown();
    oauth_refresh_shutdown();
    oauth_store_reset();
}
