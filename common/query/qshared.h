/*
 * qshared: what the query kinds (query_*.c) share: the per-query context,
 * paging, catalog access and the common filters.  Private to the engine
 * (query.h is the public face); it calls no kind, no dispatcher and
 * neither qjoin nor qnotes (qlist frames a list with them), so the kinds
 * depend on it and never on query.c.
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
#include "query/qorder.h"
#include "query/qparams.h"

/* A filter by several exact values (worker, session, agent, name).  on ==
 * 0: no filter; on with n == 0 (a request without workers): nothing
 * matches. */
struct qfilter {
	const char *const *v;
	size_t n;
	int on;
};

/* A request join (--request with --phase on nsys, metrics, iterations,
 * cpu, timeline): resolved by qjoin_resolve (qjoin.h). */
struct qjoin {
	int on;
	const char *id, *phase;
	double a, b;             /* the window */
	const char **workers;    /* the workers used: the request's, or
	                          * those of the phase's role (malloc'd) */
	size_t nworkers;
	size_t nall;             /* the request's workers before the role */
	char *role_note;         /* the phase's roles, said in notes whether
	                          * or not the answer is empty (malloc'd) */
};

struct qctx {
	struct dataset *ds;
	const json_t *cat;
	const struct query_params *p;
	const char *kind;
	double start, end; /* the resolved window */
	double duration;
	/* the filters as given (or as the join sets them) */
	struct qfilter workers, sessions, agents, names;
	struct qorder order; /* the parsed sort (n == 0: default order) */
	struct qjoin join;
	struct buf *out;
	struct err *e;
	json_t *held; /* catalog elements kept for the query (q_request_find) */
};

/* Whether v (a JSON value) is a string equal to one of f's values; 1 when
 * the filter is off. */
int q_in(const struct qfilter *f, const json_t *v);
/* Whether obj's member key is in f (1 when f is off). */
int q_field_in(const struct qfilter *f, const json_t *obj, const char *key);
/* Whether any string of the array arr is in f (1 when f is off). */
int q_any_in(const struct qfilter *f, const json_t *arr);
/* Whether s (a C string) is one of f's values (1 when f is off). */
int q_str_in(const struct qfilter *f, const char *s);

/* The catalog's requests, backend neutral: calls fn for each request
 * element in stored order until it returns non-zero (returned).  An
 * element is valid during the call only (json_incref one to keep it). */
int q_request_foreach(struct qctx *q,
                      int (*fn)(void *ctx, const json_t *req, size_t index),
                      void *ctx);
/* The request with this id (borrowed, valid until the query ends), or
 * NULL (also after an error, which is then in q->e). */
const json_t *q_request_find(struct qctx *q, const char *id);

/* One item written under --fields: only the listed top-level keys, in the
 * item's own order. */
struct qitem {
	struct buf *b;
	const struct qlist *fields; /* n == 0: every key */
	size_t n;                   /* keys written */
};
/* Writes "{" and starts an item. */
void qi_begin(struct qitem *it, struct qctx *q);
/* Whether key is kept; when it is, writes `,"key":` (the caller then
 * writes the value). */
int qi_key(struct qitem *it, const char *key);
/* Writes obj's members (except those named in skip, NULL-ended) through
 * qi_key. */
void qi_members(struct qitem *it, const json_t *obj,
                const char *const *skip);
/* Writes "}". */
void qi_end(struct qitem *it);
/* A whole catalog object as an item. */
void q_emit_object(struct qctx *q, const json_t *obj);

/* Borrowed catalog member arrays (NULL when absent or not an array). */
const json_t *q_array(const json_t *obj, const char *key);
/* A member's number value; 0 and *ok = 0 when it is not a number. */
double q_number(const json_t *obj, const char *key, int *ok);
/* True when obj's [kstart, kend] overlaps the window (both numbers). */
int q_overlaps(const struct qctx *q, const json_t *obj, const char *kstart,
               const char *kend);
/* The window covers at least a quarter of the run (row_window.wide). */
int q_wide(const struct qctx *q);
/* The window is the whole run [0, duration]: build-time summaries apply
 * (dataset_run_*). */
int q_whole_run(const struct qctx *q);
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

/* The nsys name filter: lowercased needles (several --name values match
 * any).  q_name_needles prepares them (*nd NULL, *nn 0 when no filter);
 * q_match_names gives name_ok[k] = dictionary name k contains a needle
 * (malloc'd, NULL out of memory). */
struct q_needle {
	char *text;
	size_t len;
};
int q_name_needles(struct qctx *q, struct q_needle **nd, size_t *nn);
void q_name_needles_free(struct q_needle *nd, size_t nn);
unsigned char *q_match_names(const json_t *names, const struct q_needle *nd,
                             size_t nn);
/* fn(ctx, r, order) on every request the requests kind's filters keep, in
 * stored order, order counting them from 0; r (shaped as shape says, see
 * q_match_requests) lives only during the call, so a caller that folds the
 * requests (groups) holds none of them.  *n = how many were kept.  A
 * non-zero return of fn stops the walk and is returned. */
typedef int (*q_request_fn)(void *ctx, const json_t *r, size_t order);
int q_each_request(struct qctx *q, enum store_shape shape, q_request_fn fn,
                   void *ctx, size_t *n);
/* The requests the requests kind's filters keep, in stored order (*el
 * malloc'd, the elements held by q).  shape (store_coll.h) says the least
 * each element must hold; an element may hold more.  0 or an error. */
int q_match_requests(struct qctx *q, enum store_shape shape,
                     const json_t ***el, size_t *n);
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
/* The same, calling hook for every matching row with its group index
 * (a non-zero return stops the scan and is returned). */
typedef int (*q_group_row_fn)(void *ctx, int64_t group,
                              const struct row_event *row);
int q_nsys_groups_hook(struct qctx *q, const char *field, q_group_row_fn hook,
                       void *hook_ctx, struct q_nvtx_groups *out);
void q_nvtx_groups_free(struct q_nvtx_groups *g);
/* The groups' order (the default order, then q->order's keys when
 * with_sort) in *order, and their sort values; both malloc'd. */
int q_nvtx_groups_order(struct qctx *q, const struct q_nvtx_groups *gs,
                        int with_sort, size_t **order, struct num **vals);

/* The items order[from..to) of the groups (vals from
 * q_nvtx_groups_order), comma-separated. */
void q_nvtx_groups_emit(struct qctx *q, const struct q_nvtx_groups *gs,
                        const size_t *order, const struct num *vals,
                        size_t from, size_t to);

/* The group-by fields of kind, and the sort keys of its groups (NULL-ended
 * lists in message order), or NULL when kind does not group. */
const char *const *query_group_fields(const char *kind);
const char *const *query_group_sort_keys(const char *kind);
/* group_by validation on q->kind (nsys, requests; timeline of nsys): an
 * unknown field is a usage error naming the choices. */
int q_group_check(struct qctx *q);
/* timeline validation: the bucket (given, finite, > 0), then the source
 * `of`; q_timeline_count: at most 10000 buckets over the resolved window
 * (usage errors). */
int q_timeline_check(struct qctx *q);
int q_timeline_count(struct qctx *q);

/* The page [from, to) of a list of total matches. */
void q_page(const struct qctx *q, size_t total, size_t *from, size_t *to);

/* A hit's value for sort key `key` (the kind's own element type). */
typedef void (*q_key_value_fn)(const void *hit, const char *key,
                               struct qval *v);

/* Compares a and b on the keys of o (NULL: none), each value read by
 * value; 0 when every key is equal (the kind's default order decides). */
int q_keys_cmp(const void *a, const void *b, const struct qorder *o,
               q_key_value_fn value);

/* The keep smallest of the elements offered (by cmp), kept in a max-heap
 * (v[0] the largest kept) while offering; q_topk_sort then orders them.
 * v is malloc'd and owned by the struct (q_topk_free). */
struct q_topk {
	void *v;
	size_t n, cap, keep, elem;
	int (*cmp)(const void *a, const void *b, void *ctx);
	void *ctx;
	int oom;
};

void q_topk_init(struct q_topk *t, size_t elem, size_t keep,
                 int (*cmp)(const void *, const void *, void *), void *ctx);
/* Copies x in when it is among the keep smallest so far; 1 (and t->oom
 * set) when out of memory, else 0. */
int q_topk_offer(struct q_topk *t, const void *x);
/* Orders the kept elements, smallest first. */
void q_topk_sort(struct q_topk *t);
void q_topk_free(struct q_topk *t);

#endif
