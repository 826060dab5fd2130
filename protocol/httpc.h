/*
 * httpc: the client side of the HTTP transport of sessions: address
 * parsing (HOST:PORT, http://HOST:PORT[/][?token=T]), finding the token
 * (the address, then DSIGHT_TOKEN, then the same user's <socket>.http
 * files of the session directory whose URL names the same listener), and
 * POST /rpc through libcurl.
 *
 * libcurl is loaded at the first use (dlopen of libcurl.so.4), never at
 * start-up: the unix-socket one-shot does not pay the dynamic loader's
 * cost for it.  A missing libcurl is a clear error naming the package.
 */
#ifndef DSIGHT_HTTPC_H
#define DSIGHT_HTTPC_H

#include <stddef.h>

#include "base/err.h"

#define HTTPC_URL_MAX 320
#define HTTPC_TOKEN_MAX 128

struct httpc_addr {
	char host[260];   /* as in a URL: [::1] keeps its brackets */
	int port;
	char url[HTTPC_URL_MAX];      /* http://HOST:PORT/ */
	char token[HTTPC_TOKEN_MAX + 1]; /* from ?token=, else empty */
};

/* 1 when addr names a TCP listener (contains "://" or ends in ":<digits>"). */
int httpc_is_addr(const char *addr);
/* Parses addr.  ERR_USAGE naming what is wrong (another scheme than http,
 * no port, a path other than /, an unknown query parameter). */
int httpc_parse(const char *addr, struct httpc_addr *a, struct err *e);
/* The token for a: its own, else DSIGHT_TOKEN, else the token file of a
 * same-user session whose URL names the same port and host (127.0.0.1,
 * localhost and [::1] count as one).  Copied into out (HTTPC_TOKEN_MAX + 1
 * bytes); 0 when found, -1 when none. */
int httpc_find_token(const struct httpc_addr *a, char *out);

struct httpc;

/*
 * Parses addr, finds its token and checks that something listens there
 * (within timeout_ms).  When nothing does, *not_live = 1 and e says
 * "No live session at http://HOST:PORT/. Start one with: dsightd serve
 * REPORT --http PORT" (ERR_DATA).  *out owned by the caller (httpc_close),
 * set only on success.
 */
int httpc_open(const char *addr, int timeout_ms, struct httpc **out, int *not_live,
               struct err *e);
void httpc_close(struct httpc *h);
/* The listener's URL (http://HOST:PORT/). */
const char *httpc_url(const struct httpc *h);
/*
 * POSTs one JSON-RPC request to /rpc and returns the response body in
 * *out (malloc'd, NUL-terminated, *out_len bytes; NULL when the request
 * was a notification; a streamed answer's messages joined by newlines).
 * A refused token, Host or Origin, a non-200 answer, a timeout (no byte
 * for timeout_ms) or a lost connection are ERR_DATA with the message the
 * CLI prints.
 */
int httpc_post(struct httpc *h, const char *body, size_t len, int timeout_ms,
               char **out, size_t *out_len, struct err *e);
/*
 * Starts POSTing one JSON-RPC request (body copied) whose answer is read
 * as it comes with httpc_next: a streamed sql answer (the request asks
 * for stream_rows) arrives as NDJSON, one message a line; any other
 * answer is one body.  Abandons a POST still in progress.
 */
int httpc_stream(struct httpc *h, const char *body, size_t len, int timeout_ms,
                 struct err *e);
/*
 * The next message of the POST started by httpc_stream: *out (malloc'd,
 * NUL-terminated, *out_len bytes, owned by the caller), or NULL once the
 * answer is over (or was none: a notification).  Holds one message and
 * what one read brought, not the answer.  Errors as httpc_post's, and a
 * streamed answer cut in the middle of a line.
 */
int httpc_next(struct httpc *h, char **out, size_t *out_len, struct err *e);
/* Abandons the POST in progress, if any (its connection is closed). */
void httpc_abort(struct httpc *h);
/* 1 when nothing listens at h's address any more (connection refused). */
int httpc_gone(const struct httpc *h);

#endif
