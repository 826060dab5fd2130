/*
 * sink_tee: one row_sink that forwards every row to several sinks in
 * order (the SQLite store, the shard writer, ...), stopping at the first
 * error.  Progress goes to every sink that has a progress callback.  A
 * point goes out with its JSON text (row_point.text), printed here once
 * when more than one sink takes points: the store's payload and the
 * shard's row are that text, and printing it was the largest part of
 * both sinks' work on the metric points.
 */
#ifndef DSIGHT_SINK_TEE_H
#define DSIGHT_SINK_TEE_H

#include <stddef.h>

#include "base/buf.h"
#include "base/row.h"

#define SINK_TEE_MAX 8

struct sink_tee {
	struct row_sink sinks[SINK_TEE_MAX];
	size_t n;
	size_t npoint; /* sinks with a point callback */
	struct buf text; /* a point's text */
};

/* Empties the tee; release with sink_tee_free. */
void sink_tee_init(struct sink_tee *t);

/* Frees t's buffer (the sinks are the caller's). */
void sink_tee_free(struct sink_tee *t);

/* Adds a copy of sink; returns 0, or -1 when the tee is full. */
int sink_tee_add(struct sink_tee *t, const struct row_sink *sink);

/* Fills out with callbacks forwarding to t (which must outlive out). */
void sink_tee_sink(struct sink_tee *t, struct row_sink *out);

#endif
