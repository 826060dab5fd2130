/*
 * qkinds: the entry points of the query kinds (query_*.c), called by the
 * dispatcher (query.c) through its table of kinds.  Private to the engine.
 */
#ifndef DSIGHT_QKINDS_H
#define DSIGHT_QKINDS_H

#include "query/qlist.h"
#include "query/qshared.h"

/* The kinds (each returns 0 or an ERR_* code with q->e filled). */
int query_summary(struct qctx *q);
int query_request(struct qctx *q, int lifecycle_only);
int query_requests(struct qctx *q);
int query_server_spans(struct qctx *q);
int query_sources(struct qctx *q);
int query_sessions(struct qctx *q);
int query_workers(struct qctx *q);
int query_families(struct qctx *q);
int query_iterations(struct qctx *q);
int query_profiles(struct qctx *q);
int query_nsys(struct qctx *q);
int query_gpu(struct qctx *q);
int query_cpu(struct qctx *q);
int query_metrics(struct qctx *q);
int query_timeline(struct qctx *q);
/* --group-by on nsys and requests (query_group.c; the dispatcher picks
 * them, query_requests and query_nsys do not group) */
int query_nsys_grouped(struct qctx *q);
int query_requests_grouped(struct qctx *q);
int query_sql(struct qctx *q);

#endif
