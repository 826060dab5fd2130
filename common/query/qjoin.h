/*
 * qjoin: joining a request to what ran beside it.  With request_id on a
 * kind that takes phase (nsys, metrics, iterations, cpu, timeline), the
 * window becomes the request's prefill [start, first], decode [first,
 * end] or whole [start, end] (clamped to [0, duration]) and the worker
 * filter its workers; the response carries a "request" object.
 */
#ifndef DSIGHT_QJOIN_H
#define DSIGHT_QJOIN_H

#include "query/qshared.h"

/* Whether kind joins a request (it takes the phase parameter). */
int qjoin_applies(const char *kind);

/*
 * Resolves q->p->request_id / phase into q->join and sets q->start,
 * q->end and q->workers.  ERR_USAGE "Unknown client request: <id>" and
 * the three phase errors.  q->join.workers is malloc'd: qjoin_free.
 */
int qjoin_resolve(struct qctx *q);
void qjoin_free(struct qjoin *j);

/* `,"request":{"id","phase","window":[a,b],"workers":[...]}` when joined. */
void qjoin_emit(struct qctx *q);

#endif
