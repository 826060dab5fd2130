/*
 * qtgpu: `timeline --of gpu` (doc/query-semantics.md "timeline"): one
 * series per selected profile and CUDA device, with per bucket `kernels`
 * (kernels overlapping it) and `busy` (the correctly rounded length of the
 * union of the device's kernel intervals inside it).
 */
#ifndef DSIGHT_QTGPU_H
#define DSIGHT_QTGPU_H

#include <stddef.h>

#include "query/qbucket.h"
#include "query/qshared.h"

/* Writes the series list (head included); *total the number of series. */
int qtgpu_series(struct qctx *q, const struct qbucket *bk, size_t *total);

#endif
