/*
 * sink_tee: one row_sink that forwards every row to several sinks in
 * order (the SQLite store, the shard writer, ...), stopping at the first
 * error.  Progress goes to every sink that has a progress callback.
 */
#ifndef DSIGHT_SINK_TEE_H
#define DSIGHT_SINK_TEE_H

#include <stddef.h>

#include "base/row.h"

#define SINK_TEE_MAX 8

struct sink_tee {
	struct row_sink sinks[SINK_TEE_MAX];
	size_t n;
};

/* Empties the tee. */
void sink_tee_init(struct sink_tee *t);

/* Adds a copy of sink; returns 0, or -1 when the tee is full. */
int sink_tee_add(struct sink_tee *t, const struct row_sink *sink);

/* Fills out with callbacks forwarding to t (which must outlive out). */
void sink_tee_sink(struct sink_tee *t, struct row_sink *out);

#endif
