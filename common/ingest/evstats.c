/* evstats: counts gathered while reading evidence (see evstats.h). */
#include "ingest/evstats.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"

int evstats_note_profile(struct evstats *s, int64_t id)
{
	size_t need = (size_t)id + 1, cap = s->profiles_cap;

	if (id < 0)
		return -1;
	/* both arrays share one capacity: grow them to the same length */
	if (vec_reserve_zero(&s->profile_events, &cap, need,
	                     sizeof *s->profile_events))
		return -1;
	cap = s->profiles_cap;
	if (vec_reserve_zero(&s->profile_samples, &cap, need,
	                     sizeof *s->profile_samples))
		return -1;
	s->profiles_cap = cap;
	if (s->nprofiles < need)
		s->nprofiles = need;
	return 0;
}

int evstats_note_series(struct evstats *s, int64_t id)
{
	size_t need = (size_t)id + 1;

	if (id < 0)
		return -1;
	if (vec_reserve_zero(&s->series_points, &s->series_cap, need,
	                     sizeof *s->series_points))
		return -1;
	if (s->nseries < need)
		s->nseries = need;
	return 0;
}

void evstats_free(struct evstats *s)
{
	if (!s)
		return;
	free(s->series_points);
	free(s->profile_events);
	free(s->profile_samples);
	memset(s, 0, sizeof *s);
}
