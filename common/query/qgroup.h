/*
 * qgroup: the groups of `--group-by` (doc/query-semantics.md "Grouping"):
 * group keys interned by value, the per-group NVTX accumulator (count,
 * exact duration and clipped sums, maximum) that a precomputed partial can
 * be merged into, and the ordering of groups (a default order, then the
 * caller's sort keys, nulls last in both directions).
 */
#ifndef DSIGHT_QGROUP_H
#define DSIGHT_QGROUP_H

#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/num.h"
#include "base/strdict.h"
#include "query/qstat.h"

enum { QKEY_NULL = 0, QKEY_STR, QKEY_INT };

/* A group key: null, a string (bytes owned by the qkeys dictionary) or an
 * integer. */
struct qkey {
	int kind;
	const char *s;
	size_t len;
	int64_t i;
};

/* Interns keys to group indexes 0, 1, ... in order of first appearance. */
struct qkeys {
	struct strdict strs; /* strings, and integers as 8 raw bytes */
	int64_t null_group;    /* -1 until the null key appears */
	int64_t count;
	struct qkey *keys;     /* count entries */
	size_t cap;
};

void qkeys_init(struct qkeys *k);
void qkeys_free(struct qkeys *k);
/* The group index of a string / integer / null key, adding it when new;
 * -1 out of memory. */
int64_t qkeys_str(struct qkeys *k, const char *s, size_t len);
int64_t qkeys_int(struct qkeys *k, int64_t i);
int64_t qkeys_null(struct qkeys *k);
/* The group of an existing string key, or -1. */
int64_t qkeys_find_str(const struct qkeys *k, const char *s, size_t len);

/* Null last; strings by code point (bytes of valid UTF-8); integers by
 * value. */
int qkey_cmp(const struct qkey *a, const struct qkey *b);
void qkey_emit(struct buf *b, const struct qkey *k);

/* One NVTX group: what `nsys --group-by` reports, mergeable exactly. */
struct qnvtx {
	int64_t count;
	struct qsum duration; /* end - start */
	struct qsum clipped;  /* time inside the window */
	double max;           /* largest end - start (count > 0) */
};

void qnvtx_init(struct qnvtx *g);
void qnvtx_free(struct qnvtx *g);
void qnvtx_add(struct qnvtx *g, double start, double end, double wstart,
               double wend);
/* Adds a partial (e.g. precomputed for ranges inside the window, whose
 * clipped time is their duration) to g. */
void qnvtx_merge(struct qnvtx *g, const struct qnvtx *o);

/*
 * Orders groups.  Each group has nvals sort values (struct num, NUM_NULL
 * for null) at vals[g * nvals ...] and a key.  def[] lists the default
 * order as value indexes (QGROUP_KEY for the key), each with desc flags;
 * sort[] the caller's keys the same way (may be empty).  Fills order[0..n)
 * with the group indexes in their final order.
 */
#define QGROUP_KEY (-1)
struct qgroup_by {
	int val;  /* value index, or QGROUP_KEY */
	int desc;
};
struct qgroup_sort {
	const struct qgroup_by *def, *sort; /* borrowed */
	size_t ndef, nsort;
};
int qgroup_order(const struct qkey *keys, const struct num *vals,
                 size_t nvals, size_t n, const struct qgroup_sort *by,
                 size_t *order);

#endif
