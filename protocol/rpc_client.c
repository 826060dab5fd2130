/* rpc_client: blocking RPC client with timeouts (see rpc_client.h). */
#include "rpc_client.h"
#include "base/vec.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define READ_TIMEOUT_MS 60000

static int timeout_from_env(void)
{
	const char *v = getenv("DSIGHT_REMOTE_TIMEOUT");
	char *end;
	double s;
	if (!v || !*v)
		return READ_TIMEOUT_MS;
	s = strtod(v, &end);
	if (*end || !(s > 0) || s > 86400)
		return READ_TIMEOUT_MS;
	return (int)(s * 1000);
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Waits for events on fd until deadline; 1 ready, 0 timed out, -1 error. */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		int64_t left = deadline - now_ms();
		struct pollfd p = {fd, events, 0};
		int rc;
		if (left < 0)
			left = 0;
		rc = poll(&p, 1, (int)left);
		if (rc > 0)
			return 1;
		if (rc == 0)
			return 0;
		if (errno != EINTR)
			return -1;
	}
}

/* Leaves r closable with nothing connected. */
static void client_init(struct rpc_client *r, const char *path)
{
	/* every member but the 64 KiB input buffer, the last (filled before
	 * it is read): zeroing it cost a one-shot client 16 page faults */
	memset(r, 0, offsetof(struct rpc_client, in));
	r->fd = -1;
	snprintf(r->path, sizeof r->path, "%s", path);
	r->timeout_ms = timeout_from_env();
	r->next_id = 1;
	frame_reader_init(&r->fr, FRAME_RESPONSE_MAX);
}

int rpc_client_connect(struct rpc_client *r, const char *path, int *not_live,
                       struct err *e)
{
	client_init(r, path);
	return address_connect(path, RPC_CLIENT_CONNECT_MS, &r->fd, not_live, e);
}

int rpc_client_open(struct rpc_client *r, const char *addr, int *not_live,
                    struct err *e)
{
	struct address a;
	int rc;

	*not_live = 0;
	if (httpc_is_addr(addr)) {
		client_init(r, "");
		if (httpc_open(addr, RPC_CLIENT_CONNECT_MS, &r->http, not_live, e))
			return e->code;
		snprintf(r->path, sizeof r->path, "%s", httpc_url(r->http));
		return 0;
	}
	if (address_resolve(addr, 0, &a, e)) {
		client_init(r, "");
		return e->code;
	}
	rc = rpc_client_connect(r, a.path, not_live, e);
	if (rc && *not_live)
		address_not_live(&a, e->msg, sizeof e->msg);
	return rc;
}

void rpc_client_close(struct rpc_client *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	frame_reader_free(&r->fr);
	free(r->last);
	r->last = NULL;
	for (size_t k = r->next_answer; k < r->nanswers; k++)
		free(r->answers[k].text);
	free(r->answers);
	r->answers = NULL;
	r->nanswers = r->next_answer = r->cap_answers = 0;
	httpc_close(r->http);
	r->http = NULL;
}

/* HTTP: each frame of b is POSTed; the answers wait for rpc_client_recv,
 * the last request's as they come (a streamed answer is not held whole). */
static int http_send(struct rpc_client *r, const struct buf *b, struct err *e)
{
	size_t off = 0;
	while (off + FRAME_HEADER <= b->len) {
		size_t len = frame_get_len((const unsigned char *)b->data + off);
		char *text;
		size_t tlen;
		if (off + FRAME_HEADER + len > b->len)
			return err_set(e, ERR_USAGE, "Cannot build the request");
		if (httpc_stream(r->http, b->data + off + FRAME_HEADER, len, r->timeout_ms, e))
			return e->code;
		off += FRAME_HEADER + len;
		if (off + FRAME_HEADER > b->len)
			break; /* the last: read by http_recv */
		for (;;) {
			if (httpc_next(r->http, &text, &tlen, e))
				return e->code;
			if (!text)
				break; /* the end (a notification: no answer) */
			if (vec_reserve(&r->answers, &r->cap_answers, r->nanswers + 1, sizeof *r->answers)) {
				free(text);
				return err_set(e, ERR_NOMEM, "Out of memory");
			}
			r->answers[r->nanswers].text = text;
			r->answers[r->nanswers].len = tlen;
			r->nanswers++;
		}
	}
	return 0;
}

/* HTTP: the next answer: one received by http_send, else the next
 * message of the last request. */
static int http_recv(struct rpc_client *r, struct rpc_response *resp, struct err *e)
{
	if (r->next_answer < r->nanswers) {
		r->last = r->answers[r->next_answer].text;
		r->last_len = r->answers[r->next_answer].len;
		r->answers[r->next_answer++].text = NULL;
	} else if (httpc_next(r->http, &r->last, &r->last_len, e)) {
		return e->code;
	}
	if (!r->last)
		return err_set(e, ERR_DATA, "The session at %s sent no answer", r->path);
	return rpc_parse_response(r->last, r->last_len, resp, e);
}

static int recv_until(struct rpc_client *r, struct rpc_response *resp,
                      int64_t deadline, int after_send, struct err *e);

/* 1 when nothing listens at path within half a second: a dying process
 * closes its connections and its listener one by one. */
static int gone_soon(const char *path)
{
	for (int k = 0; k < 10; k++) {
		struct timespec ts = {0, 50 * 1000000L};
		if (address_gone(path))
			return 1;
		nanosleep(&ts, NULL);
	}
	return address_gone(path);
}

/*
 * The session closed (reset: reset) the connection before its answer came.
 * When it said why in an error frame (too many connections, another
 * user's session, a frame it could not take) that message is the error;
 * else what can be told from outside: nothing listens any more (it stopped
 * or crashed), or it closed or reset this connection.
 */
static int closed_early(struct rpc_client *r, int reset, struct err *e)
{
	struct rpc_response resp;
	struct err pe;

	err_clear(&pe);
	/* an answer it sent before closing is still readable */
	if (recv_until(r, &resp, now_ms() + 1000, 1, &pe) == 0 && resp.is_error)
		return err_set(e, ERR_DATA, "%s", resp.message);
	if (gone_soon(r->path))
		return err_set(e, ERR_DATA,
		               "The session at %s went away before answering: nothing listens "
		               "there any more (it stopped or crashed; its log may say why)",
		               r->path);
	return err_set(e, ERR_DATA,
	               "The session at %s %s the connection without answering "
	               "(it still accepts connections: try again, or see its log)",
	               r->path, reset ? "reset" : "closed");
}

int rpc_client_send_raw(struct rpc_client *r, const struct buf *b, struct err *e)
{
	size_t off = 0;
	int64_t deadline = now_ms() + r->timeout_ms;
	if (b->failed)
		return err_set(e, b->failed, "Cannot build the request");
	if (r->http)
		return http_send(r, b, e);
	while (off < b->len) {
		ssize_t n = send(r->fd, b->data + off, b->len - off, MSG_NOSIGNAL);
		if (n > 0) {
			off += (size_t)n;
			continue;
		}
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			int w = wait_fd(r->fd, POLLOUT, deadline);
			if (w == 0)
				return err_set(e, ERR_DATA, "Timed out sending to the session at %s", r->path);
			if (w > 0)
				continue;
		}
		if (errno == EPIPE || errno == ECONNRESET)
			return closed_early(r, errno == ECONNRESET, e);
		return err_sys(e, ERR_DATA, "Lost the connection to the session at %s", r->path);
	}
	return 0;
}

int64_t rpc_client_frame(struct rpc_client *r, struct buf *b,
                             const char *method, const char *params_json)
{
	int64_t id = r->next_id++;
	size_t off = frame_begin(b);
	rpc_request_write(b, id, method, params_json);
	frame_end(b, off, FRAME_REQUEST_MAX);
	return id;
}

int rpc_client_send(struct rpc_client *r, const char *method, const char *params_json,
                int64_t *id, struct err *e)
{
	struct buf b;
	int rc;
	buf_init(&b, FRAME_REQUEST_MAX + FRAME_HEADER);
	*id = rpc_client_frame(r, &b, method, params_json);
	if (b.failed)
		rc = err_set(e, ERR_USAGE, "The request is larger than the 8 MiB limit");
	else
		rc = rpc_client_send_raw(r, &b, e);
	buf_free(&b);
	return rc;
}

/* Reads the next response until deadline.  after_send: the probe of
 * closed_early (no further diagnosis; any failure is ERR_DATA). */
static int recv_until(struct rpc_client *r, struct rpc_response *resp,
                      int64_t deadline, int after_send, struct err *e)
{
	free(r->last);
	r->last = NULL;
	if (r->http)
		return http_recv(r, resp, e);
	for (;;) {
		if (r->in_pos < r->in_len) {
			const char *p = r->in + r->in_pos;
			size_t len = r->in_len - r->in_pos;
			int rc = frame_reader_feed(&r->fr, &p, &len, &r->last, &r->last_len, e);
			r->in_pos = r->in_len - len;
			if (rc == FRAME_DONE)
				return rpc_parse_response(r->last, r->last_len, resp, e);
			if (rc != FRAME_MORE)
				return err_prefix(e, "Bad response from the session at %s", r->path);
			continue;
		}
		ssize_t n = recv(r->fd, r->in, sizeof r->in, 0);
		if (n > 0) {
			r->in_pos = 0;
			r->in_len = (size_t)n;
			continue;
		}
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			return after_send ? err_set(e, ERR_DATA, "no answer")
			                  : closed_early(r, n < 0, e);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = wait_fd(r->fd, POLLIN, deadline);
			if (w == 0 && after_send)
				return err_set(e, ERR_DATA, "no answer");
			if (w == 0)
				return err_set(e, ERR_DATA,
				               "Timed out after %d s waiting for the session at %s "
				               "(the query may still be running there; "
				               "DSIGHT_REMOTE_TIMEOUT=SECONDS waits longer)",
				               r->timeout_ms / 1000, r->path);
			if (w > 0)
				continue;
		}
		return err_sys(e, ERR_DATA, "Lost the connection to the session at %s", r->path);
	}
}

int rpc_client_recv(struct rpc_client *r, struct rpc_response *resp, struct err *e)
{
	return recv_until(r, resp, now_ms() + r->timeout_ms, 0, e);
}

int64_t rpc_client_frame_hello(struct rpc_client *r, struct buf *b,
                               const char *client)
{
	struct buf p;
	int64_t id;
	buf_init(&p, 0);
	rpc_hello_params(&p, client);
	id = rpc_client_frame(r, b, RPC_HELLO, p.failed ? "{}" : p.data);
	buf_free(&p);
	return id;
}

int rpc_client_call(struct rpc_client *r, const char *method,
                    struct rpc_span *res, struct err *e)
{
	struct rpc_response resp;
	int64_t id;
	if (rpc_client_send(r, method, NULL, &id, e) || rpc_client_recv(r, &resp, e))
		return e->code ? e->code : ERR_DATA;
	if (resp.is_error)
		return err_set(e, ERR_DATA, "%s", resp.message);
	*res = resp.result;
	return 0;
}
