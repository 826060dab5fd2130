/*
 * http: the HTTP/1.1 transport of dsightd (--http), beside the unix socket.
 *
 * libmicrohttpd parses HTTP; it runs in its external-polling epoll mode
 * driven by the daemon's libuv loop (a uv_poll on its epoll descriptor, a
 * timer for its timeouts), so every request is handled on the loop thread
 * and no engine state is touched from two threads.  Endpoints: POST /rpc
 * (one JSON-RPC request, answered through the unix transport by
 * http_bridge: same dispatch, same bytes; an sql query with stream_rows
 * from a client that accepts application/x-ndjson gets its batches as a
 * chunked NDJSON body, pulled from the bridge as the client takes them,
 * the connection suspended while no batch is ready), GET / (the
 * report's viewer of the current generation, with a live marker),
 * GET /detail/<name>, /parts.json, /part-NNN.html (files of the current
 * generation's manifest).  Every request must pass http_auth's Host,
 * Origin and token rules.  Limits: 256 connections served (the next ones
 * are answered 503 and closed), 10 s for the first request's headers
 * (counted from the connection), 60 s idle, about 64 KiB of headers,
 * 1 MiB bodies.
 * HTTP requests count as activity for the idle clock.  The stop: the
 * listener closes with the unix one (server_on_stop); once the server
 * drained, http_finish lets the last responses go (at most 5 s), stops
 * libmicrohttpd and closes its handles.
 */
#ifndef DSIGHT_HTTP_H
#define DSIGHT_HTTP_H

#include <uv.h>

#include "base/err.h"
#include "dispatch.h"
#include "server.h"
#include "session.h"

struct http;

/*
 * Binds the listener (spec [HOST:]PORT, see http_auth_listen) and makes
 * the token: before the unix socket is bound, so a port in use leaves
 * nothing behind.  *out owned by the caller (http_free).
 */
int http_prepare(const char *spec, int allow_remote, struct http **out,
                 struct err *e);
/* The listener's URL (http://HOST:PORT/). */
const char *http_url(const struct http *h);
/* 1 when the listener is not on a loopback address. */
int http_remote(const struct http *h);
/* Writes the token file (see http_auth_write_file). */
int http_write_token(const struct http *h, const char *path, struct err *e);
/*
 * Starts serving on loop (the server, its dispatcher and the session
 * borrowed for h's lifetime; log as in server_info).  Registers the
 * server's stop hook.
 */
int http_start(struct http *h, uv_loop_t *loop, struct server *srv,
               struct dispatch *disp, struct session *sess,
               void (*log)(void *ctx, const char *msg), void *log_ctx,
               struct err *e);
/* After the server stopped: lets the last responses go, stops, then
 * calls done(ctx) on the loop. */
void http_finish(struct http *h, void (*done)(void *ctx), void *ctx);
void http_free(struct http *h);

#endif
