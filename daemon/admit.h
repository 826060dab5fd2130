/*
 * admit: who gets a connection slot of the server and when one is taken
 * back.  A new connection must come from the server's own uid (another
 * uid is told so in an error frame, then closed).  The table holds
 * admit_conn_limit() connections; when it is full the connection idle
 * longest is closed to make room (idle: no partial frame, nothing asked,
 * nothing owed), else the one whose partial frame started first (at
 * least 1 s ago), else the newcomer gets -32004 "Too many connections".
 * Every second a connection idle for 60 s is closed, and one whose frame
 * is not whole 10 s after its first byte gets an error frame and is
 * closed; partial frames of all connections hold at most 128 MiB (the
 * oldest are closed beyond it).  The state lives in server_impl.h.
 */
#ifndef DSIGHT_ADMIT_H
#define DSIGHT_ADMIT_H

#include <stdint.h>

struct server;
struct server_conn;

/* The most connections served at once: 1024, raising the soft descriptor
 * limit towards 1024 + 64 (up to the hard limit); below that the limit
 * minus 64 (half of it when smaller than 128). */
int admit_conn_limit(void);
/* A connection just accepted into the table (counted): 0 when it may be
 * served; -1 when it was refused (answered with an error frame and
 * closing, or closed). */
int admit_new(struct server *srv, struct server_conn *c);
/* After c's frame reader was fed: the bytes its partial frame holds and
 * when that frame started. */
void admit_account(struct server_conn *c);
/* Closes the oldest partial frames while they hold more than the budget
 * (any connection, c's included). */
void admit_over_budget(struct server *srv);
/* The idle and frame time limits of c at time now (ms of the loop). */
void admit_expire(struct server_conn *c, uint64_t now);
/* After a tick's admit_expire calls: one log line each for the idle
 * connections closed and the frames timed out. */
void admit_tick_done(struct server *srv);

#endif
