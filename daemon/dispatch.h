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

/* Creates a dispatcher (sess and lt borrowed).  *out owned by the caller
 * (dispatch_free, after the server it serves is stopped). */
int dispatch_new(uv_loop_t *loop, struct session *sess, struct lifetime *lt,
                 struct dispatch **out, struct err *e);
/* Makes d the handler of srv's requests (before the loop runs): a
 * connection's queue, its frames, the scheduling, the stop.  The server
 * calls d only through its struct server_handler, never by name. */
void dispatch_attach(struct dispatch *d, struct server *srv);
void dispatch_free(struct dispatch *d);
/*
 * Loop thread: makes sure the session answers from the report's current
 * generation before a request that reads it outside the RPC (the HTTP
 * viewer files).  Returns 1 when it already does; 0 when a reload is under
 * way: fn(ctx, rc, msg) is then called on the loop once it ended (rc != 0:
 * the new generation could not be opened, msg says why); -1 when out of
 * memory.
 */
int dispatch_fresh(struct dispatch *d, void (*fn)(void *ctx, int rc, const char *msg),
                   void *ctx);
/* A request of another kind (an HTTP file) begins or ends: it counts as
 * activity for the idle clock like a query. */
void dispatch_request_begin(struct dispatch *d);
void dispatch_request_end(struct dispatch *d);

#endif
