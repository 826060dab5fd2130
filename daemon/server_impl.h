/*
 * server_impl: the state the transport's two modules share (server.c: the
 * listener, framing, replies and the stop; admit.c: who gets a slot and
 * when a connection is closed for being idle or half-open).  Private to
 * daemon/server.c and daemon/admit.c.
 */
#ifndef DSIGHT_SERVER_IMPL_H
#define DSIGHT_SERVER_IMPL_H

#include <stddef.h>
#include <stdint.h>
#include <uv.h>

#include "base/buf.h"
#include "frame.h"

struct server_info;
struct server_handler;
struct server;
struct server_conn;

/* What admit.c may do to connections: the transport's own actions,
 * reached through the server so that admit never calls server.c by name
 * (server.c calls admit; the layers stay one-way). */
struct server_actions {
	/* one line for the log (printf format) */
	void (*log)(struct server *srv, const char *fmt, ...)
		__attribute__((format(printf, 2, 3)));
	/* closes c now (unlinked, its waiting queries cancelled); its memory
	 * goes with its last reference */
	void (*close)(struct server_conn *c);
	/* answers c with one error frame (id null), then closes it once the
	 * frame is written */
	void (*refuse)(struct server_conn *c, int code, const char *msg);
};

/* One request's place in its connection's response order. */
struct server_reply {
	struct server_reply *next;
	struct server_conn *c;
	int done;
	int discard;      /* a notification: no reply is sent */
	int close_after;  /* close the connection once this is written */
	struct buf out;   /* the framed response (a stream: its unsent frames) */
	size_t counted;   /* bytes of out already counted in the queue */
	int streams;      /* out holds whole frames before done (server_reply_send) */
};

struct server_conn {
	uv_pipe_t pipe;
	uv_shutdown_t shut;
	struct server *srv;
	struct server_conn *prev, *next;
	struct frame_reader fr;
	void *q;            /* the handler's queue of this connection */
	struct server_reply *head, *tail;
	int npending;     /* replies not yet handed to uv_write */
	size_t queued;    /* bytes of done replies and writes in flight */
	int writes;       /* writes in flight */
	int refs;         /* the handle + requests in flight */
	int reading;
	int no_more;      /* reading is over; close once drained */
	int shutting;     /* uv_shutdown issued */
	int closing;      /* uv_close issued */
	int adopted;      /* served for another transport, one reply a request */
	char *rbuf;       /* allocated while a read is being decoded */
	size_t rpos, rlen;
	uint64_t progress_ms; /* last time the client took some bytes */
	size_t last_wq;
	uint64_t active_ms;   /* accepted, or the last request or written reply */
	uint64_t partial_ms;  /* a frame started (0: between frames) */
	size_t held;          /* bytes of the partial frame (its buffer) */
};

struct server {
	uv_loop_t *loop;
	uv_pipe_t listener;
	uv_timer_t tick;
	uv_idle_t resume;   /* decodes left-over frames on the next turn */
	uv_check_t turn;    /* after each poll: the accept budget is renewed */
	int accepted;       /* connections accepted this turn */
	int accept_deferred; /* one waits in libuv, not accepted yet */
	int timers_closing;
	struct server_info *info;         /* owned copy */
	const struct server_actions *act; /* for admit.c */
	const struct server_handler *ops; /* the handler (dispatch) */
	void *h;
	void (*stopped)(void *ctx, const char *why);
	void *ctx;
	struct server_conn *conns;
	int nconns;
	int max_conns;      /* MAX_CONNS, or fewer when descriptors are short */
	int64_t conn_idle_ms, frame_ms; /* server_info's (0: admit.c's defaults) */
	size_t partial;     /* bytes held by partial frames (sum of held) */
	uint64_t evicted_ms; /* last log line about evictions */
	int idle_closed;    /* idle connections closed since the last tick */
	int frame_timeouts; /* connections timed out in a frame, the same */
	int evicted;        /* connections closed for room since that line */
	int handles_open;   /* listener + tick timer + resume + turn */
	int stopping, done;
	int stop_failed;    /* the queries not started were failed */
	uint64_t stop_ms;
	uint64_t refused_ms;
	size_t freed;       /* bytes freed since the last malloc_trim */
	void (*stop_hook)(void *ctx); /* another transport's stop (server_on_stop) */
	void *stop_ctx;
	char why[128];
};

#endif
