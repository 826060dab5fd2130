/*
 * bsearchd: binary searches over a sorted run of doubles (row times held
 * in memory: the in-memory dataset's, the sql engine's columns).
 */
#ifndef DSIGHT_BSEARCHD_H
#define DSIGHT_BSEARCHD_H

#include <stddef.h>

/* The first index of [a, b) whose t is >= v (t ascending on [a, b)); b
 * when none. */
size_t bsearchd_lower(const double *t, size_t a, size_t b, double v);

/* The first index of [a, b) whose t is > v (t ascending on [a, b)); b when
 * none. */
size_t bsearchd_upper(const double *t, size_t a, size_t b, double v);

#endif
