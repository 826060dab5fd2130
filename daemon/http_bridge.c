/* http_bridge: an HTTP request through a socketpair (see http_bridge.h). */
#include "http_bridge.h"
#include "frame.h"
#include "rpc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK 65536

struct http_bridge {
	uv_pipe_t pipe;
	uv_write_t wr;
	uv_shutdown_t sh;
	struct frame_reader fr;
	char *req;          /* the framed request (until written) */
	char *rbuf;         /* while reading */
	const struct http_bridge_ops *ops;
	void *ctx;
	int finished;       /* no reply callback any more (ran, streams, cancelled) */
	int closing;
	int closed;         /* the pipe's close callback ran */
	int released;       /* its owner is done with it */
	/* a streaming answer: its NDJSON lines not yet pulled (from pos) */
	int streaming;
	int reading;
	int ended;          /* 0, HTTP_BRIDGE_END or HTTP_BRIDGE_BROKEN */
	struct buf pend;
	size_t pos;
	int want;           /* a pull found nothing: wake when there is */
	void (*wake)(void *ctx);
	void *wake_ctx;
};

static void destroy(struct http_bridge *b)
{
	frame_reader_free(&b->fr);
	buf_free(&b->pend);
	free(b->req);
	free(b->rbuf);
	free(b);
}

static void on_closed(uv_handle_t *h)
{
	struct http_bridge *b = h->data;
	b->closed = 1;
	if (b->released)
		destroy(b);
}

static void bridge_close(struct http_bridge *b)
{
	if (b->closing)
		return;
	b->closing = 1;
	b->reading = 0;
	uv_close((uv_handle_t *)&b->pipe, on_closed);
}

/* Ends a one-reply request: reply once (unless cancelled), then the pipe
 * closes and the bridge frees itself. */
static void stream_end(struct http_bridge *b, int how);

static void finish(struct http_bridge *b, int rc, char *body, size_t len, const char *msg)
{
	if (b->streaming) { /* its owner still pulls */
		free(body);
		stream_end(b, HTTP_BRIDGE_BROKEN);
		return;
	}
	if (!b->finished) {
		b->finished = 1;
		b->ops->reply(b->ctx, rc, body, len, msg);
	} else {
		free(body);
	}
	b->released = 1;
	bridge_close(b);
}

static int is_rows(const char *msg, size_t len)
{
	size_t n = sizeof RPC_ROWS_PREFIX - 1;
	return len > n && !memcmp(msg, RPC_ROWS_PREFIX, n);
}

/* A pull that found nothing learns that there is something now. */
static void notify(struct http_bridge *b)
{
	if (b->want && b->wake && !b->released) {
		b->want = 0;
		b->wake(b->wake_ctx);
	}
}

/* The streaming answer ends (how: HTTP_BRIDGE_END or _BROKEN). */
static void stream_end(struct http_bridge *b, int how)
{
	if (!b->ended)
		b->ended = how;
	bridge_close(b);
	notify(b);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct http_bridge *b = h->data;
	(void)hint;
	if (!b->rbuf)
		b->rbuf = malloc(READ_CHUNK);
	*buf = uv_buf_init(b->rbuf, b->rbuf ? READ_CHUNK : 0);
}

/* One whole frame (msg taken over) of a request that may stream.
 * Returns 1 when the reading is over. */
static int on_frame(struct http_bridge *b, char *msg, size_t mlen)
{
	int rows = is_rows(msg, mlen);
	if (!b->streaming && !rows) {
		uv_read_stop((uv_stream_t *)&b->pipe);
		finish(b, 0, msg, mlen, NULL);
		return 1;
	}
	buf_append(&b->pend, msg, mlen);
	buf_putc(&b->pend, '\n');
	free(msg);
	if (b->pend.failed) {
		stream_end(b, HTTP_BRIDGE_BROKEN);
		return 1;
	}
	if (!b->streaming) {
		b->streaming = 1;
		b->finished = 1; /* the owner pulls from now on */
		b->ops->streams(b->ctx);
	}
	if (!rows) { /* the final reply, or the error that ends the answer */
		stream_end(b, HTTP_BRIDGE_END);
		return 1;
	}
	return 0;
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct http_bridge *b = st->data;
	const char *p = buf->base;
	size_t len = n > 0 ? (size_t)n : 0;
	struct err e;

	if (n < 0 && b->streaming) {
		stream_end(b, HTTP_BRIDGE_BROKEN);
		return;
	}
	if (n == UV_EOF) {
		/* a notification has no reply: the server closes at once */
		if (frame_reader_idle(&b->fr))
			finish(b, 0, NULL, 0, NULL);
		else
			finish(b, ERR_DATA, NULL, 0, "The session closed the connection in the middle of its answer");
		return;
	}
	if (n < 0) {
		finish(b, ERR_DATA, NULL, 0, "The session reset the connection without answering");
		return;
	}
	err_clear(&e);
	while (len) {
		char *msg = NULL;
		size_t mlen = 0;
		int rc = frame_reader_feed(&b->fr, &p, &len, &msg, &mlen, &e);
		if (rc == FRAME_MORE)
			break;
		if (rc != FRAME_DONE) {
			if (b->streaming)
				stream_end(b, HTTP_BRIDGE_BROKEN);
			else
				finish(b, rc, NULL, 0, e.msg);
			return;
		}
		if (!b->ops->streams) {
			uv_read_stop(st);
			finish(b, 0, msg, mlen, NULL);
			return;
		}
		if (on_frame(b, msg, mlen))
			return;
	}
	if (b->streaming) {
		/* enough read ahead of the HTTP client: the server waits */
		if (b->pend.len - b->pos >= HTTP_BRIDGE_HOLD) {
			uv_read_stop(st);
			b->reading = 0;
		}
		notify(b);
	}
}

static void on_shut(uv_shutdown_t *req, int status)
{
	(void)req;
	(void)status;
}

static void on_written(uv_write_t *req, int status)
{
	struct http_bridge *b = req->data;
	free(b->req);
	b->req = NULL;
	if (b->closing)
		return;
	if (status < 0) {
		finish(b, ERR_DATA, NULL, 0, "The session closed the connection before reading the request");
		return;
	}
	/* half-close: the server answers what was asked, then closes */
	b->sh.data = b;
	uv_shutdown(&b->sh, (uv_stream_t *)&b->pipe, on_shut);
}

int http_bridge_call(uv_loop_t *loop, struct server *srv, const char *body,
                     size_t len, const struct http_bridge_ops *ops, void *ctx,
                     struct http_bridge **out, struct err *e)
{
	struct http_bridge *b;
	int sv[2];

	if (len > FRAME_REQUEST_MAX)
		return err_set(e, ERR_LIMIT, "The request is larger than the session's request limit");
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) != 0)
		return err_sys(e, ERR_DATA, "Cannot open a connection to the session");
	if (!(b = calloc(1, sizeof *b)) || !(b->req = malloc(len + FRAME_HEADER))) {
		free(b);
		close(sv[0]);
		close(sv[1]);
		return err_set(e, ERR_NOMEM, "Out of memory");
	}
	b->req[0] = (char)(len >> 24);
	b->req[1] = (char)(len >> 16);
	b->req[2] = (char)(len >> 8);
	b->req[3] = (char)len;
	memcpy(b->req + FRAME_HEADER, body, len);
	b->ops = ops;
	b->ctx = ctx;
	buf_init(&b->pend, 0);
	frame_reader_init(&b->fr, FRAME_RESPONSE_MAX);
	uv_pipe_init(loop, &b->pipe, 0);
	b->pipe.data = b;
	b->released = 1; /* until *out is handed over: a failure frees it */
	if (uv_pipe_open(&b->pipe, sv[0]) != 0) {
		close(sv[0]);
		close(sv[1]);
		b->finished = 1;
		bridge_close(b);
		return err_set(e, ERR_DATA, "Cannot open a connection to the session");
	}
	/* the server takes sv[1] over, also when it refuses it */
	if (server_adopt(srv, sv[1], ops->streams != NULL, e)) {
		b->finished = 1;
		bridge_close(b);
		return e->code;
	}
	uv_buf_t wb = uv_buf_init(b->req, (unsigned)(len + FRAME_HEADER));
	b->wr.data = b;
	if (uv_write(&b->wr, (uv_stream_t *)&b->pipe, &wb, 1, on_written) != 0 ||
	    uv_read_start((uv_stream_t *)&b->pipe, on_alloc, on_read) != 0) {
		b->finished = 1;
		bridge_close(b);
		return err_set(e, ERR_DATA, "Cannot send the request to the session");
	}
	b->reading = 1;
	b->released = 0;
	*out = b;
	return 0;
}

ssize_t http_bridge_pull(struct http_bridge *b, char *buf, size_t max)
{
	size_t avail = b->pend.len - b->pos, n = avail < max ? avail : max;

	if (n) {
		memcpy(buf, b->pend.data + b->pos, n);
		b->pos += n;
		if (b->pos == b->pend.len) {
			buf_reset(&b->pend);
			b->pos = 0;
		} else if (b->pos >= HTTP_BRIDGE_HOLD) {
			memmove(b->pend.data, b->pend.data + b->pos, b->pend.len - b->pos);
			b->pend.len -= b->pos;
			b->pos = 0;
		}
	} else if (b->ended) {
		return b->ended;
	} else {
		b->want = 1;
	}
	if (!b->reading && !b->closing && b->pend.len - b->pos < HTTP_BRIDGE_HOLD &&
	    uv_read_start((uv_stream_t *)&b->pipe, on_alloc, on_read) == 0)
		b->reading = 1;
	return (ssize_t)n;
}

void http_bridge_watch(struct http_bridge *b, void (*wake)(void *ctx), void *ctx)
{
	b->wake = wake;
	b->wake_ctx = ctx;
}

void http_bridge_cancel(struct http_bridge *b)
{
	b->finished = 1;
	b->released = 1;
	if (b->closed)
		destroy(b);
	else
		bridge_close(b);
}
