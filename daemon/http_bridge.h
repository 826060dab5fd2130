/*
 * http_bridge: one JSON-RPC request of the HTTP transport, answered by
 * the session's own unix-socket transport.
 *
 * Each request gets a socketpair: one end is handed to the server
 * (server_adopt), which admits, frames, schedules and answers it exactly
 * as it would a local client (the same fairness, limits and generation
 * rules, byte-identical replies); the bridge writes the request as one
 * frame on the other end, half-closes it, and reads the one reply frame.
 * Everything happens on the loop thread, without blocking it.
 */
#ifndef DSIGHT_HTTP_BRIDGE_H
#define DSIGHT_HTTP_BRIDGE_H

#include <stddef.h>
#include <uv.h>

#include "base/err.h"
#include "server.h"

struct http_bridge;

/*
 * Called once on the loop with the reply: rc 0 and body (malloc'd,
 * len bytes, owned by the callee: free) the JSON-RPC response, or body
 * NULL and len 0 when the request was a notification (no reply); rc != 0
 * and msg when no reply came.
 */
typedef void (*http_bridge_fn)(void *ctx, int rc, char *body, size_t len,
                               const char *msg);

/*
 * Sends body (len bytes, copied; at most FRAME_REQUEST_MAX) to srv.  On
 * success *out is the running request (cancel it with http_bridge_cancel,
 * or let it end: fn runs, then it frees itself).  On failure (the server
 * stops, too many descriptors, out of memory) e says why and fn is not
 * called.
 */
int http_bridge_call(uv_loop_t *loop, struct server *srv, const char *body,
                     size_t len, http_bridge_fn fn, void *ctx,
                     struct http_bridge **out, struct err *e);
/* The HTTP side went away: fn is not called; the server sees its client
 * hang up (its waiting query is cancelled). */
void http_bridge_cancel(struct http_bridge *b);

#endif
