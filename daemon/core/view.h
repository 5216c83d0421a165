// SPDX-License-Identifier: MIT
// view: a workspace's tool view, the merged tools/list its agents see, built once per change.
#pragma once

#include <stddef.h>

#include <yajl/yajl_tree.h>

#include "daemon/core/manager.h"

/*
 * The view's JSON ({"tools":[...]}), built once per change and shared by reference: the
 * workspace holds one reference, and each agent's output queue one until it has been written.
 */
typedef struct ViewText {
    unsigned refs;
    size_t len;
    char *data; /* NUL-terminated */
} ViewText;

/** Drop one reference (safe on NULL); returns NULL. */
ViewText *view_text_unref(ViewText *vt);

/* ws_view_ensure() and ws_view_find() are declared in manager-private.h. */

/** Free the view (safe on a workspace that never built one). */
void ws_view_deinit(Workspace *ws);
/** Answer a tools/list with the view: its bytes are queued by reference, never copied. */
void ws_view_send(Workspace *ws, Peer *p, yajl_val id);
