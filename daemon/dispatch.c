/* dispatch: method handlers and the query scheduler (see dispatch.h). */
#include "dispatch.h"
#include "base/jsonout.h"
#include "base/utf8.h"
#include "base/vec.h"
#include "frame.h"
#include "rpc.h"
#include "sqlstream.h"
#include "status.h"

#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TIMES STATUS_TIMES
/* A streamed answer computes its next batch only while its client has
 * less than this unsent: one batch on the way, the next one computed. */
#define STREAM_AHEAD ((size_t)2 << 20)

struct job {
	uv_work_t req;
	struct job *next;
	struct dispatch_queue *q;
	struct server_reply *reply;
	struct rpc_request rq;
	struct query_params p;
	struct session_gen *g;
	uint64_t t0;
	int sql;              /* an sql query: runs in the sql lane */
	/* the client went away: the sql statement ends (query_params.cancel) */
	cancel_flag cancel;
	/* a streamed sql answer (NULL: one reply): run once per batch, each
	 * run's frames in chunk, final once the answer is complete */
	struct sqlstream *stream;
	struct buf chunk;
	int final;
};

struct dispatch_queue {
	struct dispatch *d;
	struct server_conn *c;
	struct job *head, *tail;   /* not started, in request order */
	int running;
	int closed;
	int busy;        /* dispatch code on the stack uses q: do not free */
	struct dispatch_queue *rnext, *rprev; /* the round-robin ring */
	int in_ring;
};

struct dispatch {
	uv_loop_t *loop;
	struct server *srv;
	const struct server_info *info;
	struct session *sess;
	struct lifetime *lt;
	struct dispatch_queue *ring;  /* next queue to serve */
	int running;                  /* queries on the work queue */
	/* the sql lane: at most one sql query on the work queue at a time, so
	 * long statements never hold the threads other queries need */
	int sql_running;
	struct job *sql_job;          /* the one running, when sql_running */
	int streams;                  /* streamed answers not ended */
	int stopping;
	/* read by running statements (query_params.stop): set by a stop, so
	 * that no statement holds the session past it */
	cancel_flag stop_flag;
	uint64_t queries;
	/* generation reload, off the loop; nothing starts meanwhile */
	int reloading;
	uv_work_t reload_req;
	struct session_gen *reload_gen;
	int reload_rc;
	struct err reload_err;
	/* callers of dispatch_fresh waiting for the reload */
	struct fresh_wait {
		void (*fn)(void *ctx, int rc, const char *msg);
		void *ctx;
	} *waits;
	size_t nwaits, capwaits;
	uint32_t times[TIMES];
	size_t ntimes;
	uint32_t last_us;
};

static void logf_(struct dispatch *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logf_(struct dispatch *d, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	if (!d->info->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	d->info->log(d->info->log_ctx, msg);
}

int dispatch_new(uv_loop_t *loop, struct session *sess, struct lifetime *lt,
                 struct dispatch **out, struct err *e)
{
	struct dispatch *d = calloc(1, sizeof *d);
	if (!d)
		return err_set(e, ERR_NOMEM, "Out of memory");
	d->loop = loop;
	d->sess = sess;
	d->lt = lt;
	*out = d;
	return 0;
}

void dispatch_free(struct dispatch *d)
{
	if (d)
		free(d->waits);
	free(d);
}

static int on_busy(const void *h)
{
	const struct dispatch *d = h;

	return d->running + d->reloading;
}

/* ---- the round-robin ring of queues with jobs waiting ---- */

static void ring_add(struct dispatch_queue *q)
{
	struct dispatch *d = q->d;
	if (q->in_ring)
		return;
	q->in_ring = 1;
	if (!d->ring) {
		q->rnext = q->rprev = q;
		d->ring = q;
		return;
	}
	/* join at the back: just before the next one to serve */
	q->rnext = d->ring;
	q->rprev = d->ring->rprev;
	q->rprev->rnext = q;
	d->ring->rprev = q;
}

static void ring_remove(struct dispatch_queue *q)
{
	struct dispatch *d = q->d;
	if (!q->in_ring)
		return;
	q->in_ring = 0;
	if (q->rnext == q) {
		d->ring = NULL;
	} else {
		q->rprev->rnext = q->rnext;
		q->rnext->rprev = q->rprev;
		if (d->ring == q)
			d->ring = q->rnext;
	}
	q->rnext = q->rprev = NULL;
}

static struct job *pop(struct dispatch_queue *q)
{
	struct job *j = q->head;
	q->head = j->next;
	if (!q->head) {
		q->tail = NULL;
		ring_remove(q);
	}
	j->next = NULL;
	return j;
}

/* Frees q once its connection is gone and nothing uses it. */
static void q_release(struct dispatch_queue *q)
{
	if (q->closed && q->running == 0 && q->busy == 0)
		free(q);
}

/* ---- running a query ---- */

static void work_run(uv_work_t *req)
{
	struct job *j = req->data;
	struct buf *o = server_reply_buf(j->reply);
	struct err e;
	size_t off;
	int rc;

	if (j->stream) {
		j->final = sqlstream_step(j->stream, j->g, &j->p, j->rq.id,
		                          &j->chunk);
		return;
	}
	err_clear(&e);
	off = frame_begin(o);
	rpc_result_open(o, j->rq.id);
	buf_puts(o, "{\"generation\":");
	jsonout_cstr(o, session_gen_id(j->g));
	buf_puts(o, ",\"data\":");
	rc = session_gen_query(j->g, &j->p, o, &e);
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
		server_error_frame(o, j->rq.id, RPC_TOO_LARGE,
		                   "The response exceeds the 64 MiB limit; narrow the query "
		                   "(a smaller --limit, a shorter --from/--to window, or more filters)");
	else
		server_error_frame(o, j->rq.id, rpc_code_for_err(rc), e.msg);
}

static void schedule(struct dispatch *d);
static void start_reload(struct dispatch *d);

/* Ends a job (ran, failed or cancelled); the reply, when still wanted,
 * has been written into its slot. */
static void job_end(struct job *j, int reply)
{
	struct dispatch_queue *q = j->q;
	struct server_conn *c = q->c;
	q->busy++; /* a reply may drop the connection, closing q */
	if (reply)
		server_reply_done(c, j->reply);
	if (j->stream)
		q->d->streams--;
	/* the stream's statement first: its connection goes back to the
	 * generation's pool (query_sql.h) */
	sqlstream_free(j->stream);
	if (j->g)
		session_release(j->g);
	buf_free(&j->chunk);
	query_params_free(&j->p);
	rpc_request_free(&j->rq);
	free(j);
	lifetime_request_end(q->d->lt);
	server_conn_unref(c);
	q->busy--;
}

/* A streamed answer's batch is out: its job waits, first in its queue,
 * for its next turn (schedule runs it once the client took the batch). */
static void stream_park(struct job *j)
{
	struct dispatch_queue *q = j->q;

	j->next = q->head;
	q->head = j;
	if (!q->tail)
		q->tail = j;
	ring_add(q);
}

static void work_done(uv_work_t *req, int status)
{
	struct job *j = req->data;
	struct dispatch_queue *q = j->q;
	struct dispatch *d = q->d;
	uint64_t us = (uv_hrtime() - j->t0) / 1000;
	int more = 0;

	(void)status;
	if (j->sql) {
		d->sql_running = 0;
		d->sql_job = NULL;
	}
	d->running--;
	q->running--;
	if (j->stream) {
		q->busy++; /* the send may drop the connection, closing q */
		server_reply_send(q->c, j->reply, &j->chunk, j->final);
		more = !j->final && !q->closed;
		q->busy--;
	}
	if (more) {
		stream_park(j);
	} else {
		d->last_us = us > UINT32_MAX ? UINT32_MAX : (uint32_t)us;
		d->times[d->ntimes++ % TIMES] = d->last_us;
		job_end(j, !j->stream);
	}
	q_release(q); /* when its connection is gone */
	schedule(d);
	server_work_done(d->srv);
}

/* Fails a job that did not run (or a stream between batches) with an
 * error reply. */
static void job_fail(struct job *j, int code, const char *msg)
{
	struct dispatch_queue *q = j->q;
	if (j->stream) {
		server_error_frame(&j->chunk, j->rq.id, code, msg);
		q->busy++;
		server_reply_send(q->c, j->reply, &j->chunk, 1);
		q->busy--;
		job_end(j, 0);
	} else {
		server_error_frame(server_reply_buf(j->reply), j->rq.id, code, msg);
		job_end(j, 1);
	}
	q_release(q);
}

static void reload_run(uv_work_t *req)
{
	struct dispatch *d = req->data;
	err_clear(&d->reload_err);
	d->reload_rc = session_load(d->sess, &d->reload_gen, &d->reload_err);
}

/* Fails every query waiting in any queue (used when the new generation
 * cannot be opened, and on stop). */
static void fail_waiting(struct dispatch *d, int code, const char *msg)
{
	while (d->ring) {
		struct dispatch_queue *q = d->ring;
		job_fail(pop(q), code, msg);
	}
}

/* A new generation could not be opened: the queries waiting for it fail,
 * but not a streamed answer between two batches (it keeps the generation
 * it started with), nor what waits behind it on its connection. */
static void fail_unstarted(struct dispatch *d, int code, const char *msg)
{
	struct dispatch_queue *held = NULL, *q;

	while ((q = d->ring)) {
		if (q->head->stream && q->head->g) {
			ring_remove(q);
			q->rnext = held;
			held = q;
		} else {
			job_fail(pop(q), code, msg);
		}
	}
	while ((q = held)) {
		held = q->rnext;
		q->rnext = NULL;
		ring_add(q);
	}
}

static void reload_done(uv_work_t *req, int status)
{
	struct dispatch *d = req->data;

	(void)status;
	d->reloading = 0;
	if (d->reload_rc == 0) {
		session_install(d->sess, d->reload_gen);
		logf_(d, "report rebuilt: now serving generation %s", session_generation(d->sess));
	} else {
		logf_(d, "%s", d->reload_err.msg);
		/* the queries that waited get the reason; the next one retries */
		fail_unstarted(d, RPC_GENERATION_ERROR, d->reload_err.msg);
	}
	d->reload_gen = NULL;
	/* the waiters of dispatch_fresh (a callback may add new ones) */
	struct fresh_wait *w = d->waits;
	size_t n = d->nwaits;
	d->waits = NULL;
	d->nwaits = d->capwaits = 0;
	for (size_t k = 0; k < n; k++)
		w[k].fn(w[k].ctx, d->reload_rc, d->reload_rc ? d->reload_err.msg : NULL);
	free(w);
	schedule(d);
	server_work_done(d->srv);
}

int dispatch_fresh(struct dispatch *d, void (*fn)(void *ctx, int rc, const char *msg),
                   void *ctx)
{
	if (!d->reloading && !session_changed(d->sess))
		return 1;
	if (vec_reserve(&d->waits, &d->capwaits, d->nwaits + 1, sizeof *d->waits))
		return -1;
	d->waits[d->nwaits].fn = fn;
	d->waits[d->nwaits].ctx = ctx;
	d->nwaits++;
	start_reload(d);
	return 0;
}

void dispatch_request_begin(struct dispatch *d)
{
	lifetime_request_begin(d->lt);
}

void dispatch_request_end(struct dispatch *d)
{
	lifetime_request_end(d->lt);
}

/* Starts opening the report's new generation unless that is under way. */
static void start_reload(struct dispatch *d)
{
	if (d->reloading)
		return;
	d->reloading = 1;
	d->reload_req.data = d;
	if (uv_queue_work(d->loop, &d->reload_req, reload_run, reload_done) != 0) {
		d->reload_rc = err_set(&d->reload_err, ERR_DATA, "Cannot queue the report reload");
		reload_done(&d->reload_req, 0);
	}
}

/* Starts the waiting queries that may start, in round robin. */
static void schedule(struct dispatch *d)
{
	while (d->ring && d->running < DISPATCH_WORKERS && !d->reloading) {
		struct dispatch_queue *q = d->ring, *start = d->ring;
		/* the next queue, in turn, that may run one more */
		while (q->running >= DISPATCH_PER_CONN || !server_conn_ready(q->c) ||
		       (q->head->sql && d->sql_running) ||
		       (q->head->stream && q->head->g &&
		        server_conn_unsent(q->c) >= STREAM_AHEAD)) {
			q = q->rnext;
			if (q == start)
				return;
		}
		if (session_changed(d->sess)) {
			/* the report was rebuilt: answer from the new generation */
			start_reload(d);
			return;
		}
		d->ring = q->rnext;
		struct job *j = pop(q);
		if (!j->g) /* a stream's later batches keep theirs */
			j->g = session_acquire(d->sess);
		j->req.data = j;
		q->running++;
		d->running++;
		if (j->sql) {
			d->sql_running = 1;
			d->sql_job = j;
		}
		if (uv_queue_work(d->loop, &j->req, work_run, work_done) != 0) {
			q->running--;
			d->running--;
			if (j->sql) {
				d->sql_running = 0;
				d->sql_job = NULL;
			}
			job_fail(j, RPC_INTERNAL_ERROR, "Cannot queue the query");
		}
	}
}

static void on_kick(void *h)
{
	struct dispatch *d = h;

	schedule(d);
}

/* ---- queues ---- */

static void *on_queue_new(void *h, struct server_conn *c)
{
	struct dispatch *d = h;

	struct dispatch_queue *q = calloc(1, sizeof *q);
	if (q) {
		q->d = d;
		q->c = c;
	}
	return q;
}

static void on_queue_close(void *queue)
{
	struct dispatch_queue *q = queue;

	q->closed = 1;
	ring_remove(q);
	if (q->d->sql_job && q->d->sql_job->q == q)
		q->d->sql_job->cancel = 1; /* its statement ends at once */
	while (q->head) {
		struct job *j = q->head;
		q->head = j->next;
		if (!q->head)
			q->tail = NULL;
		job_end(j, 0);
	}
	q_release(q); /* else the last user frees it */
}

static void on_fail_waiting(void *h)
{
	struct dispatch *d = h;

	fail_waiting(d, RPC_DATA_ERROR, "The session is stopping; the query was not run");
}

static void on_stop(void *h)
{
	struct dispatch *d = h;

	/* Queries already accepted still run for clients that read their
	 * replies; the queue of a client that does not is cancelled when the
	 * transport drops it.  A running sql statement is interrupted: its
	 * time limit may be far away. */
	d->stopping = 1;
	d->stop_flag = 1;
}

/* ---- the methods ---- */

static void on_query(struct dispatch_queue *q, struct rpc_request *rq)
{
	struct dispatch *d = q->d;
	struct err e;
	struct job *j;
	json_t *sv;

	err_clear(&e);
	if (rq->params && !json_is_object(rq->params)) {
		server_reply_error(q->c, rq->id, RPC_INVALID_PARAMS, "params must be an object");
		return;
	}
	sv = rq->params ? json_object_get(rq->params, "stream_rows") : NULL;
	if (sv && !json_is_boolean(sv)) {
		server_reply_error(q->c, rq->id, RPC_INVALID_PARAMS, "stream_rows must be true or false");
		return;
	}
	if (d->stopping) {
		server_reply_error(q->c, rq->id, RPC_DATA_ERROR,
		                   "The session is stopping; the query was not run");
		return;
	}
	j = calloc(1, sizeof *j);
	if (!j) {
		server_reply_error(q->c, rq->id, RPC_INTERNAL_ERROR, "Out of memory");
		return;
	}
	query_params_init(&j->p);
	if (rq->params && query_params_from_json(rq->params, &j->p, &e)) {
		server_reply_error(q->c, rq->id, rpc_code_for_err(e.code), e.msg);
		query_params_free(&j->p);
		free(j);
		return;
	}
	j->reply = server_reply_new(q->c);
	if (!j->reply) {
		query_params_free(&j->p);
		free(j);
		return;
	}
	server_reply_flags(j->reply, !rq->id, 0);
	j->rq = *rq;          /* takes the tree: strings of p point into it */
	memset(rq, 0, sizeof *rq);
	j->q = q;
	j->sql = j->p.kind && !strcmp(j->p.kind, "sql");
	j->p.stop = &d->stop_flag;
	j->p.cancel = &j->cancel;
	buf_init(&j->chunk, FRAME_RESPONSE_MAX + 4096);
	/* an sql answer streams when asked, to a client that reads frames as
	 * they come and wants the answer (not a notification); out of memory,
	 * it is one reply */
	if (j->sql && json_is_true(sv) && j->rq.id && server_conn_streams(q->c) &&
	    sqlstream_new(&j->stream))
		j->stream = NULL;
	d->streams += j->stream != NULL;
	j->t0 = uv_hrtime();
	server_conn_ref(q->c);
	d->queries++;
	lifetime_request_begin(d->lt);
	if (q->tail)
		q->tail->next = j;
	else
		q->head = j;
	q->tail = j;
	ring_add(q);
	schedule(d);
}

/* Runs a method answered at once: writes its result into a new reply. */
static void answer(struct dispatch_queue *q, struct rpc_request *rq,
                   void (*write)(struct dispatch *d, struct buf *o))
{
	struct server_reply *r = server_reply_new(q->c);
	struct buf *o;
	size_t off;
	if (!r)
		return;
	server_reply_flags(r, !rq->id, 0);
	o = server_reply_buf(r);
	off = frame_begin(o);
	rpc_result_open(o, rq->id);
	write(q->d, o);
	rpc_result_close(o);
	if (frame_end(o, off, FRAME_RESPONSE_MAX))
		server_error_frame(o, rq->id, RPC_INTERNAL_ERROR, "Out of memory");
	server_reply_done(q->c, r);
}

static void write_hello(struct dispatch *d, struct buf *o)
{
	status_hello(o, d->info, d->sess);
}

static void write_status(struct dispatch *d, struct buf *o)
{
	struct status_input in;
	uv_update_time(d->loop);
	in.info = d->info;
	in.sess = d->sess;
	in.lt = d->lt;
	in.now_ms = uv_now(d->loop);
	in.queries = d->queries;
	in.connections = server_connections(d->srv);
	in.sql_streams = d->streams;
	in.times = d->times;
	in.ntimes = d->ntimes < TIMES ? d->ntimes : TIMES;
	in.last_us = d->last_us;
	status_write(o, &in);
}

static void write_stopping(struct dispatch *d, struct buf *o)
{
	(void)d;
	buf_puts(o, "{\"stopping\":true,\"pid\":");
	jsonout_int(o, getpid());
	buf_putc(o, '}');
}

static void on_hello(struct dispatch_queue *q, struct rpc_request *rq)
{
	json_t *pv = rq->params ? json_object_get(rq->params, "protocol") : NULL;
	if (pv && !(json_is_integer(pv) && json_integer_value(pv) == RPC_PROTOCOL)) {
		char m[160];
		struct server_reply *r;
		if (json_is_integer(pv))
			snprintf(m, sizeof m, "Unsupported protocol %lld: this server speaks protocol %d",
			         (long long)json_integer_value(pv), RPC_PROTOCOL);
		else
			snprintf(m, sizeof m, "Unsupported protocol: this server speaks protocol %d",
			         RPC_PROTOCOL);
		if (!(r = server_reply_new(q->c)))
			return;
		server_reply_flags(r, 0, 1);
		server_error_frame(server_reply_buf(r), rq->id, RPC_INVALID_REQUEST, m);
		server_reply_done(q->c, r);
		return;
	}
	if (session_changed(q->d->sess))
		start_reload(q->d); /* hello answers at once, from the current one */
	answer(q, rq, write_hello);
}

static void on_status(struct dispatch_queue *q, struct rpc_request *rq)
{
	if (session_changed(q->d->sess))
		start_reload(q->d); /* status answers at once, from the current one */
	answer(q, rq, write_status);
}

static void on_shutdown(struct dispatch_queue *q, struct rpc_request *rq)
{
	answer(q, rq, write_stopping);
	server_stop(q->d->srv, "kill-server");
}

static const struct method {
	const char *name;
	void (*handle)(struct dispatch_queue *q, struct rpc_request *rq);
} methods[] = {
	{RPC_HELLO, on_hello},
	{RPC_QUERY, on_query},
	{RPC_STATUS, on_status},
	{RPC_SHUTDOWN, on_shutdown},
};

static void on_frame(void *queue, const char *msg, size_t len)
{
	struct dispatch_queue *q = queue;

	struct rpc_request rq;
	struct err e;
	int code;

	err_clear(&e);
	q->busy++; /* a reply may drop the connection, closing q */
	code = rpc_parse_request(msg, len, 0, &rq, &e);
	if (code) {
		server_reply_error(q->c, rq.id, code, e.msg);
		goto done;
	}
	for (size_t k = 0; k < sizeof methods / sizeof methods[0] && !q->closed; k++) {
		if (!strcmp(rq.method, methods[k].name)) {
			methods[k].handle(q, &rq);
			goto done;
		}
	}
	char m[160];
	snprintf(m, sizeof m, "Unknown method '%.*s'; use hello, query, status or shutdown",
	         (int)utf8_cut(rq.method, strlen(rq.method), 100), rq.method);
	server_reply_error(q->c, rq.id, RPC_METHOD_NOT_FOUND, m);
done:
	rpc_request_free(&rq);
	q->busy--;
	q_release(q);
}

static const struct server_handler handler = {
	on_queue_new, on_queue_close, on_frame, on_kick, on_stop,
	on_fail_waiting, on_busy,
};

void dispatch_attach(struct dispatch *d, struct server *srv)
{
	d->srv = srv;
	d->info = server_info(srv);
	server_set_handler(srv, &handler, d);
}
