/*
 * qnotes: why a list is empty.  When a list's total is 0 the response
 * ends with "notes": one sentence per cause that holds, in a fixed order
 * (a worker, session or agent value that names nothing, a metrics name
 * that names no series, a profile id that does not exist, profiles
 * without CPU samples, a joined request without workers or without a
 * profile on its workers).  No key when no cause holds.  Also the notes
 * that hold whatever the total (a --phase join's roles) and those of an
 * unavailable lifecycle.
 */
#ifndef DSIGHT_QNOTES_H
#define DSIGHT_QNOTES_H

#include "query/qshared.h"

/* Appends `,"notes":[...]` to q->out when some cause holds: the causes
 * of an empty list when total is 0, and always the roles a --phase join
 * could not tell or did not find. */
void qnotes_emit(struct qctx *q, size_t total);

/* The lifecycle kind's answer for request r: its lifecycle object, and
 * when that is not available a last member "notes" saying why (no server
 * span joined to r, or none in the whole capture). */
int qnotes_lifecycle(struct qctx *q, const json_t *r);

#endif
