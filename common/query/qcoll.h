/*
 * qcoll: the lists of catalog elements the catalog kinds answer
 * (requests, sessions, server_spans, iterations, sources, workers,
 * families): filtering by a keep() callback, sorting by the query's sort,
 * paging, and the backend's own selection (dataset_select) when it can
 * answer exactly.  It frames each list with qlist.
 */
#ifndef DSIGHT_QCOLL_H
#define DSIGHT_QCOLL_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "query/qshared.h"

/* Whether element v (borrowed) is kept; arg is the caller's. */
typedef int (*qcoll_keep_fn)(struct qctx *q, const json_t *v, void *arg);
/* Writes element el (borrowed) as one item of the list. */
typedef void (*qcoll_emit_fn)(struct qctx *q, const json_t *el);

/* Writes the list head, the page of el[0..n) (sorted) through emit and
 * the list's tail (q_list_tail); the caller closes the list. */
void qcoll_emit_page(struct qctx *q, const json_t *const *el, size_t n,
                     qcoll_emit_fn emit);
/* The element whole, with the query's fields (q_emit_object). */
void qcoll_emit_object(struct qctx *q, const json_t *el);
/* Sorts el[0..n) by the query's sort and writes the whole list; frees el
 * (malloc'd, ownership taken) either way. */
int qcoll_sorted(struct qctx *q, const json_t **el, size_t n,
                 qcoll_emit_fn emit);
/* A whole list: the elements of arr (borrowed) that keep() keeps, in the
 * sort's order. */
int qcoll_plain(struct qctx *q, const json_t *arr, qcoll_keep_fn keep,
                void *arg);

/* The elements of a collection kept by a filter (references held). */
struct qcoll_kept {
	struct qctx *q;
	qcoll_keep_fn keep;
	void *arg;
	const json_t **el;
	size_t n, cap;
};
/* Collects collection c's elements that keep() keeps into *k, sorted by
 * the query's sort; the caller frees *k with qcoll_kept_free, even on
 * error. */
int qcoll_gather(struct qctx *q, enum evidence_collection c,
                 qcoll_keep_fn keep, void *arg, struct qcoll_kept *k);
void qcoll_kept_free(struct qcoll_kept *k);

/* A qfilter as the store's string filter (borrows f's strings). */
struct store_strs qcoll_strs(const struct qfilter *f);
/* The selection sel of c (filters set by the caller; sort, window and
 * page set here from q) answered by the backend: the list up to its tail
 * (q_list_tail), *total_out set; DATASET_FALLBACK (nothing written) when
 * it cannot answer exactly. */
int qcoll_backend(struct qctx *q, enum evidence_collection c,
                  struct store_select *sel, int64_t *unaligned,
                  qcoll_emit_fn emit, size_t *total_out);
/* A whole list of collection c: the backend's selection, else keep() over
 * every element. */
int qcoll_list(struct qctx *q, enum evidence_collection c,
               struct store_select *sel, qcoll_keep_fn keep);

#endif
