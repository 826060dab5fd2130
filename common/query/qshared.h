/*
 * qshared: what the query kinds (query_*.c) share: the per-query context,
 * the list response shape, catalog access and the common filters.  Private
 * to the engine (query.h is the public face); it calls no kind and no
 * dispatcher, so the kinds depend on it and never on query.c.
 */
#ifndef DSIGHT_QSHARED_H
#define DSIGHT_QSHARED_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "query/dataset.h"
#include "base/err.h"
#include "query/qgroup.h"
#include "query/qparams.h"

struct qctx {
	struct dataset *ds;
	const json_t *cat;
	const struct query_params *p;
	double start, end; /* the resolved window */
	double duration;
	struct buf *out;
	struct err *e;
};

/* Borrowed catalog member arrays (NULL when absent or not an array). */
const json_t *q_array(const json_t *obj, const char *key);
/* A member's number value; 0 and *ok = 0 when it is not a number. */
double q_number(const json_t *obj, const char *key, int *ok);
/* True when obj's [kstart, kend] overlaps the window (both numbers). */
int q_overlaps(const struct qctx *q, const json_t *obj, const char *kstart,
               const char *kend);
/* The window covers at least a quarter of the run (dataset_window.wide). */
int q_wide(const struct qctx *q);
/* A worker filter (or a substring filter) is given: non-NULL and
 * non-empty; exact session/agent/name filters test non-NULL only. */
int q_given(const char *s);
/* The member is a string equal to s. */
int q_str_eq(const json_t *obj, const char *key, const char *s);
/* Integer equality of a JSON value (integer, or integral real) with v. */
int q_int_eq(const json_t *v, int64_t want);
/* The id of element k of a catalog array (its "id" integer, else k). */
int64_t q_id(const json_t *obj, size_t k);

/* Profiles selected by worker / rank / profile; *idx malloc'd (indexes
 * into catalog.profiles).  0 or ERR_NOMEM. */
int q_select_profiles(struct qctx *q, size_t **idx, size_t *n);

/* name_ok[k] = the dictionary name k (of names) contains the lowercased
 * needle (text_contains); malloc'd, NULL out of memory. */
unsigned char *q_match_names(const json_t *names, const char *needle,
                             size_t nlen);
/* The indexes (into catalog.requests, stored order) of the requests the
 * requests kind's filters keep; *idx malloc'd.  0 or ERR_NOMEM. */
int q_match_requests(struct qctx *q, size_t **idx, size_t *n);
/* The metrics kind's series filter (worker, exact name, rank as text). */
int q_keep_series(const struct qctx *q, const json_t *s);

/* The NVTX groups (by "name", "worker", "profile" or "tid") of the rows
 * the nsys kind matches, unpaged (query_group.c); free with
 * q_nvtx_groups_free. */
struct q_nvtx_groups {
	struct qkeys keys; /* group k has key keys.keys[k] */
	struct qnvtx *g;   /* n used, cap allocated */
	size_t n, cap;
	int partial;       /* a selected profile was truncated */
};
int q_nsys_groups(struct qctx *q, const char *field,
                  struct q_nvtx_groups *out);
void q_nvtx_groups_free(struct q_nvtx_groups *g);
/* The groups' order (the default order, then the caller's sort keys when
 * with_sort) in *order, and their sort values; both malloc'd. */
int q_nvtx_groups_order(struct qctx *q, const struct q_nvtx_groups *gs,
                        int with_sort, size_t **order, struct num **vals);

/* The group-by fields of kind, and the sort keys of its groups (NULL-ended
 * lists in message order), or NULL when kind does not group. */
const char *const *query_group_fields(const char *kind);
const char *const *query_group_sort_keys(const char *kind);
/* group_by validation on kind (nsys, requests; timeline of nsys): an
 * unknown field is a usage error naming the choices. */
int q_group_check(struct qctx *q, const char *kind);
/* timeline validation: the bucket (given, > 0, at most 10000 buckets over
 * the resolved window), then the source `of` (usage errors). */
int q_timeline_check(struct qctx *q);

/* The page [from, to) of a list of total matches. */
void q_page(const struct qctx *q, size_t total, size_t *from, size_t *to);
/* `{"total":T,"items":[` */
void q_list_head(struct qctx *q, size_t total);
/* `{"total":T,"groups":G,"items":[` (a grouped list) */
void q_groups_head(struct qctx *q, size_t total, size_t groups);
/* `],"offset":O,"limit":L,"range":[s,e]` (the caller adds extras and `}`) */
void q_list_tail(struct qctx *q);
/* Writes obj's members except those named in skip (NULL-ended) as
 * `{k:v,...` without the closing brace; returns the number written. */
size_t q_obj_open_except(struct buf *b, const json_t *obj,
                         const char *const *skip);

#endif
