/*
 * store_durations: the v1 `durations` table (doc/report-files.md): the
 * maximum event duration per (profile, bucket), accumulated by the writer
 * thread as events are inserted and written once at the end of the load.
 * Used by store_write only.
 */
#ifndef DSIGHT_STORE_DURATIONS_H
#define DSIGHT_STORE_DURATIONS_H

#include <stddef.h>
#include <stdint.h>

#include <sqlite3.h>

#include "base/err.h"
#include "base/row.h"

#define STORE_NBUCKETS (ROW_BUCKET_MAX - ROW_BUCKET_MIN + 1)

struct store_prof_dur;

/* The maxima so far; zero-initialized is empty. */
struct store_durations {
	struct store_prof_dur **dur; /* owned; by profile, NULL when none yet */
	size_t ndur;
};

/* Notes an event of duration d in profile's bucket (ROW_BUCKET_MIN..MAX).
 * Returns 0, or ERR_DATA (negative profile) / ERR_NOMEM with e filled. */
int store_durations_note(struct store_durations *w, int64_t profile, double d,
                         int bucket, struct err *e);

/* Inserts one durations row per (profile, bucket) seen into db (borrowed).
 * Returns 0, or -1 on a SQLite error (the caller reads db's message). */
int store_durations_write(const struct store_durations *w, sqlite3 *db);

/* Frees the maxima; w is empty afterwards. */
void store_durations_free(struct store_durations *w);

#endif
