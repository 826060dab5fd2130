/*
 * qsqlfn: the sql kind's bounded replacements for the SQLite functions
 * whose one call can run far longer than its inputs' size: instr and
 * replace (a naive search, O(n * m) in SQLite) become linear searches, and
 * like, glob, trim, ltrim and rtrim (O(n * m) by design) check the
 * statement's clock as they go.  A progress handler only runs between
 * virtual-machine steps, and one call is one step: without these, one
 * `instr` over two long strings outlives any time limit.
 *
 * Each replacement answers exactly what SQLite's own function answers
 * (the same UTF-8 reading, NUL handling, case rules, ESCAPE and error
 * messages); only the time it may take changes.
 *
 * It also owns the statement's clock (a deadline plus an optional stop
 * flag), which the connection's progress handler reads as well.
 */
#ifndef DSIGHT_QSQLFN_H
#define DSIGHT_QSQLFN_H

#include <sqlite3.h>
#include <time.h>

#include "base/cancel.h"

struct qsqlfn_clock {
	struct timespec deadline;              /* CLOCK_MONOTONIC */
	const cancel_flag *stop;     /* borrowed; NULL: none */
	/* a second flag (borrowed; NULL: none): the one asker went away */
	const cancel_flag *cancel;
	struct timespec paused;  /* when the clock was paused (tv_sec < 0: running) */
	/* 1 once the deadline passed, 2 once stop was set, 3 once cancel was */
	int expired;
	unsigned ticks;
};

/* Sets c's deadline timeout_s seconds from now (timeout_s > 0, finite)
 * and its stop flag (borrowed, may be NULL); no cancel flag, running. */
void qsqlfn_clock_start(struct qsqlfn_clock *c, double timeout_s,
                        const cancel_flag *stop);

/* Stops c's clock (the statement waits for its reader: that time does
 * not count) and starts it again, the deadline moved by the pause. */
void qsqlfn_clock_pause(struct qsqlfn_clock *c);
void qsqlfn_clock_resume(struct qsqlfn_clock *c);

/* 1 when the deadline has passed or the stop flag is set (remembered in
 * c->expired); cheap enough to call every few thousand operations. */
int qsqlfn_clock_expired(struct qsqlfn_clock *c);

/* Installs the replacements on db; c is borrowed and must outlive every
 * statement run on db.  Returns an SQLite result code. */
int qsqlfn_register(sqlite3 *db, struct qsqlfn_clock *c);

#endif
