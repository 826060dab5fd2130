/*
 * capabilities: which views of a run have usable data
 * (doc/evidence-document.md "capabilities"), computed from a catalog whose
 * row arrays are already emptied (event_count / sample_count present) and
 * the per-series point counts gathered while reading.
 */
#ifndef DSIGHT_CAPABILITIES_H
#define DSIGHT_CAPABILITIES_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

/* Returns a new reference to the capabilities object (NULL when out of
 * memory); series_points[i] is the number of points of series i (i <
 * nseries; NULL: none). */
json_t *capabilities_compute(const json_t *catalog,
                             const uint64_t *series_points, size_t nseries);

#endif
