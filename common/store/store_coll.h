/*
 * store_coll: the reader of dsight's extension tables (store_ext.h) on an
 * open cache: whether the extension is there and consistent, the core,
 * the collection counts, and the catalog collections answered from the
 * tables -- one element at a time, a request by id, and selections whose
 * filters, sort and page run in SQL (exactly as the engine's in-memory
 * code would; store_coll_select says when it cannot promise that).
 * One struct store_coll belongs to one connection (struct store).
 */
#ifndef DSIGHT_STORE_COLL_H
#define DSIGHT_STORE_COLL_H

#include <jansson.h>
#include <stdint.h>

#include "base/err.h"
#include "base/row.h"
#include "store/store.h"
#include "store/store_elem.h"

struct store_coll;

/*
 * Looks at s's extension.  Without one (another builder's cache) *out is
 * NULL and 0 is returned: the caller reads the v1 catalog.  With one whose
 * dsight_meta.generation equals catalog_generation, *out is a new reader
 * (store_coll_close) and *core the parsed dsight_core (new reference).  An
 * extension that is present but inconsistent also gives *out NULL, with
 * *stale = 1 (the caller refuses a catalog marked external).
 */
int store_coll_open(struct store *s, const char *catalog_generation,
                    struct store_coll **out, json_t **core, int *stale,
                    struct err *e);
void store_coll_close(struct store_coll *c);

/* Whether the collection lives in the tables (else in the core). */
int store_coll_has(const struct store_coll *c, enum evidence_collection k);
/* Its element count (from dsight_meta). */
int64_t store_coll_count(const struct store_coll *c, enum evidence_collection k);

/* ERR_REBUILT "DSight dataset was rebuilt; reopen it before querying" when
 * dsight_meta.generation is no longer generation. */
int store_coll_check_generation(struct store_coll *c, const char *generation,
                                struct err *e);

typedef int (*store_elem_fn)(void *ctx, int64_t ordinal, const json_t *el);

/* Every element of k in stored order; el is valid during the call only
 * (json_incref it to keep it).  fn's non-zero return stops and is
 * returned. */
int store_coll_foreach(struct store_coll *c, enum evidence_collection k,
                       store_elem_fn fn, void *ctx, struct err *e);

/* The request whose id is id (n bytes): *out a new reference, or NULL. */
int store_coll_request(struct store_coll *c, const char *id, size_t n,
                       json_t **out, struct err *e);

/* Distinct string values of a catalog name (requests' session, agent or
 * workers; sessions' id or agents) in first-seen order. */
enum store_names { SN_REQ_SESSION, SN_REQ_AGENT, SN_REQ_WORKER, SN_SESS_ID,
                   SN_SESS_AGENT };
int store_coll_names(struct store_coll *c, enum store_names which,
                     int (*fn)(void *ctx, const char *s, size_t n), void *ctx,
                     struct err *e);

/* A selection (see query semantics): a list of values matches any. */
struct store_strs {
	const char *const *v;
	size_t n;
	int on; /* 0: no filter; on with n == 0: nothing matches */
};
struct store_sort_key {
	const char *key; /* a sort key of the kind */
	int desc;
};
struct store_select {
	double start, end;          /* the window (always applied) */
	struct store_strs sessions; /* requests: session; sessions: id */
	struct store_strs agents;   /* requests: agent; sessions: in agents */
	struct store_strs workers;  /* requests: in workers; iterations: worker */
	double min_ttft_ms;         /* requests */
	const char *needle;         /* requests: lowercased search, or NULL */
	size_t needle_len;
	int has_rank;               /* iterations */
	int64_t rank;
	const struct store_sort_key *sort;
	size_t nsort;
	int64_t offset, limit;
	/* of the page's elements (requests; the search path, with a
	 * needle, passes whole elements whatever the shape) */
	enum store_shape shape;
};

/*
 * Answers a selection of k: *total (the exact number of matches), the page
 * [offset, offset + limit) in order through fn (el valid during the call),
 * and for iterations *unaligned (filtered rows with a null start).
 * Returns STORE_COLL_FALLBACK (without calling fn) when a filter or sort
 * key meets a column some element holds with an unexpected type: the
 * caller then runs its exact in-memory code over store_coll_foreach.
 */
#define STORE_COLL_FALLBACK (-1)
int store_coll_select(struct store_coll *c, enum evidence_collection k,
                      const struct store_select *sel, int64_t *total,
                      int64_t *unaligned, store_elem_fn fn, void *ctx,
                      struct err *e);

#endif
