/*
 * store_ext: dsight's extension tables of trace-data.sqlite (documented in
 * doc/report-files.md and dsight-report(5)): the catalog collections
 * (requests, sessions, server_spans, iterations) one row per element with
 * its scalar keys as typed columns and its compact JSON, the request
 * workers and session agents, the request search index (FTS5 trigram over
 * the lowercased search text), dsight_meta and dsight_core.
 *
 * Owns the physical layout of those tables (names, columns, indexes) for
 * both the writer (store_write drives the encode / insert / finish steps)
 * and the reader (store_req.c builds its SQL from the same column names).
 * An element is encoded on the parsing thread (store_ext_encode: a
 * self-contained record in a text buffer) and inserted on the store's
 * writer thread (store_ext_insert), so the two cores share the work.
 */
#ifndef DSIGHT_STORE_EXT_H
#define DSIGHT_STORE_EXT_H

#include <jansson.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/row.h"
#include "store/store_reqtyped.h"
#include "store/store_val.h"

/* The extension's table names, spelled here only: every SQL text of the
 * tree that names one is built from these (string-literal concatenation),
 * and store_ext_table gives a collection's. */
#define STORE_EXT_REQUESTS        "dsight_requests"
#define STORE_EXT_SESSIONS        "dsight_sessions"
#define STORE_EXT_SERVER_SPANS    "dsight_server_spans"
#define STORE_EXT_ITERATIONS      "dsight_iterations"
#define STORE_EXT_REQUEST_WORKERS "dsight_request_workers"
#define STORE_EXT_SESSION_AGENTS  "dsight_session_agents"
#define STORE_EXT_REQUEST_SEARCH  "dsight_request_search"
/* The covering index the request search scans (store_coll names it in
 * INDEXED BY). */
#define STORE_EXT_SEARCH_INDEX    "dsight_requests_search"

/* The extension's version (dsight_meta.extension). */
#define STORE_EXT_VERSION "1"
/* The largest catalog row other schema-v1 readers get whole (32 MiB). */
#define STORE_EXT_ROW_MAX ((size_t)32 << 20)
#define STORE_EXT_MAXCOLS 16

/* Column kinds: how a column's value comes from the element. */
enum ext_kind {
	EXT_TEXT,     /* a string member (anything else: NULL, irregular) */
	EXT_NUM,      /* a number member, kept as integer or real */
	EXT_COUNT,    /* the length of an array member (NULL when absent) */
	EXT_SIZE0,    /* the length of an array member (0 when absent) */
	EXT_DURATION, /* end - start in doubles when both are numbers */
	EXT_PRESENT,  /* 1 when the member exists, else 0 */
};

struct ext_col {
	const char *name; /* column name */
	const char *key;  /* the element's member it comes from */
	enum ext_kind kind;
	int indexed;      /* filter or sort key: gets an index */
};

/* The columns of collection c (n of them). */
const struct ext_col *store_ext_columns(enum evidence_collection c,
                                        size_t *n);
/* The table of collection c: "dsight_requests", ... */
const char *store_ext_table(enum evidence_collection c);

/* One element ready to insert; its text lives in the caller's buffer. */
struct ext_rec {
	int coll;
	int64_t ordinal;
	size_t json_off, json_len;
	size_t list_off, list_len;     /* workers / agents: len-prefixed */
	size_t search_off, search_len; /* requests: lowercased, 0xFF-separated */
	struct store_val col[STORE_EXT_MAXCOLS]; /* texts in the buffer */
	struct store_reqtyped_rec typed; /* requests: the typed values */
};

/*
 * Encodes element el (borrowed) of collection c at ordinal into *r,
 * appending its texts to text.  *irregular gets the bit of every column
 * whose member had an unexpected type (the reader then leaves that key
 * to the exact in-memory code).  0, or ERR_NOMEM / ERR_DATA (e filled).
 */
int store_ext_encode(struct buf *text, enum evidence_collection c,
                     int64_t ordinal, const json_t *el, struct ext_rec *r,
                     unsigned *irregular, struct err *e);

/* The writer's prepared statements. */
struct store_ext {
	sqlite3 *db;
	sqlite3_stmt *ins[EVIDENCE_NCOLLECTIONS];
	sqlite3_stmt *ins_worker, *ins_agent, *ins_search;
	sqlite3_stmt *ins_typed, *ins_typed_w; /* the requests' typed tables */
	int typed_irregular; /* a request was not plain: the fallback runs */
};

/* Creates the extension tables in db (inside the load's transaction), with
 * the requests' indexes the build's web phase reads, and prepares the
 * inserts.  On failure x holds what was prepared (store_ext_close frees
 * it). */
int store_ext_create(sqlite3 *db, struct store_ext *x, struct err *e);

/* Inserts one record whose texts are in text. */
int store_ext_insert(struct store_ext *x, const char *text,
                     const struct ext_rec *r, struct err *e);

/*
 * After the load: writes dsight_core (core: the catalog with the
 * collections emptied, borrowed), dsight_meta (extension, generation,
 * the element counts "count.<collection>", "irregular.<collection>" as a
 * comma list of column names, "streamed" = 1 when the collections live
 * only here, not in the core), and finalizes the statements.  Indexes
 * are created by store_ext_index.
 */
int store_ext_finish(struct store_ext *x, const json_t *core,
                     const char *generation,
                     const uint64_t counts[EVIDENCE_NCOLLECTIONS],
                     const unsigned irregular[EVIDENCE_NCOLLECTIONS],
                     struct err *e);

/* The SQL creating the other extension indexes the build's web phase
 * reads (run after the load), and then the rest (with their statistics;
 * run while the web phase writes its files, or after it). */
extern const char store_ext_index_sql[];
extern const char store_ext_late_index_sql[];

void store_ext_close(struct store_ext *x);

/*
 * Emits the full catalog JSON: core's members in order, with each
 * collection key named in `from_db` (bit 1 << c) filled from its table
 * in ordinal order instead of core's (empty) array.  `extra` (may be
 * NULL) is one more member, written last ("\"k\":v").  Chunks go to
 * out(ctx, data, n) (nonzero return stops with that code).  db is read
 * only.
 */
int store_ext_emit_catalog(sqlite3 *db, const json_t *core, unsigned from_db,
                           const char *extra,
                           int (*out)(void *ctx, const char *data, size_t n),
                           void *ctx, struct err *e);

/* Writes collection c's elements from its table as one JSON array. */
int store_ext_emit_collection(sqlite3 *db, enum evidence_collection c,
                              int (*out)(void *ctx, const char *data, size_t n),
                              void *ctx, struct err *e);

/* The collections whose elements live in db's extension tables (bit
 * 1 << c; 0 for a cache without the extension). */
int store_ext_collections_mask(sqlite3 *db, unsigned *mask, struct err *e);

/* Opens the store at path read-only (*db, caller closes) and reads its
 * collections mask. */
int store_ext_open_collections(const char *path, sqlite3 **db, unsigned *mask,
                               struct err *e);

#endif
