/*
 * vec: growing heap arrays, the one growth policy of dsight.
 *
 * An array is a plain `T *` plus a capacity counted in elements; pass the
 * address of the pointer (`&a`, a T **) and the element size (`sizeof *a`).
 * Growth doubles (at least 16 elements), sizes are checked for overflow,
 * and on failure the array is left as it was: still valid, still owned by
 * the caller, who frees it with free().
 */
#ifndef DSIGHT_VEC_H
#define DSIGHT_VEC_H

#include <stddef.h>

/* Reallocates *arrp to exactly n elements of elem bytes (n > 0).  New
 * elements are uninitialised.  Returns 0, or -1 (out of memory, overflow). */
int vec_resize(void *arrp, size_t n, size_t elem);

/* Makes room for at least need elements: nothing when *cap >= need, else
 * the array grows to max(need, 2 * *cap, 16) elements and *cap follows.
 * New elements are uninitialised.  Returns 0 or -1. */
int vec_reserve(void *arrp, size_t *cap, size_t need, size_t elem);

/* vec_reserve, with the new elements [old *cap, new *cap) zeroed: for
 * arrays indexed by id, where a slot not yet seen must read as empty. */
int vec_reserve_zero(void *arrp, size_t *cap, size_t need, size_t elem);

#endif
