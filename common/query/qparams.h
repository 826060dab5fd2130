/*
 * qparams: the one table of query parameters (doc/query-semantics.md) and
 * everything driven by it: the parameter struct and its defaults, CLI flag
 * parsing, RPC/MCP decoding (server side) and encoding (client side).  A
 * parameter is added by one row of the table in qparams.c, the member it
 * fills here, and the semantics that read it.
 */
#ifndef DSIGHT_QPARAMS_H
#define DSIGHT_QPARAMS_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/cancel.h"
#include "base/err.h"

/* The most values one list parameter takes (worker, session, agent, name,
 * sort, fields): more is ERR_USAGE "<name> takes at most 1000 values". */
#define QPARAM_LIST_MAX 1000

/* Several values of one parameter (n == 0: not given as a list). */
struct query_sql_cursor;
struct query_sql_pool;
struct qsqlmem;

struct qlist {
	const char *const *v;
	size_t n;
};

struct query_params {
	const char *kind;       /* NULL = "summary" */
	int has_start, has_end; /* absent: 0 and the run duration */
	double start, end;
	/* worker, session, agent, name: one value here, or several in the
	 * *_list member (a JSON array or a repeated CLI flag); the engine
	 * reads whichever is given (qshared.h q_values). */
	const char *request_id, *session, *agent, *worker, *name, *search;
	struct qlist session_list, agent_list, worker_list, name_list;
	int has_rank, has_profile;
	int64_t rank, profile;
	/* gpu only */
	int has_device, has_stream;
	int64_t device, stream;
	const char *gpu_kind;   /* kernel, memcpy, memset; NULL = any */
	double min_ttft_ms;     /* default 0 */
	int64_t offset, limit;  /* defaults 0 and 100 */
	int points;             /* metrics only */
	struct qlist sort;      /* keys, "-" prefix for descending */
	struct qlist fields;    /* item keys to keep */
	const char *phase;      /* with request_id: prefill, decode, whole */
	const char *group_by;   /* nsys, requests, timeline; NULL = none */
	int has_bucket;         /* timeline: the bucket width is required */
	double bucket;
	const char *of;         /* timeline source; NULL = "requests" */
	const char *sql;        /* sql only: the statement */
	int has_timeout;        /* sql only: absent = 10 s */
	double timeout;
	/* nsys, timeline of nsys: range filters (qrange.h) */
	int has_min_duration, has_max_duration, has_max_depth;
	double min_duration, max_duration; /* seconds, inclusive */
	int64_t max_depth;                 /* 0 = outermost ranges only */
	int self_time;                     /* cpu --self: leaf-frame samples */
	int64_t max_rows;       /* sql only: default 10000 */
	void *owned;            /* memory the decoders allocated (qparams.c) */
	/* Not a parameter: the caller's stop flag (borrowed, may be NULL); a
	 * long statement of the sql kind ends soon after it is set. */
	const cancel_flag *stop;
	/* Not parameters (borrowed, may be NULL): a second stop flag of one
	 * sql statement (its asker went away); and where the sql kind hands
	 * over its open cursor (query_sql_open) instead of writing the
	 * answer: *sql_cursor is then the caller's (query_sql_close). */
	const cancel_flag *cancel;
	struct query_sql_cursor **sql_cursor;
	/* Not a parameter (borrowed, may be NULL): the sql engine's columns
	 * (qsqlmem.h), which then answer for the file's nvtx and
	 * metric_points views. */
	const struct qsqlmem *sql_mem;
	/* Not a parameter (borrowed, may be NULL): the sql connections of the
	 * caller's file (query_sql.h), reused from statement to statement. */
	struct query_sql_pool *sql_pool;
};

enum qparam_type {
	QP_STRING,  /* const char * */
	QP_NUMBER,  /* double (non-finite values allowed: validation rejects) */
	QP_INTEGER, /* int64_t */
	QP_BOOLEAN, /* int; a CLI switch without a value */
	QP_STRINGS, /* const char * (one value) or struct qlist at list_off
	             * (a JSON array, or the CLI flag repeated) */
	QP_KEYS,    /* struct qlist: a comma-separated string or a JSON array
	             * of strings; a repeated CLI flag adds to it */
};

/* Where a parameter is shown in the generated help: with every list kind
 * (the window and the page) or as a filter of its own kinds. */
#define QP_COMMON 1u

struct qparam {
	const char *name;     /* RPC/MCP member name */
	const char *flag;     /* CLI flag; NULL = positional (kind) */
	const char *metavar;  /* CLI value name; NULL for a switch */
	enum qparam_type type;
	const char *def;      /* default as JSON text; NULL = none (absent) */
	const char *kinds;    /* space-separated kinds that use it */
	const char *help;     /* one sentence */
	const char *schema;   /* extra JSON-schema members ("minimum":0) or NULL */
	const char *web;      /* name in the browser API (web/query.js) or NULL */
	unsigned flags;       /* QP_COMMON */
	const char *choices;  /* closed values, space-separated (schema enum) */
	size_t off;           /* member of struct query_params */
	ptrdiff_t has_off;    /* its has_ flag, or -1 */
	ptrdiff_t list_off;   /* QP_STRINGS: its struct qlist, else -1 */
};

/* The parameters, in help and schema order; qparam_count of them. */
extern const struct qparam qparam_table[];
extern const size_t qparam_count;

/* The row for an RPC name or a CLI flag (with its "--"); NULL if none. */
const struct qparam *qparam_by_name(const char *name);
const struct qparam *qparam_by_flag(const char *flag, size_t len);
/* Whether kind (a known kind name) uses parameter qp. */
int qparam_used_by(const struct qparam *qp, const char *kind);

/* Sets every parameter to its default (owns nothing yet). */
void query_params_init(struct query_params *p);
/* Frees what the decoders allocated; p is back to its defaults. */
void query_params_free(struct query_params *p);

/*
 * Sets the parameter of CLI flag qp from its text value (NULL for a
 * switch).  A value that does not parse as the type is ERR_USAGE
 * "--limit must be an integer" / "--from must be a number".  A repeated
 * QP_STRINGS flag makes a list ("worker values must not be empty" when one
 * of them is empty); QP_KEYS values are split on commas and accumulate.
 * Past QPARAM_LIST_MAX values: ERR_USAGE "--worker takes at most 1000
 * values".
 * String values point into text: keep it alive while p is used; call
 * query_params_free.
 */
int query_params_set_cli(struct query_params *p, const struct qparam *qp,
                         const char *text, struct err *e);

/*
 * Reads RPC/MCP parameters from a JSON object (members by their RPC names;
 * null = absent; unknown members ignored).  A member of the wrong JSON type
 * is ERR_USAGE "<name> must be an integer or null" (or "a number",
 * "a string", "a boolean", "a string, a list of strings"); an empty
 * array is "<name> must not be an empty list", an empty string in a
 * list "<name> values must not be empty", and a list of more than
 * QPARAM_LIST_MAX values (an array, or comma-separated keys)
 * "<name> takes at most 1000 values".  A number parameter also takes the strings
 * "nan", "inf" and "-inf" (what the CLI client sends for a non-finite value
 * the user typed, so that validation answers as it does locally).  Strings
 * point into j: keep j alive while p is used; call query_params_free.
 */
int query_params_from_json(const json_t *j, struct query_params *p,
                           struct err *e);

/*
 * Appends p as an RPC params object (compact JSON): every parameter whose
 * value differs from its default, non-finite numbers as "nan"/"inf"/"-inf".
 * query_params_from_json of the result gives p back.
 */
void query_params_to_json(const struct query_params *p, struct buf *out);

#endif
