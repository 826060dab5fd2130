/*
 * rpc_client: the blocking client of the session protocol, shared by
 * `dsight query --remote`, `dsight ctl` and the load driver.
 *
 * Connects through address_connect (5 s timeout; a full listen queue is
 * waited for), sends framed JSON-RPC requests and reads framed responses,
 * each read bounded by a timeout (default 60 s; DSIGHT_REMOTE_TIMEOUT=SECONDS
 * overrides it) so a wedged server never hangs the client.  Responses are
 * limited to 64 MiB, checked before allocating.
 */
#ifndef DSIGHT_RPC_CLIENT_H
#define DSIGHT_RPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "address.h"
#include "base/buf.h"
#include "base/err.h"
#include "frame.h"
#include "httpc.h"
#include "rpc.h"

#define RPC_CLIENT_CONNECT_MS 5000

struct rpc_client {
	int fd;
	int timeout_ms;
	int64_t next_id;
	struct frame_reader fr;
	char path[ADDRESS_PATH_MAX];
	char *last;        /* the last response frame (owned) */
	size_t last_len;
	size_t in_pos, in_len;
	/* an HTTP address (httpc.h): each request is one POST /rpc, whose
	 * answers wait here until received */
	struct httpc *http;
	struct rpc_client_answer {
		char *text;
		size_t len;
	} *answers;
	size_t nanswers, next_answer, cap_answers;
	/* last: client_init zeroes every member before it, not these 64 KiB */
	char in[65536];    /* bytes received, not yet decoded */
};

/*
 * Connects to the socket at path.  On failure *not_live is 1 when nothing
 * listens there (no socket file, connection refused).  r is usable
 * (rpc_client_close) either way.
 */
int rpc_client_connect(struct rpc_client *r, const char *path, int *not_live,
                       struct err *e);
/*
 * Resolves addr (a name, a socket path, or an HTTP address: HOST:PORT,
 * http://HOST:PORT[/][?token=T], see httpc.h) and connects.  When nothing
 * listens, *not_live = 1 and e holds the "No live session at ..." message
 * (ERR_DATA); a bad address is ERR_USAGE.  r is usable either way.
 */
int rpc_client_open(struct rpc_client *r, const char *addr, int *not_live,
                    struct err *e);
void rpc_client_close(struct rpc_client *r);

/* Sends one request (params_json raw JSON or NULL); returns its id in *id. */
int rpc_client_send(struct rpc_client *r, const char *method,
                    const char *params_json, int64_t *id, struct err *e);
/* Sends several frames at once (requests already framed in b). */
int rpc_client_send_raw(struct rpc_client *r, const struct buf *b,
                        struct err *e);
/* Reads the next response and picks it apart into *resp (its spans point
 * into r->last, valid until the next rpc_client_recv). */
int rpc_client_recv(struct rpc_client *r, struct rpc_response *resp,
                    struct err *e);
/* Sends method (no params) and reads its answer: the raw result text in
 * *res (valid until the next receive); an error reply is ERR_DATA with the
 * server's message. */
int rpc_client_call(struct rpc_client *r, const char *method,
                    struct rpc_span *res, struct err *e);

/* Appends one framed request to b with the next id of r. */
int64_t rpc_client_frame(struct rpc_client *r, struct buf *b,
                         const char *method, const char *params_json);
/* Appends a framed hello (protocol RPC_PROTOCOL, client name). */
int64_t rpc_client_frame_hello(struct rpc_client *r, struct buf *b,
                               const char *client);

#endif
