/* remote: blocking RPC client with timeouts (see remote.h). */
#include "remote.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 5000
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

int remote_connect(struct remote *r, const char *path, int *not_live,
                   struct err *e)
{
	struct sockaddr_un sa;
	int fd;

	memset(r, 0, sizeof *r);
	r->fd = -1;
	r->path = path;
	r->timeout_ms = timeout_from_env();
	r->next_id = 1;
	frame_reader_init(&r->fr, FRAME_RESPONSE_MAX);
	*not_live = 0;
	if (strlen(path) >= sizeof sa.sun_path)
		return err_set(e, ERR_USAGE, "Socket path too long: %s", path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return err_sys(e, ERR_DATA, "Cannot create a socket");
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
		if (errno == EAGAIN || errno == EINPROGRESS) {
			int soerr = 0;
			socklen_t len = sizeof soerr;
			int w = wait_fd(fd, POLLOUT, now_ms() + CONNECT_TIMEOUT_MS);
			if (w <= 0) {
				close(fd);
				return err_set(e, ERR_DATA, "Timed out connecting to the session at %s", path);
			}
			getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len);
			errno = soerr;
			if (soerr == 0)
				goto connected;
		}
		if (errno == ENOENT || errno == ECONNREFUSED || errno == ENOTDIR)
			*not_live = 1;
		err_sys(e, ERR_DATA, "Cannot connect to %s", path);
		close(fd);
		return ERR_DATA;
	}
connected:
	r->fd = fd;
	return 0;
}

void remote_close(struct remote *r)
{
	if (r->fd >= 0)
		close(r->fd);
	r->fd = -1;
	frame_reader_free(&r->fr);
	free(r->last);
	r->last = NULL;
}

int remote_send_raw(struct remote *r, const struct buf *b, struct err *e)
{
	size_t off = 0;
	int64_t deadline = now_ms() + r->timeout_ms;
	if (b->failed)
		return err_set(e, b->failed, "Cannot build the request");
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
			return err_set(e, ERR_DATA,
			               "The session at %s closed the connection without answering "
			               "(a session serves only the user who started it)", r->path);
		return err_sys(e, ERR_DATA, "Lost the connection to the session at %s", r->path);
	}
	return 0;
}

int64_t remote_frame_request(struct remote *r, struct buf *b,
                             const char *method, const char *params_json)
{
	int64_t id = r->next_id++;
	size_t off = frame_begin(b);
	rpc_request_write(b, id, method, params_json);
	frame_end(b, off, FRAME_REQUEST_MAX);
	return id;
}

int remote_send(struct remote *r, const char *method, const char *params_json,
                int64_t *id, struct err *e)
{
	struct buf b;
	int rc;
	buf_init(&b, FRAME_REQUEST_MAX + FRAME_HEADER);
	*id = remote_frame_request(r, &b, method, params_json);
	if (b.failed)
		rc = err_set(e, ERR_USAGE, "The request is larger than the 1 MiB limit");
	else
		rc = remote_send_raw(r, &b, e);
	buf_free(&b);
	return rc;
}

int remote_recv(struct remote *r, struct rpc_response *resp, struct err *e)
{
	int64_t deadline = now_ms() + r->timeout_ms;

	free(r->last);
	r->last = NULL;
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
			return err_set(e, ERR_DATA,
			               "The session at %s closed the connection without answering "
			               "(a session serves only the user who started it)", r->path);
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			int w = wait_fd(r->fd, POLLIN, deadline);
			if (w == 0)
				return err_set(e, ERR_DATA,
				               "Timed out after %d s waiting for the session at %s",
				               r->timeout_ms / 1000, r->path);
			if (w > 0)
				continue;
		}
		return err_sys(e, ERR_DATA, "Lost the connection to the session at %s", r->path);
	}
}
