/*
 * dispatch: what the requests of the session protocol mean, one handler per
 * method (hello, query, status, shutdown), and the scheduling of queries.
 *
 * Queries run on libuv's work queue, at most DISPATCH_WORKERS at once, at
 * most DISPATCH_PER_CONN of one connection and at most one `sql` query (its
 * lane), taken from the connections' queues in round robin: one connection never monopolises the workers, and
 * a connection over its unsent-bytes cap runs nothing until its client
 * reads.  Before a query starts, a rebuilt report is reloaded off the loop;
 * queries wait for it and, when it cannot be opened, fail with the reason.
 * The queue of a closed connection is cancelled; on stop the queries
 * already accepted still run (new ones are refused with an error reply)
 * until the server fails the rest.
 */
#ifndef DSIGHT_DISPATCH_H
#define DSIGHT_DISPATCH_H

#include <stddef.h>
#include <uv.h>

#include "base/err.h"
#include "lifetime.h"
#include "server.h"
#include "session.h"

#define DISPATCH_WORKERS 4   /* queries running at once (libuv's pool size) */
#define DISPATCH_PER_CONN 2  /* of which one connection may hold */

struct dispatch;
struct dispatch_queue;

/* Creates the dispatcher of srv (info, sess and lt borrowed).  *out owned
 * by the caller (dispatch_free, once dispatch_busy is 0). */
int dispatch_new(uv_loop_t *loop, struct server *srv,
                 const struct server_info *info, struct session *sess,
                 struct lifetime *lt, struct dispatch **out, struct err *e);
void dispatch_free(struct dispatch *d);

/* The request queue of a new connection (NULL when out of memory); owned
 * by the connection, released with dispatch_queue_close. */
struct dispatch_queue *dispatch_queue_new(struct dispatch *d,
                                          struct server_conn *c);
/* The connection is gone: queries not started are cancelled (no reply),
 * running ones finish and their reply is dropped; q is freed. */
void dispatch_queue_close(struct dispatch_queue *q);
/* Handles one request frame of q's connection. */
void dispatch_frame(struct dispatch_queue *q, const char *msg, size_t len);
/* A connection can take more: start what may start. */
void dispatch_kick(struct dispatch *d);
/* The server stops: accepted queries still run, new ones get an error. */
void dispatch_stop(struct dispatch *d);
/* Fails every query not started with an error reply (a stop that took
 * too long). */
void dispatch_fail_waiting(struct dispatch *d);
/* Work in flight (queries and reloads). */
int dispatch_busy(const struct dispatch *d);

#endif
