/*
 * evstats: the counts gathered while evidence is read (rows per profile and
 * per series, totals, input size), filled by the evidence parser and the
 * Nsight importer and handed to the build (progress, summary line,
 * capabilities).
 */
#ifndef DSIGHT_EVSTATS_H
#define DSIGHT_EVSTATS_H

#include <stddef.h>
#include <stdint.h>

struct evstats {
	uint64_t events, samples, points;
	size_t nseries;
	uint64_t *series_points;   /* per series; owned, see evstats_free */
	size_t nprofiles;
	uint64_t *profile_events;  /* per profile */
	uint64_t *profile_samples; /* per profile */
	uint64_t input_bytes;      /* size of the file read */
	size_t series_cap, profiles_cap; /* allocated lengths of the arrays */
};

/* Makes profile id (>= 0) counted: the per-profile arrays cover it (new
 * entries 0) and nprofiles > id.  Returns 0, or -1 when out of memory. */
int evstats_note_profile(struct evstats *s, int64_t id);

/* The same for series id and series_points / nseries. */
int evstats_note_series(struct evstats *s, int64_t id);

/* Frees the arrays and zeroes *s (s may be NULL). */
void evstats_free(struct evstats *s);

#endif
