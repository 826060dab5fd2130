/*
 * server: the libuv side of dsightd.
 *
 * Owns the listening socket's handle, the connections (peer-credential
 * check on accept: only the server's own uid), frame decoding, request
 * dispatch (hello, query, status, shutdown), pipelining with responses in
 * request order, per-connection write queues with back-pressure and a cap
 * (a client that stops reading is throttled, then dropped, never stalling
 * others), and the orderly stop: stop accepting, finish in-flight requests,
 * flush, close, then tell the caller.  Queries run on libuv's work queue.
 */
#ifndef DSIGHT_SERVER_H
#define DSIGHT_SERVER_H

#include <stdint.h>
#include <sys/types.h>
#include <uv.h>

#include "base/err.h"
#include "lifetime.h"
#include "session.h"

/* What the server reports about itself (borrowed for its lifetime). */
struct server_info {
	const char *session_name;
	const char *socket_path;
	const char *started_utc;     /* ISO 8601 */
	uint64_t started_ms;         /* uv_now at start */
	int64_t idle_timeout_ms;     /* < 0: disabled */
	/* One line for the log (no trailing newline). */
	void (*log)(void *log_ctx, const char *msg);
	void *log_ctx;
};

struct server;

/* Called once, on the loop thread, when a stop has drained every
 * connection and request.  why is the stop reason. */
typedef void (*server_stopped_fn)(void *ctx, const char *why);

/*
 * Starts serving on listen_fd (a bound, listening unix socket; the server
 * takes it over).  *out is owned by the caller: after the stopped callback
 * ran and the loop finished, call server_free.
 */
int server_start(uv_loop_t *loop, int listen_fd, const struct server_info *info,
                 struct session *sess, struct lifetime *lt,
                 server_stopped_fn stopped, void *ctx, struct server **out,
                 struct err *e);
/* Begins the orderly stop (idempotent; the first reason wins). */
void server_stop(struct server *srv, const char *why);
void server_free(struct server *srv);

#endif
