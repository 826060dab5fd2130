/*
 * http_bridge: one JSON-RPC request of the HTTP transport, answered by
 * the session's own unix-socket transport.
 *
 * Each request gets a socketpair: one end is handed to the server
 * (server_adopt), which admits, frames, schedules and answers it exactly
 * as it would a local client (the same fairness, limits and generation
 * rules, byte-identical replies); the bridge writes the request as one
 * frame on the other end, half-closes it, and reads the reply.
 * Everything happens on the loop thread, without blocking it.
 *
 * A request that may stream (the HTTP client accepts NDJSON) reads
 * frames as they come: when the first one is a `rows` notification the
 * answer streams, and its frames become lines of NDJSON (each frame's
 * JSON and a newline) that the HTTP side pulls as its client takes them.
 * The bridge holds at most about BRIDGE_HOLD bytes of them: past that it
 * stops reading its socket, so the server's own back-pressure pauses the
 * statement (a slow HTTP reader holds only its own statement).
 */
#ifndef DSIGHT_HTTP_BRIDGE_H
#define DSIGHT_HTTP_BRIDGE_H

#include <stddef.h>
#include <sys/types.h>
#include <uv.h>

#include "base/err.h"
#include "server.h"

/* NDJSON bytes read ahead of the HTTP client, at most (plus one frame). */
#define HTTP_BRIDGE_HOLD ((size_t)1 << 20)

struct http_bridge;

/*
 * Called once on the loop with the reply: rc 0 and body (malloc'd,
 * len bytes, owned by the callee: free) the JSON-RPC response, or body
 * NULL and len 0 when the request was a notification (no reply); rc != 0
 * and msg when no reply came.
 */
typedef void (*http_bridge_fn)(void *ctx, int rc, char *body, size_t len,
                               const char *msg);

/* What the bridge calls back (borrowed for the request's life). */
struct http_bridge_ops {
	http_bridge_fn reply;   /* a reply in one piece */
	/* NULL: one reply per request.  Else the answer may stream: called
	 * once, instead of reply, when it does; the HTTP side then owns the
	 * bridge (http_bridge_pull, http_bridge_cancel once done). */
	void (*streams)(void *ctx);
};

/*
 * Sends body (len bytes, copied; at most FRAME_REQUEST_MAX) to srv.  On
 * success *out is the running request (cancel it with http_bridge_cancel,
 * or let it end: reply runs, then it frees itself).  On failure (the
 * server stops, too many descriptors, out of memory) e says why and no
 * callback runs.
 */
int http_bridge_call(uv_loop_t *loop, struct server *srv, const char *body,
                     size_t len, const struct http_bridge_ops *ops, void *ctx,
                     struct http_bridge **out, struct err *e);

enum { HTTP_BRIDGE_END = -1, HTTP_BRIDGE_BROKEN = -2 };

/*
 * A streaming answer: copies up to max bytes of its NDJSON into buf and
 * returns their number; 0 when none is there yet (wake(ctx) is then
 * called once, on the loop, when there is); HTTP_BRIDGE_END once every
 * line was taken and the last was the final reply (or error reply);
 * HTTP_BRIDGE_BROKEN when the session's side closed before it.
 */
ssize_t http_bridge_pull(struct http_bridge *b, char *buf, size_t max);
/* Who to wake when http_bridge_pull returned 0 (ctx borrowed). */
void http_bridge_watch(struct http_bridge *b, void (*wake)(void *ctx), void *ctx);
/* The HTTP side is done or went away: no callback runs any more; an
 * answer not yet complete is abandoned (the server sees its client hang
 * up and cancels the query), and the bridge is freed. */
void http_bridge_cancel(struct http_bridge *b);

#endif
