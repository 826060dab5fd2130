/* server: listener, connections, framing, replies (see server.h). */
#include "server.h"
#include "admit.h"
#include "server_impl.h"
#include "frame.h"
#include "rpc.h"

#include <malloc.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define QUEUE_CAP ((size_t)1 << 20)     /* unsent bytes above which a connection's frames stay unread */
#define DROP_BYTES ((size_t)96 << 20)   /* unsent bytes: no query starts at or above; a reply beyond drops */
#define DECODE_BATCH 32                 /* frames of one connection decoded per turn of the loop */
#define DECODE_BYTES ((size_t)64 << 10) /* and bytes, once a frame is whole: big frames one a turn */
#define ACCEPT_BATCH 16                 /* connections accepted per turn of the loop */
#define STALL_MS 20000                  /* unsent replies and nothing read for this long: dropped */
#define STOP_STALL_MS 5000              /* the same while stopping */
#define STOP_RUN_MS 10000               /* a stop fails the queries not started after this */
#define STOP_MAX_MS 300000              /* and closes whatever is left after this */
#define TICK_MS 1000
#define TRIM_BYTES ((size_t)1 << 20)    /* freed bytes worth returning to the system */

struct wreq {
	uv_write_t req;
	struct server_conn *c;
	char *data;
	size_t len;
};

static void server_log(struct server *srv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void server_log(struct server *srv, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	if (!srv->info->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	srv->info->log(srv->info->log_ctx, msg);
}

static void server_conn_close(struct server_conn *c);
static void server_refuse(struct server_conn *c, int code, const char *msg);

static const struct server_actions actions = {
	server_log, server_conn_close, server_refuse,
};

static void check_stopped(struct server *srv);
static void flush(struct server_conn *c);
static void backpressure(struct server_conn *c);

/* ---- connection teardown ---- */

static void drop_rbuf(struct server_conn *c)
{
	if (c->rbuf) {
		free(c->rbuf);
		c->srv->freed += READ_CHUNK;
	}
	c->rbuf = NULL;
	c->rpos = c->rlen = 0;
}

static void conn_free(struct server_conn *c)
{
	struct server_reply *s = c->head;
	while (s) {
		struct server_reply *n = s->next;
		c->srv->freed += s->out.cap;
		buf_free(&s->out);
		free(s);
		s = n;
	}
	frame_reader_free(&c->fr);
	drop_rbuf(c);
	free(c);
}

void server_conn_ref(struct server_conn *c)
{
	c->refs++;
}

void server_conn_unref(struct server_conn *c)
{
	if (--c->refs == 0) {
		struct server *srv = c->srv;
		conn_free(c);
		check_stopped(srv);
	}
}

static void on_closed(uv_handle_t *h)
{
	server_conn_unref(h->data);
}

static void server_conn_close(struct server_conn *c)
{
	struct server *srv = c->srv;
	if (c->closing)
		return;
	c->closing = 1;
	if (c->prev)
		c->prev->next = c->next;
	else
		srv->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	srv->nconns--;
	srv->partial -= c->held;
	c->held = 0;
	if (c->q)
		c->srv->ops->queue_close(c->q); /* its waiting queries are cancelled */
	c->q = NULL;
	drop_rbuf(c);
	uv_close((uv_handle_t *)&c->pipe, on_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	(void)status;
	server_conn_close(req->data);
}

/* Closes after every queued write went out. */
static void conn_finish(struct server_conn *c)
{
	if (c->shutting || c->closing)
		return;
	c->shutting = 1;
	if (c->reading) {
		uv_read_stop((uv_stream_t *)&c->pipe);
		c->reading = 0;
	}
	c->shut.data = c;
	if (uv_shutdown(&c->shut, (uv_stream_t *)&c->pipe, on_shutdown) != 0)
		server_conn_close(c);
}

/* 1 when c has unsent replies and its client took nothing for limit ms. */
static int stalled(struct server_conn *c, uint64_t now, uint64_t limit)
{
	size_t wq = uv_stream_get_write_queue_size((uv_stream_t *)&c->pipe);
	if (c->writes == 0) {
		c->progress_ms = now;
		c->last_wq = 0;
		return 0;
	}
	if (wq < c->last_wq)
		c->progress_ms = now;
	c->last_wq = wq;
	return now - c->progress_ms > limit;
}

static void drop_if_stalled(struct server_conn *c, uint64_t now)
{
	struct server *srv = c->srv;
	if (c->closing || !stalled(c, now, srv->stopping ? STOP_STALL_MS : STALL_MS))
		return;
	server_log(srv, "dropping a client that does not read its responses (%zu bytes unsent)", c->queued);
	server_conn_close(c);
}

/* ---- replies ---- */

int server_connections(const struct server *srv)
{
	return srv->nconns;
}

struct server_reply *server_reply_new(struct server_conn *c)
{
	struct server_reply *s = calloc(1, sizeof *s);
	if (!s) {
		server_conn_close(c);
		return NULL;
	}
	s->c = c;
	buf_init(&s->out, FRAME_RESPONSE_MAX + 4096);
	if (c->tail)
		c->tail->next = s;
	else
		c->head = s;
	c->tail = s;
	c->npending++;
	return s;
}

struct buf *server_reply_buf(struct server_reply *r)
{
	return &r->out;
}

void server_reply_flags(struct server_reply *r, int discard, int close_after)
{
	r->discard = discard;
	r->close_after = close_after;
	if (close_after)
		r->c->no_more = 1; /* nothing after it is read */
}

/* The checks of a reply: a client far behind, or stalled, is dropped. */
static void reply_checks(struct server_conn *c)
{
	if (c->closing)
		return;
	flush(c);
	if (!c->closing && c->queued > DROP_BYTES) {
		server_log(c->srv, "dropping a client that does not read its responses (%zu bytes unsent)",
		      c->queued);
		server_conn_close(c);
		return;
	}
	if (!c->closing)
		drop_if_stalled(c, uv_now(c->srv->loop));
}

void server_reply_done(struct server_conn *c, struct server_reply *r)
{
	r->done = 1;
	c->queued += r->out.len - r->counted;
	r->counted = r->out.len;
	reply_checks(c);
}

void server_reply_send(struct server_conn *c, struct server_reply *r,
                       struct buf *frames, int last)
{
	if (!c->closing && frames->len) {
		buf_append(&r->out, frames->data, frames->len);
		if (r->out.failed) {
			server_conn_close(c);
		} else {
			c->queued += frames->len;
			r->counted += frames->len;
		}
	}
	buf_reset(frames);
	r->streams = 1;
	if (last)
		r->done = 1;
	reply_checks(c);
}

size_t server_conn_unsent(const struct server_conn *c)
{
	return c->queued;
}

int server_conn_streams(const struct server_conn *c)
{
	return !c->adopted;
}

void server_error_frame(struct buf *o, const json_t *id, int code,
                        const char *msg)
{
	size_t off;
	buf_reset(o);
	off = frame_begin(o);
	rpc_error(o, id, code, msg);
	frame_end(o, off, FRAME_RESPONSE_MAX);
}

void server_reply_error(struct server_conn *c, const json_t *id, int code,
                        const char *msg)
{
	struct server_reply *s = server_reply_new(c);
	if (!s)
		return;
	server_error_frame(&s->out, id, code, msg);
	server_reply_done(c, s);
}

int server_conn_ready(const struct server_conn *c)
{
	return !c->closing && c->queued < DROP_BYTES;
}

void server_work_done(struct server *srv)
{
	check_stopped(srv);
}

static void on_written(uv_write_t *req, int status)
{
	struct wreq *w = (struct wreq *)req;
	struct server_conn *c = w->c;
	struct server *srv = c->srv;
	c->queued -= w->len;
	c->writes--;
	c->progress_ms = c->active_ms = uv_now(srv->loop);
	srv->freed += w->len;
	free(w->data);
	free(w);
	if (status < 0) {
		server_conn_close(c);
		return;
	}
	flush(c);
	srv->ops->kick(srv->h); /* room again for its waiting queries */
}

/* Hands data (len bytes, malloc'ed: taken over) to uv_write; 0, or -1
 * when c was closed. */
static int write_out(struct server_conn *c, char *data, size_t len)
{
	struct wreq *w = malloc(sizeof *w);
	if (!w) {
		free(data);
		server_conn_close(c);
		return -1;
	}
	w->c = c;
	w->data = data;
	w->len = len;
	if (c->writes++ == 0)
		c->progress_ms = uv_now(c->srv->loop);
	uv_buf_t b = uv_buf_init(w->data, (unsigned)w->len);
	if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, on_written) != 0) {
		c->queued -= w->len;
		c->writes--;
		free(w->data);
		free(w);
		server_conn_close(c);
		return -1;
	}
	return 0;
}

static void flush(struct server_conn *c)
{
	while (!c->closing && c->head &&
	       (c->head->done || (c->head->streams && c->head->out.len))) {
		struct server_reply *s = c->head;
		size_t len;
		char *data;
		if (!s->done) {
			/* a streaming reply in its turn: what it has so far */
			data = buf_detach(&s->out, &len);
			s->counted = 0;
			if (write_out(c, data, len))
				return;
			break;
		}
		c->head = s->next;
		if (!c->head)
			c->tail = NULL;
		c->npending--;
		if (s->close_after)
			c->no_more = 1;
		if (s->discard || s->out.len == 0) {
			c->queued -= s->out.len;
			buf_free(&s->out);
			free(s);
			continue;
		}
		data = buf_detach(&s->out, &len);
		free(s);
		if (write_out(c, data, len))
			return;
	}
	if (c->closing)
		return;
	if (c->no_more && c->npending == 0)
		conn_finish(c);
	else
		backpressure(c);
}

/* ---- reading ---- */

static int over_cap(const struct server_conn *c)
{
	return c->npending >= SERVER_MAX_PENDING || c->queued >= QUEUE_CAP;
}

/* Decodes the frames of the read buffer while the connection is under its
 * caps; what is left waits there (and reading pauses) until replies go. */
static void decode(struct server_conn *c)
{
	int budget = DECODE_BATCH;
	size_t bytes = 0;
	while (c->rpos < c->rlen && !c->no_more && !c->closing && !over_cap(c) &&
	       budget-- > 0 && bytes < DECODE_BYTES) {
		const char *p = c->rbuf + c->rpos;
		size_t len = c->rlen - c->rpos;
		char *msg = NULL;
		size_t mlen = 0;
		struct err e;
		int rc;
		err_clear(&e);
		rc = frame_reader_feed(&c->fr, &p, &len, &msg, &mlen, &e);
		c->rpos = c->rlen - len;
		admit_account(c);
		if (rc == FRAME_MORE)
			break;
		if (rc != FRAME_DONE) {
			struct server_reply *s = server_reply_new(c);
			if (!s)
				return;
			server_reply_flags(s, 0, 1);
			server_error_frame(&s->out, NULL, RPC_INVALID_REQUEST, e.msg);
			server_reply_done(c, s);
			break;
		}
		c->active_ms = uv_now(c->srv->loop);
		c->srv->ops->frame(c->q, msg, mlen);
		free(msg);
		bytes += mlen;
	}
	if (c->closing)
		return;
	admit_over_budget(c->srv);
	if (c->closing)
		return;
	if (c->rpos >= c->rlen || c->no_more)
		drop_rbuf(c);
	flush(c);
}

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct server_conn *c = h->data;
	(void)hint;
	if (!c->rbuf)
		c->rbuf = malloc(READ_CHUNK);
	c->rpos = c->rlen = 0;
	*b = uv_buf_init(c->rbuf, c->rbuf ? READ_CHUNK : 0);
}

/* 1 when c's client closed its end entirely (not a half-close, after
 * which it still reads): its queries would be answered to no one. */
static int peer_gone(struct server_conn *c)
{
	uv_os_fd_t fd;
	struct pollfd p;
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0)
		return 0;
	p.fd = fd;
	p.events = 0;
	p.revents = 0;
	return poll(&p, 1, 0) == 1 && (p.revents & (POLLHUP | POLLERR));
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
	struct server_conn *c = st->data;

	(void)b;
	if (n == UV_EOF && peer_gone(c)) {
		/* Hung up: its waiting queries are cancelled. */
		server_conn_close(c);
		return;
	}
	if (n == UV_EOF) {
		/* Half-closed: answer what was asked, then close. */
		c->no_more = 1;
		uv_read_stop(st);
		c->reading = 0;
		drop_rbuf(c);
		flush(c);
		return;
	}
	if (n < 0) {
		server_conn_close(c);
		return;
	}
	if (n == 0) {
		drop_rbuf(c);
		return;
	}
	c->rpos = 0;
	c->rlen = (size_t)n;
	decode(c);
}

/* Next turn of the loop: one batch of left-over frames of each connection
 * that may take more, so that no connection keeps the loop to itself. */
static void on_resume(uv_idle_t *h)
{
	struct server *srv = h->data;
	int more = 0;
	for (struct server_conn *c = srv->conns, *n; c; c = n) {
		n = c->next;
		/* decode(c) may close c or others (evict_partial): a closed one
		 * stays allocated, next included, until its close callback */
		if (c->rpos < c->rlen && !c->no_more && !c->closing && !over_cap(c)) {
			decode(c);
			more |= !c->closing && c->rpos < c->rlen && !over_cap(c);
		}
	}
	if (!more)
		uv_idle_stop(h);
}

static void backpressure(struct server_conn *c)
{
	if (c->closing || c->shutting)
		return;
	if (!c->no_more && !over_cap(c) && c->rpos < c->rlen) {
		/* frames left over from an earlier read come first, next turn */
		uv_idle_start(&c->srv->resume, on_resume);
	}
	if (c->no_more || over_cap(c) || c->rpos < c->rlen) {
		if (c->reading) {
			uv_read_stop((uv_stream_t *)&c->pipe);
			c->reading = 0;
		}
	} else if (!c->reading) {
		if (uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) == 0) {
			c->reading = 1;
			/* the frame's clock runs while the client is waited for */
			if (c->partial_ms)
				c->partial_ms = uv_now(c->srv->loop);
		}
	}
}

/* ---- accepting ---- */

/* A new connection in the table (counted, not yet admitted); NULL when
 * out of memory. */
static struct server_conn *conn_new(struct server *srv)
{
	struct server_conn *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->srv = srv;
	c->refs = 1;
	frame_reader_init(&c->fr, FRAME_REQUEST_MAX);
	uv_pipe_init(srv->loop, &c->pipe, 0);
	c->pipe.data = c;
	c->next = srv->conns;
	if (srv->conns)
		srv->conns->prev = c;
	srv->conns = c;
	srv->nconns++;
	c->active_ms = uv_now(srv->loop);
	return c;
}

/* Admits c (just connected) and starts reading it: 0, or -1 when it was
 * refused or closed. */
static int conn_admit(struct server *srv, struct server_conn *c)
{
	if (admit_new(srv, c) != 0)
		return -1;
	if (!(c->q = srv->ops->queue_new(srv->h, c))) {
		server_conn_close(c);
		return -1;
	}
	backpressure(c);
	return 0;
}

static void accept_one(struct server *srv)
{
	struct server_conn *c = conn_new(srv);
	if (!c)
		return;
	if (uv_accept((uv_stream_t *)&srv->listener, (uv_stream_t *)&c->pipe) != 0) {
		server_conn_close(c);
		return;
	}
	conn_admit(srv, c);
}

int server_adopt(struct server *srv, int fd, int streams, struct err *e)
{
	struct server_conn *c;
	if (srv->stopping) {
		close(fd);
		return err_set(e, ERR_DATA, "The session is stopping; the query was not run");
	}
	if (!(c = conn_new(srv))) {
		close(fd);
		return err_set(e, ERR_NOMEM, "Out of memory");
	}
	if (uv_pipe_open(&c->pipe, fd) != 0) {
		close(fd);
		server_conn_close(c);
		return err_set(e, ERR_DATA, "Cannot serve the connection");
	}
	c->adopted = !streams;
	if (conn_admit(srv, c) != 0)
		return err_set(e, ERR_DATA, "The session refused the connection");
	return 0;
}

/* A connection waits.  At most ACCEPT_BATCH are accepted per turn of the
 * loop: one left unaccepted makes libuv stop watching the listener until
 * on_turn accepts it, so a connect flood cannot hold the loop. */
static void on_connection(uv_stream_t *ls, int status)
{
	struct server *srv = ls->data;

	if (status < 0 || srv->stopping)
		return;
	if (srv->accepted >= ACCEPT_BATCH) {
		srv->accept_deferred = 1;
		return;
	}
	srv->accepted++;
	accept_one(srv);
}

static void on_turn(uv_check_t *h)
{
	struct server *srv = h->data;
	srv->accepted = 0;
	if (srv->accept_deferred && !srv->stopping) {
		srv->accept_deferred = 0;
		srv->accepted++;
		accept_one(srv); /* uv_accept re-arms the listener */
	}
}

/* ---- lifecycle ---- */

static void on_handle_closed(uv_handle_t *h)
{
	struct server *srv = h->data;
	srv->handles_open--;
	check_stopped(srv);
}

static void check_stopped(struct server *srv)
{
	if (!srv->stopping || srv->done || srv->nconns > 0 ||
	    (srv->ops && srv->ops->busy(srv->h)))
		return;
	if (srv->handles_open == 4) {
		/* close the listener first, then the timers */
		return;
	}
	if (!srv->timers_closing) {
		srv->timers_closing = 1;
		uv_timer_stop(&srv->tick);
		uv_close((uv_handle_t *)&srv->tick, on_handle_closed);
		uv_idle_stop(&srv->resume);
		uv_close((uv_handle_t *)&srv->resume, on_handle_closed);
		uv_check_stop(&srv->turn);
		uv_close((uv_handle_t *)&srv->turn, on_handle_closed);
		return;
	}
	if (srv->handles_open == 0) {
		srv->done = 1;
		srv->stopped(srv->ctx, srv->why);
	}
}

/* Every second: drop clients that stopped reading, return freed memory,
 * and bound the time a stop may take. */
static void on_tick(uv_timer_t *t)
{
	struct server *srv = t->data;
	uint64_t now = uv_now(srv->loop);

	for (struct server_conn *c = srv->conns, *n; c; c = n) {
		n = c->next;
		drop_if_stalled(c, now);
		if (!c->closing)
			admit_expire(c, now);
	}
	admit_tick_done(srv);
	if (srv->stopping && !srv->stop_failed && now - srv->stop_ms >= STOP_RUN_MS) {
		/* the queries still waiting get an error frame, not a cut one */
		srv->stop_failed = 1;
		srv->ops->fail_waiting(srv->h);
	}
	if (srv->stopping && srv->conns && now - srv->stop_ms >= STOP_MAX_MS) {
		server_log(srv, "stopping: closing %d connection(s) still being written after %d s",
		      srv->nconns, STOP_MAX_MS / 1000);
		while (srv->conns)
			server_conn_close(srv->conns);
	}
	if (srv->freed >= TRIM_BYTES) {
		malloc_trim(0);
		srv->freed = 0;
	}
}

int server_start(uv_loop_t *loop, int listen_fd, const struct server_info *info,
                 server_stopped_fn stopped, void *ctx, struct server **out,
                 struct err *e)
{
	struct server *srv = calloc(1, sizeof *srv);
	int rc;
	if (!srv)
		return err_set(e, ERR_NOMEM, "Out of memory");
	srv->loop = loop;
	if (!(srv->info = malloc(sizeof *srv->info))) {
		free(srv);
		return err_set(e, ERR_NOMEM, "Out of memory");
	}
	*srv->info = *info;
	srv->act = &actions;
	srv->max_conns = admit_conn_limit();
	srv->conn_idle_ms = info->conn_idle_ms;
	srv->frame_ms = info->frame_timeout_ms;
	srv->stopped = stopped;
	srv->ctx = ctx;
	uv_pipe_init(loop, &srv->listener, 0);
	srv->listener.data = srv;
	uv_timer_init(loop, &srv->tick);
	srv->tick.data = srv;
	uv_idle_init(loop, &srv->resume);
	srv->resume.data = srv;
	uv_check_init(loop, &srv->turn);
	srv->turn.data = srv;
	srv->handles_open = 4;
	if ((rc = uv_pipe_open(&srv->listener, listen_fd)) != 0 ||
	    (rc = uv_listen((uv_stream_t *)&srv->listener, 128, on_connection)) != 0) {
		err_set(e, ERR_DATA, "Cannot listen: %s", uv_strerror(rc));
		srv->stopping = 1;
		srv->done = 1;
		srv->timers_closing = 1;
		uv_close((uv_handle_t *)&srv->listener, on_handle_closed);
		uv_close((uv_handle_t *)&srv->tick, on_handle_closed);
		uv_close((uv_handle_t *)&srv->resume, on_handle_closed);
		uv_close((uv_handle_t *)&srv->turn, on_handle_closed);
		*out = srv;
		return ERR_DATA;
	}
	uv_timer_start(&srv->tick, on_tick, TICK_MS, TICK_MS);
	uv_check_start(&srv->turn, on_turn);
	*out = srv;
	return 0;
}

void server_stop(struct server *srv, const char *why)
{
	if (srv->stopping)
		return;
	srv->stopping = 1;
	srv->stop_ms = uv_now(srv->loop);
	snprintf(srv->why, sizeof srv->why, "%s", why);
	uv_close((uv_handle_t *)&srv->listener, on_handle_closed);
	if (srv->stop_hook)
		srv->stop_hook(srv->stop_ctx);
	/* accepted queries finish for clients that read; others are dropped */
	srv->ops->stop(srv->h);
	for (struct server_conn *c = srv->conns, *n; c; c = n) {
		n = c->next;
		c->no_more = 1;
		drop_rbuf(c);
		flush(c);
	}
	check_stopped(srv);
}

void server_set_handler(struct server *srv, const struct server_handler *ops,
                        void *h)
{
	srv->ops = ops;
	srv->h = h;
}

void server_on_stop(struct server *srv, void (*fn)(void *ctx), void *ctx)
{
	srv->stop_hook = fn;
	srv->stop_ctx = ctx;
}

const struct server_info *server_info(const struct server *srv)
{
	return srv->info;
}

void server_free(struct server *srv)
{
	if (srv)
		free(srv->info);
	free(srv);
}

/* One error frame (id null) to c, which closes once it is written. */
static void server_refuse(struct server_conn *c, int code, const char *msg)
{
	struct server_reply *s = server_reply_new(c);
	if (!s)
		return;
	server_reply_flags(s, 0, 1);
	server_error_frame(&s->out, NULL, code, msg);
	server_reply_done(c, s);
}
