/*
 * qsqlauth: what a statement of the sql kind may do.  Owns the authorizer
 * of the kind's connections (reads; the core scalar, aggregate, window,
 * math, date/time and JSON functions; the pragmas that describe the
 * schema, and json_each, json_tree and their pragma_ functions; every
 * write and every other function refused) and the refusal it explains.
 */
#ifndef DSIGHT_QSQLAUTH_H
#define DSIGHT_QSQLAUTH_H

#include <sqlite3.h>
#include <stddef.h>

#include "base/err.h"

/* One connection's authorizer state: set sql before preparing a statement
 * (borrowed, for the messages) and denied to "" (the reason of the
 * authorizer's last refusal is written there). */
struct qsqlauth {
	const char *sql;
	char denied[ERR_MSG_MAX];
};

/* The authorizer (sqlite3_set_authorizer; ctx a struct qsqlauth *). */
int qsqlauth_check(void *ctx, int action, const char *a1, const char *a2,
                   const char *db, const char *via);

/* Table-valued functions initialise themselves on first use by touching
 * the schema, which the authorizer refuses: uses the allowed ones once on
 * db, before the authorizer is installed.  ERR_NOMEM or ERR_DATA. */
int qsqlauth_ready(sqlite3 *db, struct err *e);

/* Length of the leading whitespace and SQL comments of s. */
size_t qsqlauth_skip_blank(const char *s);

#endif
