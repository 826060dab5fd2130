/* store_durations: the durations table's maxima (see store_durations.h). */
#include "store/store_durations.h"

#include <stdlib.h>

#include "base/err.h"
#include "base/vec.h"

/* Per-profile maximum duration by bucket. */
struct store_prof_dur {
	double max[STORE_NBUCKETS];
	unsigned char seen[STORE_NBUCKETS];
};

int store_durations_note(struct store_durations *w, int64_t profile, double d,
                         int bucket, struct err *e)
{
	if (profile < 0)
		return err_set(e, ERR_DATA, "negative profile index %lld",
		               (long long)profile);
	if ((uint64_t)profile >= SIZE_MAX / sizeof *w->dur ||
	    vec_reserve_zero(&w->dur, &w->ndur, (size_t)profile + 1,
	                     sizeof *w->dur))
		return err_set(e, ERR_NOMEM, "out of memory");
	struct store_prof_dur *pd = w->dur[profile];
	if (!pd) {
		pd = calloc(1, sizeof *pd);
		if (!pd)
			return err_set(e, ERR_NOMEM, "out of memory");
		w->dur[profile] = pd;
	}
	int k = bucket - ROW_BUCKET_MIN;
	if (!pd->seen[k] || d > pd->max[k]) {
		pd->max[k] = d;
		pd->seen[k] = 1;
	}
	return 0;
}

int store_durations_write(const struct store_durations *w, sqlite3 *db)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, "INSERT INTO durations VALUES (?1,?2,?3)",
	                       -1, &st, NULL) != SQLITE_OK)
		return -1;
	for (size_t p = 0; p < w->ndur; p++) {
		if (!w->dur[p])
			continue;
		for (int k = 0; k < STORE_NBUCKETS; k++) {
			if (!w->dur[p]->seen[k])
				continue;
			sqlite3_bind_int64(st, 1, (int64_t)p);
			sqlite3_bind_int(st, 2, k + ROW_BUCKET_MIN);
			sqlite3_bind_double(st, 3, w->dur[p]->max[k]);
			int rc = sqlite3_step(st);
			sqlite3_reset(st);
			if (rc != SQLITE_DONE) {
				sqlite3_finalize(st);
				return -1;
			}
		}
	}
	sqlite3_finalize(st);
	return 0;
}

void store_durations_free(struct store_durations *w)
{
	for (size_t p = 0; p < w->ndur; p++)
		free(w->dur[p]);
	free(w->dur);
	w->dur = NULL;
	w->ndur = 0;
}
