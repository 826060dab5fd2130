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

/* The page [from, to) of a list of total matches. */
void q_page(const struct qctx *q, size_t total, size_t *from, size_t *to);
/* `{"total":T,"items":[` */
void q_list_head(struct qctx *q, size_t total);
/* `],"offset":O,"limit":L,"range":[s,e]` (the caller adds extras and `}`) */
void q_list_tail(struct qctx *q);
/* Writes obj's members except those named in skip (NULL-ended) as
 * `{k:v,...` without the closing brace; returns the number written. */
size_t q_obj_open_except(struct buf *b, const json_t *obj,
                         const char *const *skip);

#endif
