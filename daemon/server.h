/*
 * server: the transport of dsightd.
 *
 * Owns the listening socket's handle, the connections (bounded in number:
 * when full, the longest idle one is closed to make room, else the oldest
 * partial frame, else the newcomer gets "Too many connections"; closed
 * after 60 s idle, or 10 s into a frame that is not whole (both settable:
 * dsightd --conn-idle-timeout, --frame-timeout); partial frames
 * hold at most 128 MiB in all; 16 accepted per turn of the loop;
 * peer-credential check on accept: only the server's own uid), frame
 * decoding with back-pressure (at most SERVER_MAX_PENDING requests of a
 * connection are decoded ahead of their replies, none while 1 MiB of its
 * replies is unsent; the rest stays unread, 32 frames per turn of the
 * loop), read buffers allocated only while a read is being decoded, the
 * replies in request order with a cap on a connection's unsent bytes (no
 * query of it starts at 96 MiB; a reply beyond drops it), the dropping of
 * clients that take nothing for 20 s (checked on every reply and every
 * second), memory returned to the system (malloc_trim),
 * and the orderly stop: stop accepting, let accepted replies finish for
 * clients that keep reading, close, then tell the caller.  What a request
 * means is its handler's business (struct server_handler: dispatch.c,
 * given by main.c), so the transport never calls the dispatcher by name.
 */
#ifndef DSIGHT_SERVER_H
#define DSIGHT_SERVER_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <jansson.h>
#include <uv.h>

#include "base/err.h"

/* What the server reports about itself (borrowed for its lifetime). */
struct server_info {
	const char *session_name;
	const char *socket_path;
	const char *http_url;        /* the HTTP listener's URL, or NULL */
	const char *started_utc;     /* ISO 8601 */
	uint64_t started_ms;         /* uv_now at start */
	int64_t idle_timeout_ms;     /* < 0: disabled */
	/* a connection with nothing asked or owed for this long is closed,
	 * and one whose started frame is not whole after frame_timeout_ms
	 * (0: the defaults, 60 s and 10 s) */
	int64_t conn_idle_ms;
	int64_t frame_timeout_ms;
	/* One line for the log (no trailing newline). */
	void (*log)(void *log_ctx, const char *msg);
	void *log_ctx;
};

struct server;

/* Called once, on the loop thread, when a stop has drained every
 * connection and request.  why is the stop reason. */
typedef void (*server_stopped_fn)(void *ctx, const char *why);

struct server_conn;

/* What the server asks of its handler (loop thread only).  h is the
 * handler's context, queue what queue_new returned for a connection. */
struct server_handler {
	/* a new connection's queue; NULL when out of memory (c is closed) */
	void *(*queue_new)(void *h, struct server_conn *c);
	/* the connection is gone (frees queue) */
	void (*queue_close)(void *queue);
	/* one request frame of the connection */
	void (*frame)(void *queue, const char *msg, size_t len);
	/* a connection can take more work */
	void (*kick)(void *h);
	/* the server stops: new requests get an error */
	void (*stop)(void *h);
	/* the stop took too long: fail what has not started */
	void (*fail_waiting)(void *h);
	/* work in flight (the stop completes at 0) */
	int (*busy)(const void *h);
};

/*
 * Starts serving on listen_fd (a bound, listening unix socket; the server
 * takes it over).  Connections are accepted once the loop runs: call
 * server_set_handler before that.  *out is owned by the caller: after the
 * stopped callback ran and the loop finished, call server_free.
 */
int server_start(uv_loop_t *loop, int listen_fd, const struct server_info *info,
                 server_stopped_fn stopped, void *ctx, struct server **out,
                 struct err *e);
/* The handler of srv's requests (ops and h borrowed for srv's lifetime). */
void server_set_handler(struct server *srv, const struct server_handler *ops,
                        void *h);
/* fn(ctx) is called (loop thread) when the orderly stop begins: another
 * transport stops accepting too (one hook; borrowed for srv's lifetime). */
void server_on_stop(struct server *srv, void (*fn)(void *ctx), void *ctx);
/*
 * Serves fd (a connected stream socket, such as one end of a socketpair
 * whose other end another transport of this process drives) as if it had
 * been accepted: admitted, framed and answered like any connection.  The
 * server takes fd over, also on failure (ERR_DATA when the server stops
 * or refuses it, ERR_NOMEM).  streams: the other end reads frames as they
 * come (a streamed sql answer is then sent in batches), else it reads one
 * reply per request.  Loop thread only.
 */
int server_adopt(struct server *srv, int fd, int streams, struct err *e);
/* The server's copy of its info (valid until server_free). */
const struct server_info *server_info(const struct server *srv);
/* Begins the orderly stop (idempotent; the first reason wins). */
void server_stop(struct server *srv, const char *why);
void server_free(struct server *srv);

/* ---- services of the transport for dispatch (loop thread only) ---- */

#define SERVER_MAX_PENDING 32  /* replies of a connection not yet written */

struct server_reply;

/* Number of open connections. */
int server_connections(const struct server *srv);
/* A new reply slot at the end of c's response order; NULL when out of
 * memory (c is then closed).  The slot belongs to c. */
struct server_reply *server_reply_new(struct server_conn *c);
/* The buffer the framed response is written into. */
struct buf *server_reply_buf(struct server_reply *r);
/* discard: a notification, nothing is sent; close_after: c stops reading
 * and closes once this reply is written. */
void server_reply_flags(struct server_reply *r, int discard, int close_after);
/* The reply is complete: it is sent in its turn.  Runs the checks of a
 * reply (a client that stopped reading is dropped). */
void server_reply_done(struct server_conn *c, struct server_reply *r);
/* Appends the whole frames in frames (emptied) to r, a reply that streams:
 * they are sent as soon as every earlier reply of c was; last: r is
 * complete (as server_reply_done).  Runs the checks of a reply. */
void server_reply_send(struct server_conn *c, struct server_reply *r,
                       struct buf *frames, int last);
/* Bytes of c's replies written or done but not yet taken by its client. */
size_t server_conn_unsent(const struct server_conn *c);
/* 1 when c's client reads frames as they come (a socket client, or a
 * connection adopted with streams); 0 for one adopted for one reply. */
int server_conn_streams(const struct server_conn *c);
/* new + an error frame + done. */
void server_reply_error(struct server_conn *c, const json_t *id, int code,
                        const char *msg);
/* Replaces the contents of o with a framed error response. */
void server_error_frame(struct buf *o, const json_t *id, int code,
                        const char *msg);
/* A reference keeps c's memory (not its socket) alive. */
void server_conn_ref(struct server_conn *c);
void server_conn_unref(struct server_conn *c);
/* The handler finished some work: a stop may now complete. */
void server_work_done(struct server *srv);
/* 1 when c may start another query: open and under its unsent-bytes cap. */
int server_conn_ready(const struct server_conn *c);

#endif
