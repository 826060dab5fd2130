/* server: listener, connections, dispatch, write queues (see server.h). */
#include "server.h"
#include "frame.h"
#include "base/jsonout.h"
#include "base/utf8.h"
#include "rpc.h"
#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define READ_CHUNK 65536
#define MAX_PENDING 32                   /* requests per connection before reading pauses */
#define PAUSE_BYTES ((size_t)8 << 20)    /* unsent bytes before reading pauses */
#define DROP_BYTES ((size_t)96 << 20)    /* unsent bytes before the client is dropped */
#define STOP_GRACE_MS 5000               /* flushing time granted on stop */
#define TIMES STATUS_TIMES

/* One request's place in its connection's response order. */
struct slot {
	struct slot *next;
	int done;
	int discard;      /* a notification: no reply is sent */
	int close_after;  /* close the connection once this is written */
	struct buf out;   /* the framed response */
};

struct conn {
	uv_pipe_t pipe;
	uv_shutdown_t shut;
	struct server *srv;
	struct conn *prev, *next;
	struct frame_reader fr;
	struct slot *head, *tail;
	int npending;     /* slots not yet handed to uv_write */
	size_t queued;    /* bytes of done slots and writes in flight */
	int refs;         /* the handle + works in flight */
	int reading;
	int no_more;      /* reading is over; close once drained */
	int shutting;     /* uv_shutdown issued */
	int closing;      /* uv_close issued */
	char rbuf[READ_CHUNK];
};

struct work {
	uv_work_t req;
	struct work *next;    /* in the list waiting for a reload */
	struct conn *c;
	struct slot *slot;
	struct rpc_request rq;
	struct query_params p;
	struct session_gen *g;
	uint64_t t0;
	int sql;              /* an sql query: runs in the sql lane */
	int in_lane;          /* it holds the sql lane */
	struct work *lane_next; /* in the list waiting for the sql lane */
};

struct wreq {
	uv_write_t req;
	struct conn *c;
	char *data;
	size_t len;
};

struct server {
	uv_loop_t *loop;
	uv_pipe_t listener;
	uv_timer_t grace;
	struct server_info info;
	struct session *sess;
	struct lifetime *lt;
	server_stopped_fn stopped;
	void *ctx;
	struct conn *conns;
	int nconns;
	int works;
	int handles_open;   /* listener + grace timer */
	uint64_t queries;
	int stopping, done;
	/* generation reload, off the loop; queries wait for it in order */
	int reloading;
	uv_work_t reload_req;
	struct session_gen *reload_gen;
	int reload_rc;
	struct err reload_err;
	struct work *waiting, *waiting_tail;
	/* the sql lane: at most one sql query on the work queue at a time, so
	 * long statements never hold the threads other queries need */
	int sql_running;
	struct work *sql_waiting, *sql_waiting_tail;
	char why[128];
	uint32_t times[TIMES];
	size_t ntimes;
	uint32_t last_us;
};

static void logf_(struct server *srv, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logf_(struct server *srv, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	if (!srv->info.log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	srv->info.log(srv->info.log_ctx, msg);
}

static void check_stopped(struct server *srv);
static void queue_query(struct server *srv, struct work *w);
static void flush(struct conn *c);

/* ---- connection teardown ---- */

static void conn_free(struct conn *c)
{
	struct slot *s = c->head;
	while (s) {
		struct slot *n = s->next;
		buf_free(&s->out);
		free(s);
		s = n;
	}
	frame_reader_free(&c->fr);
	free(c);
}

static void conn_unref(struct conn *c)
{
	if (--c->refs == 0) {
		struct server *srv = c->srv;
		conn_free(c);
		check_stopped(srv);
	}
}

static void on_closed(uv_handle_t *h)
{
	conn_unref(h->data);
}

static void conn_close(struct conn *c)
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
	uv_close((uv_handle_t *)&c->pipe, on_closed);
}

static void on_shutdown(uv_shutdown_t *req, int status)
{
	(void)status;
	conn_close(req->data);
}

/* Closes after every queued write went out. */
static void conn_finish(struct conn *c)
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
		conn_close(c);
}

/* ---- responses ---- */

static struct slot *slot_new(struct conn *c)
{
	struct slot *s = calloc(1, sizeof *s);
	if (!s)
		return NULL;
	buf_init(&s->out, FRAME_RESPONSE_MAX + 4096);
	if (c->tail)
		c->tail->next = s;
	else
		c->head = s;
	c->tail = s;
	c->npending++;
	return s;
}

static void slot_done(struct conn *c, struct slot *s)
{
	s->done = 1;
	c->queued += s->out.len;
}

static void error_into(struct buf *o, const json_t *id, int code, const char *msg)
{
	size_t off;
	buf_reset(o);
	off = frame_begin(o);
	rpc_error(o, id, code, msg);
	frame_end(o, off, FRAME_RESPONSE_MAX);
}

static void reply_error(struct conn *c, const json_t *id, int code, const char *msg)
{
	struct slot *s = slot_new(c);
	if (!s) {
		conn_close(c);
		return;
	}
	error_into(&s->out, id, code, msg);
	slot_done(c, s);
}

static void on_written(uv_write_t *req, int status)
{
	struct wreq *w = (struct wreq *)req;
	struct conn *c = w->c;
	c->queued -= w->len;
	free(w->data);
	free(w);
	if (status < 0) {
		conn_close(c);
		return;
	}
	flush(c);
}

static void backpressure(struct conn *c);

static void flush(struct conn *c)
{
	while (!c->closing && c->head && c->head->done) {
		struct slot *s = c->head;
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
		struct wreq *w = malloc(sizeof *w);
		if (!w) {
			buf_free(&s->out);
			free(s);
			conn_close(c);
			return;
		}
		w->c = c;
		w->data = buf_detach(&s->out, &w->len);
		free(s);
		uv_buf_t b = uv_buf_init(w->data, (unsigned)w->len);
		if (uv_write(&w->req, (uv_stream_t *)&c->pipe, &b, 1, on_written) != 0) {
			c->queued -= w->len;
			free(w->data);
			free(w);
			conn_close(c);
			return;
		}
	}
	if (c->closing)
		return;
	if (c->no_more && c->npending == 0)
		conn_finish(c);
	else
		backpressure(c);
}

/* ---- requests ---- */

static void work_run(uv_work_t *req)
{
	struct work *w = req->data;
	struct buf *o = &w->slot->out;
	struct err e;
	size_t off;
	int rc;

	err_clear(&e);
	off = frame_begin(o);
	rpc_result_open(o, w->rq.id);
	buf_puts(o, "{\"generation\":");
	jsonout_cstr(o, session_gen_id(w->g));
	buf_puts(o, ",\"data\":");
	rc = session_gen_query(w->g, &w->p, o, &e);
	if (rc == 0) {
		buf_putc(o, '}');
		rpc_result_close(o);
		rc = frame_end(o, off, FRAME_RESPONSE_MAX);
		if (rc)
			err_set(&e, rc, "Out of memory");
	}
	if (rc == 0)
		return;
	if (rc == ERR_LIMIT || o->failed == ERR_LIMIT)
		error_into(o, w->rq.id, RPC_TOO_LARGE,
		           "The response exceeds the 64 MiB limit; narrow the query "
		           "(a smaller --limit, a shorter --from/--to window, or more filters)");
	else
		error_into(o, w->rq.id, rpc_code_for_err(rc), e.msg);
}

static void work_done(uv_work_t *req, int status)
{
	struct work *w = req->data;
	struct conn *c = w->c;
	struct server *srv = c->srv;
	uint64_t us = (uv_hrtime() - w->t0) / 1000;

	(void)status;
	if (w->in_lane) {
		struct work *next = srv->sql_waiting;
		srv->sql_running = 0;
		if (next) {
			srv->sql_waiting = next->lane_next;
			if (!srv->sql_waiting)
				srv->sql_waiting_tail = NULL;
			queue_query(srv, next);
		}
	}
	srv->last_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
	srv->times[srv->ntimes++ % TIMES] = srv->last_us;
	slot_done(c, w->slot);
	session_release(w->g);
	query_params_free(&w->p);
	rpc_request_free(&w->rq);
	free(w);
	srv->works--;
	lifetime_request_end(srv->lt);
	if (!c->closing) {
		flush(c);
		if (!c->closing && c->queued > DROP_BYTES) {
			logf_(srv, "dropping a client that does not read its responses");
			conn_close(c);
		}
	}
	conn_unref(c);
}

/* Hands a query to the work queue with the current generation; an sql
 * query waits for the sql lane first. */
static void queue_query(struct server *srv, struct work *w)
{
	if (w->sql && !w->in_lane) {
		if (srv->sql_running) {
			w->lane_next = NULL;
			if (srv->sql_waiting_tail)
				srv->sql_waiting_tail->lane_next = w;
			else
				srv->sql_waiting = w;
			srv->sql_waiting_tail = w;
			return;
		}
		srv->sql_running = 1;
		w->in_lane = 1;
	}
	w->g = session_acquire(srv->sess);
	if (uv_queue_work(srv->loop, &w->req, work_run, work_done) != 0) {
		error_into(&w->slot->out, w->rq.id, RPC_INTERNAL_ERROR, "Cannot queue the query");
		work_done(&w->req, 0);
	}
}

static void reload_run(uv_work_t *req)
{
	struct server *srv = req->data;
	err_clear(&srv->reload_err);
	srv->reload_rc = session_load(srv->sess, &srv->reload_gen, &srv->reload_err);
}

/* Swaps the new generation in (or reports why not) and releases the
 * queries that waited for it, in their order. */
static void reload_done(uv_work_t *req, int status)
{
	struct server *srv = req->data;
	struct work *w = srv->waiting;

	(void)status;
	srv->reloading = 0;
	srv->works--;
	if (srv->reload_rc == 0) {
		session_install(srv->sess, srv->reload_gen);
		logf_(srv, "report rebuilt: now serving generation %s", session_generation(srv->sess));
	} else {
		logf_(srv, "%s", srv->reload_err.msg);
	}
	srv->reload_gen = NULL;
	srv->waiting = srv->waiting_tail = NULL;
	while (w) {
		struct work *next = w->next;
		if (srv->reload_rc == 0) {
			queue_query(srv, w);
		} else {
			error_into(&w->slot->out, w->rq.id, RPC_GENERATION_ERROR, srv->reload_err.msg);
			work_done(&w->req, 0);
		}
		w = next;
	}
	check_stopped(srv);
}

/* Starts opening the report's new generation unless that is under way. */
static void start_reload(struct server *srv)
{
	if (srv->reloading)
		return;
	srv->reloading = 1;
	srv->works++;
	srv->reload_req.data = srv;
	if (uv_queue_work(srv->loop, &srv->reload_req, reload_run, reload_done) != 0) {
		srv->reload_rc = err_set(&srv->reload_err, ERR_DATA, "Cannot queue the report reload");
		reload_done(&srv->reload_req, 0);
	}
}

static void start_query(struct conn *c, struct rpc_request *rq)
{
	struct server *srv = c->srv;
	struct err e;
	struct work *w;

	err_clear(&e);
	if (rq->params && !json_is_object(rq->params)) {
		reply_error(c, rq->id, RPC_INVALID_PARAMS, "params must be an object");
		return;
	}
	w = calloc(1, sizeof *w);
	if (!w) {
		reply_error(c, rq->id, RPC_INTERNAL_ERROR, "Out of memory");
		return;
	}
	query_params_init(&w->p);
	if (rq->params && query_params_from_json(rq->params, &w->p, &e)) {
		reply_error(c, rq->id, rpc_code_for_err(e.code), e.msg);
		query_params_free(&w->p);
		free(w);
		return;
	}
	w->slot = slot_new(c);
	if (!w->slot) {
		query_params_free(&w->p);
		free(w);
		conn_close(c);
		return;
	}
	if (!rq->id)
		w->slot->discard = 1;
	w->rq = *rq;          /* takes the tree: strings of p point into it */
	memset(rq, 0, sizeof *rq);
	w->c = c;
	w->sql = w->p.kind && !strcmp(w->p.kind, "sql");
	w->t0 = uv_hrtime();
	w->req.data = w;
	c->refs++;
	srv->works++;
	srv->queries++;
	lifetime_request_begin(srv->lt);
	if (srv->reloading || session_changed(srv->sess)) {
		/* The report was rebuilt: answer from the new generation. */
		if (srv->waiting_tail)
			srv->waiting_tail->next = w;
		else
			srv->waiting = w;
		srv->waiting_tail = w;
		start_reload(srv);
		return;
	}
	queue_query(srv, w);
}

static void handle_frame(struct conn *c, const char *msg, size_t len)
{
	struct server *srv = c->srv;
	struct rpc_request rq;
	struct err e;
	struct slot *s;
	int code;

	err_clear(&e);
	code = rpc_parse_request(msg, len, &rq, &e);
	if (code) {
		reply_error(c, rq.id, code, e.msg);
		rpc_request_free(&rq);
		return;
	}
	if (!strcmp(rq.method, "query")) {
		start_query(c, &rq);
		rpc_request_free(&rq);
		return;
	}
	if (!strcmp(rq.method, "hello")) {
		json_t *pv = rq.params ? json_object_get(rq.params, "protocol") : NULL;
		if (pv && !(json_is_integer(pv) && json_integer_value(pv) == RPC_PROTOCOL)) {
			char m[160];
			if (json_is_integer(pv))
				snprintf(m, sizeof m, "Unsupported protocol %lld: this server speaks protocol %d",
				         (long long)json_integer_value(pv), RPC_PROTOCOL);
			else
				snprintf(m, sizeof m, "Unsupported protocol: this server speaks protocol %d",
				         RPC_PROTOCOL);
			reply_error(c, rq.id, RPC_INVALID_REQUEST, m);
			if (c->tail)
				c->tail->close_after = 1;
			c->no_more = 1;
			rpc_request_free(&rq);
			return;
		}
	} else if (strcmp(rq.method, "status") && strcmp(rq.method, "shutdown")) {
		char m[160];
		snprintf(m, sizeof m, "Unknown method '%.*s'; use hello, query, status or shutdown",
		         (int)utf8_cut(rq.method, strlen(rq.method), 100), rq.method);
		reply_error(c, rq.id, RPC_METHOD_NOT_FOUND, m);
		rpc_request_free(&rq);
		return;
	}
	if (strcmp(rq.method, "shutdown") && session_changed(srv->sess))
		start_reload(srv); /* hello/status answer at once, from the current one */
	s = slot_new(c);
	if (!s) {
		rpc_request_free(&rq);
		conn_close(c);
		return;
	}
	if (!rq.id)
		s->discard = 1;
	size_t off = frame_begin(&s->out);
	rpc_result_open(&s->out, rq.id);
	if (!strcmp(rq.method, "hello")) {
		status_hello(&s->out, &srv->info, srv->sess);
	} else if (!strcmp(rq.method, "status")) {
		struct status_input in;
		uv_update_time(srv->loop);
		in.info = &srv->info;
		in.sess = srv->sess;
		in.lt = srv->lt;
		in.now_ms = uv_now(srv->loop);
		in.queries = srv->queries;
		in.connections = srv->nconns;
		in.times = srv->times;
		in.ntimes = srv->ntimes < TIMES ? srv->ntimes : TIMES;
		in.last_us = srv->last_us;
		status_write(&s->out, &in);
	} else {
		buf_puts(&s->out, "{\"stopping\":true,\"pid\":");
		jsonout_int(&s->out, getpid());
		buf_putc(&s->out, '}');
	}
	rpc_result_close(&s->out);
	if (frame_end(&s->out, off, FRAME_RESPONSE_MAX))
		error_into(&s->out, rq.id, RPC_INTERNAL_ERROR, "Out of memory");
	slot_done(c, s);
	if (!strcmp(rq.method, "shutdown"))
		server_stop(srv, "kill-server");
	rpc_request_free(&rq);
}

/* ---- reading ---- */

static void on_alloc(uv_handle_t *h, size_t hint, uv_buf_t *b)
{
	struct conn *c = h->data;
	(void)hint;
	*b = uv_buf_init(c->rbuf, sizeof c->rbuf);
}

static void on_read(uv_stream_t *st, ssize_t n, const uv_buf_t *b)
{
	struct conn *c = st->data;
	const char *p = b->base;
	size_t len = n > 0 ? (size_t)n : 0;

	if (n == UV_EOF) {
		/* Half-closed: answer what was asked, then close. */
		c->no_more = 1;
		uv_read_stop(st);
		c->reading = 0;
		flush(c);
		return;
	}
	if (n < 0) {
		conn_close(c);
		return;
	}
	while (len > 0 && !c->no_more && !c->closing) {
		char *msg = NULL;
		size_t mlen = 0;
		struct err e;
		int rc;
		err_clear(&e);
		rc = frame_reader_feed(&c->fr, &p, &len, &msg, &mlen, &e);
		if (rc == FRAME_MORE)
			break;
		if (rc != FRAME_DONE) {
			reply_error(c, NULL, RPC_INVALID_REQUEST, e.msg);
			if (c->tail)
				c->tail->close_after = 1;
			c->no_more = 1;
			break;
		}
		handle_frame(c, msg, mlen);
		free(msg);
	}
	if (!c->closing)
		flush(c);
}

static void backpressure(struct conn *c)
{
	int over = c->npending >= MAX_PENDING || c->queued >= PAUSE_BYTES;
	if (c->closing || c->shutting)
		return;
	if (c->no_more || over) {
		if (c->reading) {
			uv_read_stop((uv_stream_t *)&c->pipe);
			c->reading = 0;
		}
	} else if (!c->reading) {
		if (uv_read_start((uv_stream_t *)&c->pipe, on_alloc, on_read) == 0)
			c->reading = 1;
	}
}

/* ---- accepting ---- */

static void on_connection(uv_stream_t *ls, int status)
{
	struct server *srv = ls->data;
	struct conn *c;
	struct ucred cred;
	socklen_t clen = sizeof cred;
	uv_os_fd_t fd;

	if (status < 0 || srv->stopping)
		return;
	c = calloc(1, sizeof *c);
	if (!c)
		return;
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
	if (uv_accept(ls, (uv_stream_t *)&c->pipe) != 0) {
		conn_close(c);
		return;
	}
	if (uv_fileno((uv_handle_t *)&c->pipe, &fd) != 0 ||
	    getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &clen) != 0 ||
	    cred.uid != geteuid()) {
		logf_(srv, "refused a connection from uid %d (pid %d): this session serves uid %d only",
		      (int)cred.uid, (int)cred.pid, (int)geteuid());
		conn_close(c);
		return;
	}
	backpressure(c);
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
	if (!srv->stopping || srv->done || srv->nconns > 0 || srv->works > 0)
		return;
	if (srv->handles_open == 2) {
		/* close the listener first, then the grace timer */
		return;
	}
	if (srv->handles_open == 1 && !uv_is_closing((uv_handle_t *)&srv->grace)) {
		uv_timer_stop(&srv->grace);
		uv_close((uv_handle_t *)&srv->grace, on_handle_closed);
		return;
	}
	if (srv->handles_open == 0) {
		srv->done = 1;
		srv->stopped(srv->ctx, srv->why);
	}
}

static void on_grace(uv_timer_t *t)
{
	struct server *srv = t->data;
	logf_(srv, "stopping: closing %d connection(s) that did not drain in time", srv->nconns);
	while (srv->conns)
		conn_close(srv->conns);
}

int server_start(uv_loop_t *loop, int listen_fd, const struct server_info *info,
                 struct session *sess, struct lifetime *lt,
                 server_stopped_fn stopped, void *ctx, struct server **out,
                 struct err *e)
{
	struct server *srv = calloc(1, sizeof *srv);
	int rc;
	if (!srv)
		return err_set(e, ERR_NOMEM, "Out of memory");
	srv->loop = loop;
	srv->info = *info;
	srv->sess = sess;
	srv->lt = lt;
	srv->stopped = stopped;
	srv->ctx = ctx;
	uv_pipe_init(loop, &srv->listener, 0);
	srv->listener.data = srv;
	uv_timer_init(loop, &srv->grace);
	srv->grace.data = srv;
	srv->handles_open = 2;
	if ((rc = uv_pipe_open(&srv->listener, listen_fd)) != 0 ||
	    (rc = uv_listen((uv_stream_t *)&srv->listener, 128, on_connection)) != 0) {
		err_set(e, ERR_DATA, "Cannot listen: %s", uv_strerror(rc));
		srv->stopping = 1;
		srv->done = 1;
		uv_close((uv_handle_t *)&srv->listener, on_handle_closed);
		uv_close((uv_handle_t *)&srv->grace, on_handle_closed);
		*out = srv;
		return ERR_DATA;
	}
	*out = srv;
	return 0;
}

void server_stop(struct server *srv, const char *why)
{
	if (srv->stopping)
		return;
	srv->stopping = 1;
	snprintf(srv->why, sizeof srv->why, "%s", why);
	uv_close((uv_handle_t *)&srv->listener, on_handle_closed);
	uv_timer_start(&srv->grace, on_grace, STOP_GRACE_MS, 0);
	for (struct conn *c = srv->conns, *n; c; c = n) {
		n = c->next;
		c->no_more = 1;
		flush(c);
	}
	check_stopped(srv);
}

void server_free(struct server *srv)
{
	free(srv);
}
