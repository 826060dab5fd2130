/* http: the HTTP transport on the libuv loop (see http.h). */
#include "http.h"
#include "base/buf.h"
#include "frame.h"
#include "http_auth.h"
#include "http_bridge.h"
#include "http_files.h"

#include <microhttpd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 256            /* HTTP connections served at once */
#define MHD_CONNS 512            /* accepted at once: the ones above MAX_CONNS get 503 */
#define IDLE_S 60                /* a connection idle this long is closed */
#define FIRST_HEADER_MS 10000    /* the first request's headers, from the connection */
#define NEXT_HEADER_MS 60000     /* a later request's headers, from the previous answer */
#define POOL_BYTES (64 * 1024)   /* per connection: at most 64 KiB of headers */
#define STOP_DRAIN_MS 5000       /* the last responses of a stop */
#define TICK_MS 1000
#define STREAM_BLOCK 16384       /* a streamed answer is pulled in such pieces */
/* POST /rpc bodies: 1 MiB, the HTTP contract, below the socket's 8 MiB
 * request frames (which leave room for a 1 MiB sql statement however JSON
 * escapes it); a larger statement goes through the socket or a local
 * query (doc/sessions-protocol.md "HTTP"). */
#define HTTP_BODY_MAX ((size_t)1 << 20)

enum route { R_NONE, R_RPC, R_INDEX, R_FILE };

/* One HTTP connection (libmicrohttpd's socket context). */
struct hconn {
	struct http *h;
	struct hconn *prev, *next;
	int fd;
	uint64_t since_ms;   /* the header clock: connection, or the last answer */
	int first;           /* no request seen yet */
	int in_request;      /* headers arrived, answer not yet sent */
	int over;            /* accepted beyond MAX_CONNS: answered 503 */
};

/* One request (libmicrohttpd's per-request context). */
struct hreq {
	struct http *h;
	struct MHD_Connection *conn;
	struct hconn *hc;
	enum route route;
	char rel[200];
	int gzip_ok;
	int ndjson;          /* the client takes a streamed answer as NDJSON */
	struct buf body;
	int suspended;
	int waiting_fresh;   /* dispatch_fresh will call back */
	int abandoned;       /* the connection went away while waiting */
	int fresh_rc;
	char fresh_msg[600];
	int ready;           /* resp/status hold the answer */
	struct MHD_Response *resp;
	unsigned status;
	struct http_bridge *bridge;
};

struct http {
	struct http_auth auth;
	int listen_fd;
	uv_loop_t *loop;
	struct server *srv;
	struct dispatch *disp;
	struct session *sess;
	struct MHD_Daemon *mhd;
	uv_poll_t poll;
	uv_timer_t timer;    /* libmicrohttpd's own timeouts */
	uv_timer_t tick;     /* header deadlines, the stop's drain */
	uv_idle_t again;     /* run libmicrohttpd on the next turn */
	int handles;
	struct hconn *conns;
	int nconns;
	int inflight;        /* requests between their headers and their end */
	int stopping;
	uint64_t finish_ms;
	void (*done)(void *ctx);
	void *done_ctx;
	void (*log)(void *ctx, const char *msg);
	void *log_ctx;
	uint64_t log_ms;
	int log_dropped;
};

static void logf_(struct http *h, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct http *h, const char *fmt, ...)
{
	char msg[1000];
	va_list ap;
	if (!h->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	h->log(h->log_ctx, msg);
}

/* libmicrohttpd's messages: at most one line a second. */
static void mhd_log(void *cls, const char *fmt, va_list ap)
{
	struct http *h = cls;
	char msg[600];
	uint64_t now = h->loop ? uv_now(h->loop) : 0;
	size_t n;
	if (now - h->log_ms < 1000 && h->log_ms) {
		h->log_dropped++;
		return;
	}
	vsnprintf(msg, sizeof msg, fmt, ap);
	n = strlen(msg);
	while (n && (msg[n - 1] == '\n' || msg[n - 1] == '\r'))
		msg[--n] = 0;
	h->log_ms = now;
	if (h->log_dropped)
		logf_(h, "http: %s (and %d more messages)", msg, h->log_dropped);
	else
		logf_(h, "http: %s", msg);
	h->log_dropped = 0;
}

/* ---- driving libmicrohttpd from the loop ---- */

static void run_mhd(struct http *h);

static void on_again(uv_idle_t *i)
{
	struct http *h = i->data;
	uv_idle_stop(i);
	run_mhd(h);
}

/* Runs libmicrohttpd on the next turn (never from inside its callbacks). */
static void kick(struct http *h)
{
	if (h->mhd)
		uv_idle_start(&h->again, on_again);
}

static void on_timer(uv_timer_t *t)
{
	run_mhd(t->data);
}

static void on_poll(uv_poll_t *p, int status, int events)
{
	(void)status;
	(void)events;
	run_mhd(p->data);
}

static void run_mhd(struct http *h)
{
	MHD_UNSIGNED_LONG_LONG t;
	if (!h->mhd)
		return;
	MHD_run(h->mhd);
	if (MHD_get_timeout(h->mhd, &t) == MHD_YES) {
		if (t == 0)
			uv_idle_start(&h->again, on_again);
		else
			uv_timer_start(&h->timer, on_timer, t, 0);
	} else {
		uv_timer_stop(&h->timer);
	}
}

/* ---- connections ---- */

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	struct http *h = cls;
	struct hconn *hc = *socket_context;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		if (!(hc = calloc(1, sizeof *hc)))
			return; /* not tracked: libmicrohttpd's own timeouts still apply */
		hc->h = h;
		hc->fd = ci ? ci->connect_fd : -1;
		hc->since_ms = uv_now(h->loop);
		hc->first = 1;
		hc->over = h->nconns >= MAX_CONNS;
		hc->next = h->conns;
		if (h->conns)
			h->conns->prev = hc;
		h->conns = hc;
		h->nconns++;
		*socket_context = hc;
		return;
	}
	if (!hc)
		return;
	if (hc->prev)
		hc->prev->next = hc->next;
	else
		h->conns = hc->next;
	if (hc->next)
		hc->next->prev = hc->prev;
	h->nconns--;
	free(hc);
	*socket_context = NULL;
}

/* Every second: connections that did not send their headers in time are
 * shut down (libmicrohttpd then closes them), and the stop's drain. */
static void on_tick(uv_timer_t *t)
{
	struct http *h = t->data;
	uint64_t now = uv_now(h->loop);
	int slow = 0;
	for (struct hconn *hc = h->conns; hc; hc = hc->next) {
		uint64_t limit = hc->first ? FIRST_HEADER_MS : NEXT_HEADER_MS;
		if (!hc->in_request && hc->fd >= 0 && now - hc->since_ms >= limit) {
			shutdown(hc->fd, SHUT_RDWR);
			hc->fd = -1;
			slow++;
		}
	}
	if (slow) {
		logf_(h, "http: closed %d connection(s) that did not send a request's headers in time", slow);
		kick(h);
	}
	if (h->done && (h->inflight == 0 || now - h->finish_ms >= STOP_DRAIN_MS)) {
		void (*done)(void *) = h->done;
		h->done = NULL;
		/* the watch on its epoll descriptor goes first; then libmicrohttpd
		 * closes what is left and runs its completion callbacks */
		uv_poll_stop(&h->poll);
		uv_close((uv_handle_t *)&h->poll, NULL);
		MHD_stop_daemon(h->mhd);
		h->mhd = NULL;
		uv_close((uv_handle_t *)&h->timer, NULL);
		uv_close((uv_handle_t *)&h->tick, NULL);
		uv_close((uv_handle_t *)&h->again, NULL);
		done(h->done_ctx);
	}
}

/* ---- requests ---- */

static void req_free(struct hreq *r)
{
	if (r->resp)
		MHD_destroy_response(r->resp);
	buf_free(&r->body);
	free(r);
}

static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
	struct http *h = cls;
	struct hreq *r = *req_cls;
	(void)conn;
	(void)toe;
	if (!r)
		return;
	*req_cls = NULL;
	if (r->hc) {
		r->hc->in_request = 0;
		r->hc->since_ms = uv_now(h->loop);
	}
	h->inflight--;
	dispatch_request_end(h->disp);
	if (r->bridge)
		http_bridge_cancel(r->bridge);
	if (r->waiting_fresh) {
		r->abandoned = 1; /* on_fresh frees it */
		return;
	}
	req_free(r);
}

/* Queues status + resp (taken over; NULL: out of memory). */
static enum MHD_Result reply(struct MHD_Connection *conn, unsigned status,
                             struct MHD_Response *resp)
{
	enum MHD_Result rc;
	if (!resp)
		return MHD_NO; /* libmicrohttpd closes the connection */
	rc = MHD_queue_response(conn, status, resp);
	MHD_destroy_response(resp);
	return rc;
}

static enum MHD_Result reply_error(struct MHD_Connection *conn, unsigned status,
                                   const char *msg, int close)
{
	struct MHD_Response *resp = http_files_error(msg);
	if (resp && close)
		MHD_add_response_header(resp, "Connection", "close");
	if (resp && status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(resp, "Allow", "GET, HEAD");
	return reply(conn, status, resp);
}

static void resume(struct hreq *r)
{
	if (r->suspended) {
		r->suspended = 0;
		MHD_resume_connection(r->conn);
		kick(r->h);
	}
}

static void on_rpc_reply(void *ctx, int rc, char *body, size_t len, const char *msg)
{
	struct hreq *r = ctx;
	r->bridge = NULL;
	r->ready = 1;
	if (rc) {
		r->status = MHD_HTTP_SERVICE_UNAVAILABLE;
		r->resp = http_files_error(msg);
	} else if (!body) {
		r->status = MHD_HTTP_NO_CONTENT; /* a notification */
		r->resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (r->resp)
			http_files_common(r->resp);
	} else {
		r->status = MHD_HTTP_OK;
		r->resp = http_files_json(body, len);
	}
	resume(r);
}

/* A streamed answer's response: its body is pulled from the bridge. */
struct hstream {
	struct http *h;
	struct MHD_Connection *conn;
	struct http_bridge *b;
	int suspended;       /* waiting for the session's next batch */
};

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct hstream *s = cls;
	ssize_t n = http_bridge_pull(s->b, buf, max);
	(void)pos;
	if (n > 0)
		return n;
	if (n == 0) {
		/* nothing yet: stream_wake resumes it (no busy polling) */
		s->suspended = 1;
		MHD_suspend_connection(s->conn);
		return 0;
	}
	/* a session's side that closed in mid-answer: the chunked body
	 * stays unterminated, so the client sees it cut */
	return n == HTTP_BRIDGE_END ? MHD_CONTENT_READER_END_OF_STREAM
	                            : MHD_CONTENT_READER_END_WITH_ERROR;
}

static void stream_wake(void *ctx)
{
	struct hstream *s = ctx;
	if (s->suspended) {
		s->suspended = 0;
		MHD_resume_connection(s->conn);
		kick(s->h);
	}
}

/* The response is done with (sent, or its client went away): the
 * statement, if still running, is cancelled with the bridge. */
static void stream_free(void *cls)
{
	struct hstream *s = cls;
	http_bridge_cancel(s->b);
	free(s);
}

/* The answer streams: a chunked NDJSON response pulls it. */
static void on_rpc_streams(void *ctx)
{
	struct hreq *r = ctx;
	struct hstream *s = calloc(1, sizeof *s);
	struct MHD_Response *resp = NULL;

	if (s) {
		s->h = r->h;
		s->conn = r->conn;
		s->b = r->bridge;
		resp = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, STREAM_BLOCK, stream_read,
		                                         s, stream_free);
	}
	r->ready = 1;
	if (!resp) {
		free(s); /* the bridge stays r's: on_completed cancels it */
		r->status = MHD_HTTP_INTERNAL_SERVER_ERROR;
		r->resp = http_files_error("Out of memory");
	} else {
		http_bridge_watch(r->bridge, stream_wake, s);
		r->bridge = NULL; /* the response's now */
		http_files_ndjson(resp);
		r->status = MHD_HTTP_OK;
		r->resp = resp;
	}
	resume(r);
}

static const struct http_bridge_ops reply_ops = {on_rpc_reply, NULL};
static const struct http_bridge_ops stream_ops = {on_rpc_reply, on_rpc_streams};

static void on_fresh(void *ctx, int rc, const char *msg)
{
	struct hreq *r = ctx;
	r->waiting_fresh = 0;
	if (r->abandoned) {
		req_free(r);
		return;
	}
	r->fresh_rc = rc;
	snprintf(r->fresh_msg, sizeof r->fresh_msg, "%s", msg ? msg : "");
	resume(r);
}

/* The answer of a viewer file once the generation is current. */
static enum MHD_Result serve_file(struct hreq *r)
{
	struct http *h = r->h;
	struct session_gen *g;
	unsigned status = MHD_HTTP_OK;
	struct MHD_Response *resp;
	if (r->fresh_rc)
		return reply_error(r->conn, MHD_HTTP_SERVICE_UNAVAILABLE, r->fresh_msg, 0);
	g = session_acquire(h->sess);
	if (r->route == R_INDEX)
		return reply(r->conn, 200, http_files_index(g, &status)); /* takes g */
	resp = http_files_file(g, r->rel, r->gzip_ok, &status);
	session_release(g);
	return reply(r->conn, status, resp);
}

static int is_json_type(const char *ct)
{
	size_t n = strlen("application/json");
	return ct && !strncasecmp(ct, "application/json", n) &&
	       (ct[n] == 0 || ct[n] == ';' || ct[n] == ' ');
}

/* Accept names NDJSON (and not with q=0). */
static int accepts_ndjson(const char *accept)
{
	const char *p = accept ? strcasestr(accept, HTTP_FILES_NDJSON) : NULL;
	return p && strncmp(p + strlen(HTTP_FILES_NDJSON), ";q=0", 4) != 0;
}

static int accepts_gzip(const char *ae)
{
	/* "gzip" as a coding, not "gzip;q=0" */
	const char *p = ae ? strcasestr(ae, "gzip") : NULL;
	return p && !strstr(p, "q=0,") && strncmp(p + 4, ";q=0", 4) != 0;
}

/* Where a path leads; 0 with *allowed the methods when the method is
 * wrong; -1 for an unknown path. */
static int route_of(struct hreq *r, const char *url, const char *method)
{
	int get = !strcmp(method, "GET") || !strcmp(method, "HEAD");
	if (!strcmp(url, "/rpc")) {
		r->route = R_RPC;
		return !strcmp(method, "POST");
	}
	if (!strcmp(url, "/") || !strcmp(url, "/index.html")) {
		r->route = R_INDEX;
		return get;
	}
	if (strlen(url) < sizeof r->rel + 1 && url[0] == '/' &&
	    (!strncmp(url, "/detail/", 8) || !strcmp(url, "/parts.json") || !strncmp(url, "/part-", 6)) &&
	    !strstr(url, "..")) {
		r->route = R_FILE;
		snprintf(r->rel, sizeof r->rel, "%s", url + 1);
		return get;
	}
	return -1;
}

/* The first call of a request: its headers are in.  The checks, in
 * order: too many connections, Host, Origin, path and method, token. */
static enum MHD_Result begin(struct http *h, struct hreq *r, const char *url,
                             const char *method)
{
	struct MHD_Connection *c = r->conn;
	const char *host = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Host");
	const char *origin = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Origin");
	char tok[HTTP_AUTH_TOKEN_LEN + 2];
	int rt;

	if (r->hc && r->hc->over)
		return reply_error(c, MHD_HTTP_SERVICE_UNAVAILABLE,
		                   "Too many connections: the session serves 256 HTTP connections at once; "
		                   "try again shortly", 1);
	if (!http_auth_host_ok(&h->auth, host))
		return reply_error(c, MHD_HTTP_FORBIDDEN,
		                   "Forbidden: the Host header does not name this session's listener", 1);
	if (!http_auth_origin_ok(origin, host))
		return reply_error(c, MHD_HTTP_FORBIDDEN,
		                   "Forbidden: cross-site requests are refused (the Origin is not this session's)", 1);
	rt = route_of(r, url, method);
	if (rt < 0)
		return reply_error(c, MHD_HTTP_NOT_FOUND, "Not found", 0);
	/* the token: a browser opening /?token=T gets it as a cookie */
	const char *qtok = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "token");
	if (qtok && r->route == R_INDEX && rt == 1) {
		char cookie[200];
		struct MHD_Response *resp;
		if (!http_auth_token_ok(&h->auth, qtok))
			return reply_error(c, MHD_HTTP_UNAUTHORIZED,
			                   "Unauthorized: the token is not valid (dsight ctl url NAME prints the "
			                   "session's URL with its token)", 0);
		snprintf(cookie, sizeof cookie, "dsight_token=%s; HttpOnly; SameSite=Strict; Path=/",
		         h->auth.token);
		resp = MHD_create_response_from_buffer(0, NULL, MHD_RESPMEM_PERSISTENT);
		if (!resp)
			return MHD_NO;
		MHD_add_response_header(resp, "Set-Cookie", cookie);
		MHD_add_response_header(resp, "Location", "/");
		MHD_add_response_header(resp, "Cache-Control", "no-store");
		http_files_common(resp);
		return reply(c, MHD_HTTP_SEE_OTHER, resp);
	}
	if (!http_auth_request_token(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization"),
	                             MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Cookie"), tok))
		return reply_error(c, MHD_HTTP_UNAUTHORIZED,
		                   "Unauthorized: no token; send Authorization: Bearer TOKEN, or open "
		                   "/?token=TOKEN in a browser (dsight ctl url NAME prints it)", 0);
	if (!http_auth_token_ok(&h->auth, tok))
		return reply_error(c, MHD_HTTP_UNAUTHORIZED,
		                   "Unauthorized: the token is not valid (dsight ctl url NAME prints the "
		                   "session's URL with its token)", 0);
	if (rt == 0) {
		if (r->route == R_RPC) {
			struct MHD_Response *resp = http_files_error("Method not allowed: use POST /rpc");
			if (resp)
				MHD_add_response_header(resp, "Allow", "POST");
			return reply(c, MHD_HTTP_METHOD_NOT_ALLOWED, resp);
		}
		return reply_error(c, MHD_HTTP_METHOD_NOT_ALLOWED, "Method not allowed: use GET", 0);
	}
	if (r->route == R_RPC) {
		const char *ct = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Type");
		const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
		if (!is_json_type(ct))
			return reply_error(c, MHD_HTTP_UNSUPPORTED_MEDIA_TYPE,
			                   "Unsupported media type: POST /rpc takes Content-Type: application/json", 1);
		if (cl && strtoull(cl, NULL, 10) > HTTP_BODY_MAX)
			return reply_error(c, MHD_HTTP_CONTENT_TOO_LARGE,
			                   "The request body is larger than the 1 MiB limit", 1);
		buf_init(&r->body, HTTP_BODY_MAX);
		r->ndjson = accepts_ndjson(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept"));
		return MHD_YES;
	}
	r->gzip_ok = accepts_gzip(MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Accept-Encoding"));
	return MHD_YES;
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url,
                                  const char *method, const char *version,
                                  const char *upload, size_t *upload_size, void **req_cls)
{
	struct http *h = cls;
	struct hreq *r = *req_cls;
	struct err e;
	(void)version;

	if (!r) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
		if (!(r = calloc(1, sizeof *r)))
			return MHD_NO;
		r->h = h;
		r->conn = conn;
		r->hc = ci ? ci->socket_context : NULL;
		*req_cls = r;
		h->inflight++;
		dispatch_request_begin(h->disp);
		if (r->hc) {
			r->hc->first = 0;
			r->hc->in_request = 1;
		}
		return begin(h, r, url, method);
	}
	if (r->ready) {
		struct MHD_Response *resp = r->resp;
		r->resp = NULL;
		r->ready = 0;
		return reply(conn, r->status, resp);
	}
	if (r->route == R_RPC) {
		if (*upload_size) {
			/* a body without Content-Length (chunked) that grows too
			 * large: answered at once, the rest is not read */
			if (r->body.len + *upload_size > HTTP_BODY_MAX)
				return reply_error(conn, MHD_HTTP_CONTENT_TOO_LARGE,
				                   "The request body is larger than the 1 MiB limit", 1);
			buf_append(&r->body, upload, *upload_size);
			*upload_size = 0;
			return MHD_YES;
		}
		if (r->body.failed)
			return reply_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory", 1);
		err_clear(&e);
		if (http_bridge_call(h->loop, h->srv, r->body.data ? r->body.data : "", r->body.len,
		                     r->ndjson ? &stream_ops : &reply_ops, r, &r->bridge, &e))
			return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, e.msg, 0);
		buf_free(&r->body);
		r->suspended = 1;
		MHD_suspend_connection(conn);
		return MHD_YES;
	}
	/* a viewer file: from the current generation, reloaded if need be
	 * (a body sent with a GET is read and dropped) */
	if (*upload_size) {
		*upload_size = 0;
		return MHD_YES;
	}
	if (h->stopping)
		return reply_error(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "The session is stopping", 1);
	if (!r->waiting_fresh && !r->fresh_msg[0] && !r->fresh_rc) {
		int f = dispatch_fresh(h->disp, on_fresh, r);
		if (f < 0)
			return reply_error(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "Out of memory", 0);
		if (f == 0) {
			r->waiting_fresh = 1;
			r->suspended = 1;
			MHD_suspend_connection(conn);
			return MHD_YES;
		}
	}
	return serve_file(r);
}

/* ---- lifecycle ---- */

int http_prepare(const char *spec, int allow_remote, struct http **out, struct err *e)
{
	struct http *h = calloc(1, sizeof *h);
	if (!h)
		return err_set(e, ERR_NOMEM, "Out of memory");
	h->listen_fd = -1;
	if (http_auth_listen(spec, allow_remote, &h->auth, &h->listen_fd, e) ||
	    http_auth_new_token(&h->auth, e)) {
		http_free(h);
		return e->code;
	}
	*out = h;
	return 0;
}

const char *http_url(const struct http *h)
{
	return h->auth.url;
}

int http_remote(const struct http *h)
{
	return h->auth.remote;
}

int http_write_token(const struct http *h, const char *path, struct err *e)
{
	return http_auth_write_file(&h->auth, path, e);
}

/* The server begins its stop: no new HTTP connection either. */
static void on_server_stop(void *ctx)
{
	struct http *h = ctx;
	h->stopping = 1;
	if (h->mhd) {
		MHD_socket fd = MHD_quiesce_daemon(h->mhd);
		if (fd != MHD_INVALID_SOCKET)
			close(fd);
		h->listen_fd = -1;
	}
}

int http_start(struct http *h, uv_loop_t *loop, struct server *srv,
               struct dispatch *disp, struct session *sess,
               void (*log)(void *ctx, const char *msg), void *log_ctx, struct err *e)
{
	const union MHD_DaemonInfo *di;
	h->loop = loop;
	h->srv = srv;
	h->disp = disp;
	h->sess = sess;
	h->log = log;
	h->log_ctx = log_ctx;
	h->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_ERROR_LOG,
	                          0, NULL, NULL, on_request, h,
	                          MHD_OPTION_EXTERNAL_LOGGER, mhd_log, h,
	                          MHD_OPTION_LISTEN_SOCKET, (MHD_socket)h->listen_fd,
	                          MHD_OPTION_CONNECTION_LIMIT, (unsigned int)MHD_CONNS,
	                          MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)IDLE_S,
	                          MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)POOL_BYTES,
	                          MHD_OPTION_NOTIFY_COMPLETED, on_completed, h,
	                          MHD_OPTION_NOTIFY_CONNECTION, on_connection, h,
	                          MHD_OPTION_END);
	if (!h->mhd)
		return err_set(e, ERR_DATA, "Cannot start the HTTP server on %s", h->auth.url);
	h->listen_fd = -1; /* libmicrohttpd's now */
	di = MHD_get_daemon_info(h->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di || uv_poll_init(loop, &h->poll, di->epoll_fd) != 0) {
		MHD_stop_daemon(h->mhd);
		h->mhd = NULL;
		return err_set(e, ERR_DATA, "Cannot watch the HTTP server on %s", h->auth.url);
	}
	h->poll.data = h;
	uv_timer_init(loop, &h->timer);
	h->timer.data = h;
	uv_timer_init(loop, &h->tick);
	h->tick.data = h;
	uv_idle_init(loop, &h->again);
	h->again.data = h;
	uv_poll_start(&h->poll, UV_READABLE, on_poll);
	uv_timer_start(&h->tick, on_tick, TICK_MS, TICK_MS);
	server_on_stop(srv, on_server_stop, h);
	run_mhd(h);
	return 0;
}

void http_finish(struct http *h, void (*done)(void *ctx), void *ctx)
{
	on_server_stop(h);
	if (!h->mhd) {
		done(ctx);
		return;
	}
	h->done = done;
	h->done_ctx = ctx;
	h->finish_ms = uv_now(h->loop);
	on_tick(&h->tick);
}

void http_free(struct http *h)
{
	if (!h)
		return;
	if (h->mhd)
		MHD_stop_daemon(h->mhd);
	if (h->listen_fd >= 0)
		close(h->listen_fd);
	free(h);
}
