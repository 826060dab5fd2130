/*
 * qnotes: why a list is empty.  When a list's total is 0 the response
 * ends with "notes": one sentence per cause that holds, in a fixed order
 * (a worker, session or agent value that names nothing, a metrics name
 * that names no series, a profile id that does not exist, profiles
 * without CPU samples, a joined request without workers or without a
 * profile on its workers).  No key when no cause holds.
 */
#ifndef DSIGHT_QNOTES_H
#define DSIGHT_QNOTES_H

#include "query/qshared.h"

/* Appends `,"notes":[...]` to q->out when some cause holds: the causes
 * of an empty list when total is 0, and always the roles a --phase join
 * could not tell or did not find. */
void qnotes_emit(struct qctx *q, size_t total);

#endif
