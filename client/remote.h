/*
 * remote: the blocking RPC client of a warm session.
 *
 * Connects to a unix socket with a timeout (5 s), sends framed JSON-RPC
 * requests and reads framed responses, each read bounded by a timeout
 * (default 60 s; DSIGHT_REMOTE_TIMEOUT=SECONDS overrides it) so a wedged
 * server never hangs the client.  Responses are limited to 64 MiB, checked
 * before allocating.
 */
#ifndef DSIGHT_REMOTE_H
#define DSIGHT_REMOTE_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "frame.h"
#include "rpc.h"

struct remote {
	int fd;
	int timeout_ms;
	int64_t next_id;
	struct frame_reader fr;
	const char *path;
	char *last;        /* the last response frame (owned) */
	size_t last_len;
	char in[65536];    /* bytes received, not yet decoded */
	size_t in_pos, in_len;
};

/*
 * Connects to the socket at path.  On failure *not_live is 1 when nothing
 * listens there (no socket file, connection refused): the caller prints
 * the "No live session" message.  r is usable (remote_close) either way.
 */
int remote_connect(struct remote *r, const char *path, int *not_live,
                   struct err *e);
void remote_close(struct remote *r);

/* Sends one request (params_json raw JSON or NULL); returns its id in *id. */
int remote_send(struct remote *r, const char *method, const char *params_json,
                int64_t *id, struct err *e);
/* Sends several frames at once (requests already framed in b). */
int remote_send_raw(struct remote *r, const struct buf *b, struct err *e);
/* Reads the next response and picks it apart into *resp (its spans point
 * into r->last, valid until the next remote_recv). */
int remote_recv(struct remote *r, struct rpc_response *resp, struct err *e);

/* Appends one framed request to b with the next id of r. */
int64_t remote_frame_request(struct remote *r, struct buf *b,
                             const char *method, const char *params_json);

#endif
