/*
 * evparse_impl: the parse state shared by evparse.c and evcheck.c.
 *
 * Private to ingest/ (the parser's own files): the roles of the document's
 * objects, the frame stack, struct evparse, and the error and path helpers
 * both files call (evparse_impl.c, so that evcheck never calls back into
 * evparse, which calls it).  Everything else should use evparse.h.
 */
#ifndef DSIGHT_EVPARSE_IMPL_H
#define DSIGHT_EVPARSE_IMPL_H

#include <stdint.h>

#include <jansson.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/row.h"
#include "ingest/evrow.h"
#include "ingest/evstats.h"

#define MAX_DEPTH 512
/* JSON values one element may hold as a tree (a top-level member, or one
 * source, request, series, session, span or iteration; a profile's names
 * and stacks dictionaries may be larger).  A document is read into trees
 * only where it is not streamed as rows: this bounds what a small
 * compressed document of empty arrays can make a reader hold. */
#define ELEMENT_VALUES_MAX 1000000
#define PROFILE_VALUES_MAX 16000000
#define SCHEMA "srtctl-trace/1"
#define LONE_SURROGATE "invalid UTF-8 (a lone surrogate \\u escape)"

enum role {
	R_NONE, R_TOP, R_META, R_SOURCES, R_SOURCE, R_REQUESTS, R_REQUEST,
	R_METRICS, R_SERIES, R_POINTS, R_PROFILES, R_PROFILE, R_EVENTS, R_CPU,
	R_SAMPLES, R_SESSIONS, R_SERVER_SPANS, R_ITERATIONS,
	R_EVENT, R_SAMPLE, R_POINT
};

/* Value kinds as the callbacks see them. */
enum vkind { V_NULL, V_BOOL, V_NUM, V_STR, V_OBJ, V_ARR };

struct frame {
	enum role role;
	int is_obj;
	json_t *node;   /* borrowed (owned by its parent); NULL when streamed */
	int64_t index;  /* arrays: index of the current element */
	int64_t ord;    /* index of the enclosing profile or series */
	unsigned seen;  /* once-only keys already met in this object */
};

struct evparse {
	const char *file;
	const struct row_sink *sink;
	struct err *e;
	int rc;
	json_t *root;
	json_t *req_ids;  /* set of request ids */
	int have_schema, have_meta, done;
	int depth;
	struct frame fr[MAX_DEPTH];
	struct buf keys[MAX_DEPTH];
	struct buf path;
	struct evrow row;
	struct evrow_bounds names, stacks;
	struct evstats st;
	/* capabilities seen in streamed collection elements */
	int any_breakdown, any_spans;
	uint64_t nstr, lone_str; /* string tokens seen; the bad one (strscan) */
	/* values held as a tree in the current element, and their bound */
	uint64_t elem_values, elem_max;
};

/* The JSON path of frame `upto - 1` (and of its current element when cur).
 * The text lives in p->path (owned by p) until the next call. */
const char *evparse_path_of(struct evparse *p, int upto, int cur);

/* Records an ERR_DATA error "<file>: <path><message>" in p (the first one
 * wins in the caller) and returns 0, the yajl return that cancels. */
__attribute__((format(printf, 3, 4)))
int evparse_fail(struct evparse *p, const char *path, const char *fmt, ...);

/* Records ERR_NOMEM in p and returns 0. */
int evparse_nomem(struct evparse *p);

/* Writes into out (cap bytes) a short printable rendering of the user
 * string s (n bytes) for messages. */
void evparse_quoted(char *out, size_t cap, const char *s, size_t n);

/* The size of obj's array member key (borrowed), or -1 when absent. */
int64_t evparse_array_size_of(json_t *obj, const char *key);

#endif
