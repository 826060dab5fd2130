/* http_bridge: an HTTP request through a socketpair (see http_bridge.h). */
#include "http_bridge.h"
#include "frame.h"

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
	http_bridge_fn fn;
	void *ctx;
	int finished;       /* fn ran or was cancelled */
	int closing;
};

static void on_closed(uv_handle_t *h)
{
	struct http_bridge *b = h->data;
	frame_reader_free(&b->fr);
	free(b->req);
	free(b->rbuf);
	free(b);
}

static void bridge_close(struct http_bridge *b)
{
	if (b->closing)
		return;
	b->closing = 1;
	uv_close((uv_handle_t *)&b->pipe, on_closed);
}

/* Ends the request: fn once (unless cancelled), then the pipe closes. */
static void finish(struct http_bridge *b, int rc, char *body, size_t len, const char *msg)
{
	if (!b->finished) {
		b->finished = 1;
		b->fn(b->ctx, rc, body, len, msg);
	} else {
		free(body);
	}
	bridge_close(b);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
	struct http_bridge *b = h->data;
	(void)hint;
	if (!b->rbuf)
		b->rbuf = malloc(READ_CHUNK);
	*buf = uv_buf_init(b->rbuf, b->rbuf ? READ_CHUNK : 0);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *buf)
{
	struct http_bridge *b = st->data;
	const char *p = buf->base;
	size_t len = n > 0 ? (size_t)n : 0;
	char *msg = NULL;
	size_t mlen = 0;
	struct err e;

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
	int rc = frame_reader_feed(&b->fr, &p, &len, &msg, &mlen, &e);
	if (rc == FRAME_DONE) {
		uv_read_stop(st);
		finish(b, 0, msg, mlen, NULL);
	} else if (rc != FRAME_MORE) {
		finish(b, rc, NULL, 0, e.msg);
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
                     size_t len, http_bridge_fn fn, void *ctx,
                     struct http_bridge **out, struct err *e)
{
	struct http_bridge *b;
	int sv[2];

	if (len > FRAME_REQUEST_MAX)
		return err_set(e, ERR_LIMIT, "The request is larger than the 1 MiB limit");
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
	b->fn = fn;
	b->ctx = ctx;
	frame_reader_init(&b->fr, FRAME_RESPONSE_MAX);
	uv_pipe_init(loop, &b->pipe, 0);
	b->pipe.data = b;
	if (uv_pipe_open(&b->pipe, sv[0]) != 0) {
		close(sv[0]);
		close(sv[1]);
		b->finished = 1;
		bridge_close(b);
		return err_set(e, ERR_DATA, "Cannot open a connection to the session");
	}
	/* the server takes sv[1] over, also when it refuses it */
	if (server_adopt(srv, sv[1], e)) {
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
	*out = b;
	return 0;
}

void http_bridge_cancel(struct http_bridge *b)
{
	b->finished = 1;
	bridge_close(b);
}
