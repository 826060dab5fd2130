/* admit: who gets a connection slot, and when one is taken back (see
 * admit.h). */
#include "admit.h"
#include "rpc.h"
#include "server_impl.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_CONNS 1024                  /* connections served at once */
#define FD_SPARE 64                     /* descriptors kept for everything else */
#define IDLE_CONN_MS 60000              /* default: nothing asked or owed for this long: closed */
#define FRAME_MS 10000                  /* default: a started frame must be whole within this */
#define PARTIAL_BYTES ((size_t)128 << 20) /* partial frames of all connections, at most */

/* 1 when c has nothing asked and nothing owed: no partial frame, no
 * request decoded or waiting unread, no reply pending or being written. */
static int conn_idle(const struct server_conn *c)
{
	return !c->closing && !c->shutting && c->npending == 0 &&
	       c->writes == 0 && frame_reader_idle(&c->fr) && c->rpos >= c->rlen;
}

/* Keeps c->held and srv->partial equal to what c's partial frame holds,
 * and its frame clock: started with the first byte of a frame. */
void admit_account(struct server_conn *c)
{
	struct server *srv = c->srv;
	size_t now_held = frame_reader_idle(&c->fr) ? 0 : c->fr.body.cap;
	srv->partial += now_held - c->held;
	c->held = now_held;
	if (frame_reader_idle(&c->fr))
		c->partial_ms = 0;
	else if (!c->partial_ms)
		c->partial_ms = uv_now(srv->loop);
}

/* One log line a second at most for the connections closed for room. */
static void log_evicted(struct server *srv, const char *what)
{
	uint64_t now = uv_now(srv->loop);
	srv->evicted++;
	if (now - srv->evicted_ms < 1000)
		return;
	srv->act->log(srv, "closed %d connection(s) to make room: %s", srv->evicted, what);
	srv->evicted = 0;
	srv->evicted_ms = now;
}

/* The oldest connection by key (idle ones, or those holding a partial
 * frame for at least 1 s), other than skip; NULL when none. */
static struct server_conn *oldest(struct server *srv, int partial,
                                  const struct server_conn *skip)
{
	struct server_conn *best = NULL;
	uint64_t now = uv_now(srv->loop);
	for (struct server_conn *c = srv->conns; c; c = c->next) {
		if (c == skip || c->closing || c->shutting)
			continue;
		if (partial ? !c->partial_ms || now - c->partial_ms < 1000 || c->npending
		            : !c->q || !conn_idle(c))
			continue;
		if (!best || (partial ? c->partial_ms < best->partial_ms
		                      : c->active_ms < best->active_ms))
			best = c;
	}
	return best;
}

/* Partial frames hold more than PARTIAL_BYTES: the connections whose frame
 * started first are closed until they hold less. */
static void evict_partial(struct server *srv)
{
	while (srv->partial > PARTIAL_BYTES) {
		struct server_conn *v = NULL;
		for (struct server_conn *c = srv->conns; c; c = c->next)
			if (!c->closing && c->held && (!v || c->partial_ms < v->partial_ms))
				v = c;
		if (!v)
			return;
		log_evicted(srv, "partial frames held too much memory");
		srv->act->close(v);
	}
}

/* Answers c with one error frame, then closes it (reading nothing). */
static void refuse(struct server_conn *c, int code, const char *msg)
{
	c->srv->act->refuse(c, code, msg);
}

/* The idle and frame time limits of srv (ms): its own (dsightd
 * --conn-idle-timeout, --frame-timeout), else the defaults. */
static uint64_t idle_limit(const struct server *srv)
{
	return srv->conn_idle_ms > 0 ? (uint64_t)srv->conn_idle_ms : IDLE_CONN_MS;
}

static uint64_t frame_limit(const struct server *srv)
{
	return srv->frame_ms > 0 ? (uint64_t)srv->frame_ms : FRAME_MS;
}

/* Every second: closes connections idle for idle_limit and those whose
 * started frame is not whole after frame_limit (with an error frame). */
void admit_expire(struct server_conn *c, uint64_t now)
{
	struct server *srv = c->srv;
	char msg[160];
	if (c->closing || c->shutting || c->no_more)
		return;
	if (conn_idle(c) && now - c->active_ms >= idle_limit(srv)) {
		srv->idle_closed++;
		c->srv->act->close(c);
		return;
	}
	if (c->partial_ms && c->reading && now - c->partial_ms >= frame_limit(srv)) {
		snprintf(msg, sizeof msg,
		         "Timed out waiting for the rest of a frame (%zu of %zu bytes after %g s)",
		         c->fr.body.len, c->fr.need, (double)frame_limit(srv) / 1000);
		srv->frame_timeouts++;
		refuse(c, RPC_INVALID_REQUEST, msg);
	}
}

/* The peer's uid in *cred; -1 (why filled) when it cannot be read. */
static int peer_uid(struct server_conn *c, struct ucred *cred, char *why, size_t n)
{
	socklen_t clen = sizeof *cred;
	uv_os_fd_t fd;
	int rc;

	memset(cred, 0, sizeof *cred);
	if ((rc = uv_fileno((uv_handle_t *)&c->pipe, &fd)) != 0) {
		snprintf(why, n, "%s", uv_strerror(rc));
		return -1;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, cred, &clen) != 0) {
		snprintf(why, n, "%s", strerror(errno));
		return -1;
	}
	return 0;
}
/* the rest of accept_one (server.c): credentials, then room */
int admit_new(struct server *srv, struct server_conn *c)
{
	struct ucred cred;
	char why[160];

	if (peer_uid(c, &cred, why, sizeof why) != 0) {
		srv->act->log(srv, "refused a connection: cannot read its credentials: %s", why);
		c->srv->act->close(c);
		return -1;
	}
	if (cred.uid != geteuid()) {
		srv->act->log(srv, "refused a connection from uid %d (pid %d): this session serves uid %d only",
		           (int)cred.uid, (int)cred.pid, (int)geteuid());
		snprintf(why, sizeof why,
		         "This session serves only the user who started it (uid %d); you are uid %d",
		         (int)geteuid(), (int)cred.uid);
		refuse(c, RPC_INVALID_REQUEST, why);
		return -1;
	}
	if (srv->nconns <= srv->max_conns)
		return 0;
	struct server_conn *v = oldest(srv, 0, c);
	if (!v)
		v = oldest(srv, 1, c);
	if (v) {
		log_evicted(srv, v->held ? "the table was full; oldest partial frame"
		                         : "the table was full; oldest idle connection");
		srv->act->close(v);
		return 0;
	}
	uint64_t now = uv_now(srv->loop);
	if (now - srv->refused_ms >= 1000) {
		srv->act->log(srv, "refusing connections: %d are open and busy, the limit", srv->max_conns);
		srv->refused_ms = now;
	}
	snprintf(why, sizeof why,
	         "Too many connections: the session serves %d at once and none is idle; try again shortly",
	         srv->max_conns);
	refuse(c, RPC_BUSY, why);
	return -1;
}

void admit_tick_done(struct server *srv)
{
	if (srv->idle_closed) {
		srv->act->log(srv, "closed %d idle connection(s) (%g s without a request)",
		           srv->idle_closed, (double)idle_limit(srv) / 1000);
		srv->idle_closed = 0;
	}
	if (srv->frame_timeouts) {
		srv->act->log(srv, "closing %d connection(s) whose frame was not whole after %g s",
		           srv->frame_timeouts, (double)frame_limit(srv) / 1000);
		srv->frame_timeouts = 0;
	}
}

void admit_over_budget(struct server *srv)
{
	if (srv->partial > PARTIAL_BYTES)
		evict_partial(srv);
}

/* MAX_CONNS, raising the soft descriptor limit towards it (up to the hard
 * one); fewer when the descriptors cannot reach it. */
int admit_conn_limit(void)
{
	struct rlimit rl;
	rlim_t want = MAX_CONNS + FD_SPARE;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return MAX_CONNS;
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want) {
		rl.rlim_cur = rl.rlim_max == RLIM_INFINITY || rl.rlim_max > want ? want : rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
		getrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < want)
		return rl.rlim_cur > 2 * FD_SPARE ? (int)(rl.rlim_cur - FD_SPARE)
		                                  : (int)(rl.rlim_cur / 2);
	return MAX_CONNS;
}

