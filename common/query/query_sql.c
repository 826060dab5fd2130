/* query_sql: the read-only sql kind (see query_sql.h). */
#include "query/query_sql.h"

#include <math.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "base/buf.h"
#include "base/jsonout.h"
#include "base/utf8.h"
#include "query/qkinds.h"
#include "query/qsqlagg.h"
#include "query/qsqlauth.h"
#include "query/qsqlfn.h"
#include "query/qsqlshape.h"
#include "query/qsqlvtab.h"
#include "query/qtempvfs.h"
#include "store/store.h"
#include "store/store_depth.h"
#include "store/store_views.h"

/* A connection's state its callbacks borrow. */
struct sqlctx {
	struct qsqlauth auth;      /* the authorizer's (its first member) */
	struct qsqlfn_clock clock; /* the time limit and the stop flag */
	int lacks_threads;        /* the cache's nvtx lacks thread_name */
	int lacks_depth;          /* the cache's nvtx lacks depth */
};

static int past_deadline(void *ctx)
{
	struct sqlctx *c = ctx;
	return qsqlfn_clock_expired(&c->clock);
}

/* Appends text as a JSON string, invalid UTF-8 replaced by U+FFFD. */
static void put_text(struct buf *out, const char *s, size_t n)
{
	if (utf8_valid(s, n)) {
		jsonout_str(out, s, n);
		return;
	}
	struct buf fixed;
	buf_init(&fixed, 0);
	buf_append_utf8(&fixed, s, n);
	if (fixed.failed)
		out->failed = fixed.failed;
	else
		jsonout_str(out, fixed.data ? fixed.data : "", fixed.len);
	buf_free(&fixed);
}

/* A value of the answer: a column of the stepped row (v, read once per
 * value: the column API would look it up for each call), or one the
 * engine computed (m: qsqlagg.h). */
struct cell {
	sqlite3_value *v;
	const struct qsqlmem_val *m;
};

/* Value k of the row: of st, or cells[k] when cells is not NULL.  The
 * value is read on the connection's one thread (it is not shared), so the
 * unprotected value sqlite3_column_value returns may be read directly. */
static struct cell cell_at(sqlite3_stmt *st, const struct qsqlmem_val *cells,
                           int k)
{
	struct cell c = {NULL, NULL};

	if (cells)
		c.m = &cells[k];
	else
		c.v = sqlite3_column_value(st, k);
	return c;
}

static int cell_type(const struct cell *c)
{
	return c->m ? c->m->type : sqlite3_value_type(c->v);
}

static size_t cell_bytes(const struct cell *c)
{
	return c->m ? (size_t)c->m->n : (size_t)sqlite3_value_bytes(c->v);
}

static void put_value(struct buf *out, const struct cell *c)
{
	static const char hex[] = "0123456789abcdef";

	switch (cell_type(c)) {
	case SQLITE_INTEGER:
		jsonout_int(out, c->m ? c->m->i : sqlite3_value_int64(c->v));
		break;
	case SQLITE_FLOAT: {
		double d = c->m ? c->m->d : sqlite3_value_double(c->v);
		if (isfinite(d))
			jsonout_real(out, d);
		else
			buf_puts(out, "null");
		break;
	}
	case SQLITE_TEXT: {
		const char *s = c->m ? c->m->s
		                     : (const char *)sqlite3_value_text(c->v);
		put_text(out, s ? s : "", cell_bytes(c));
		break;
	}
	case SQLITE_BLOB: {
		const unsigned char *p = sqlite3_value_blob(c->v);
		size_t n = (size_t)sqlite3_value_bytes(c->v);
		if (buf_reserve(out, 2 * n + 2))
			break;
		buf_putc(out, '"');
		for (size_t i = 0; i < n; i++) {
			buf_putc(out, hex[p[i] >> 4]);
			buf_putc(out, hex[p[i] & 15]);
		}
		buf_putc(out, '"');
		break;
	}
	default:
		buf_puts(out, "null");
	}
}

/* The connection: read-only, defensive, no extensions, bounded. */
static int connect(const char *abs_path, sqlite3 **db, struct sqlctx *c,
                   struct err *e)
{
	int rc = qtempvfs_register();
	sqlite3_stmt *st = NULL;
	int has_views = 0;

	if (rc != SQLITE_OK)
		return err_set(e, ERR_DATA, "cannot set up the sql connection: %s",
		               sqlite3_errstr(rc));
	rc = store_open_ro_vfs(abs_path, QTEMPVFS_NAME, db);

	if (rc != SQLITE_OK)
		return err_set(e, ERR_DATA, "Cannot open DSight SQLite cache %s: %s",
		               abs_path,
		               *db ? sqlite3_errmsg(*db) : sqlite3_errstr(rc));
	sqlite3_db_config(*db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_FTS3_TOKENIZER, 0, NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0, NULL);
	sqlite3_db_config(*db, SQLITE_DBCONFIG_ENABLE_TRIGGER, 0, NULL);
	sqlite3_limit(*db, SQLITE_LIMIT_ATTACHED, 0);
	/* Bounds what one value may cost (randomblob, zeroblob, group_concat)
	 * while leaving room for the catalog row the views read (at most
	 * 32 MiB when dsight builds it). */
	sqlite3_limit(*db, SQLITE_LIMIT_LENGTH, QUERY_SQL_VALUE_MAX);
	sqlite3_limit(*db, SQLITE_LIMIT_SQL_LENGTH, 1 << 20);
	sqlite3_limit(*db, SQLITE_LIMIT_LIKE_PATTERN_LENGTH,
	              QUERY_SQL_PATTERN_MAX);
	sqlite3_busy_timeout(*db, 2000);
	/* Sorts and temporary b-trees of a statement spill to temporary files,
	 * never into the report; the VFS caps them (qtempvfs.h). */
	sqlite3_exec(*db, "PRAGMA temp_store = FILE", NULL, NULL, NULL);
	/* 32 MiB of page cache, also the sorter's in-memory budget: a sort of
	 * a million short rows stays in memory instead of merging runs spilled
	 * to those files (SQLite's default is 2 MiB) */
	sqlite3_exec(*db, "PRAGMA cache_size = -32768", NULL, NULL, NULL);
	if (sqlite3_prepare_v2(*db,
	                       "SELECT (SELECT count(*) FROM sqlite_master"
	                       " WHERE type = 'table' AND name = '"
	                       STORE_VIEWS_THREADS "'),"
	                       " (SELECT count(*) FROM sqlite_master"
	                       " WHERE type = 'table' AND name = '"
	                       STORE_DEPTH_TABLE "') FROM sqlite_master"
	                       " WHERE type = 'view' AND name = '"
	                       STORE_VIEWS_MARKER "'",
	                       -1, &st, NULL) != SQLITE_OK)
		return err_set(e, ERR_DATA, "%s is not a readable DSight SQLite "
		               "cache: %s", abs_path, sqlite3_errmsg(*db));
	has_views = sqlite3_step(st) == SQLITE_ROW;
	c->lacks_threads = has_views && !sqlite3_column_int(st, 0);
	c->lacks_depth = has_views && !sqlite3_column_int(st, 1);
	sqlite3_finalize(st);
	if (!has_views)
		return err_set(e, ERR_USAGE, QUERY_SQL_NO_CACHE);
	return 0;
}

static int timed_out(double timeout_s, struct err *e)
{
	char t[JSONOUT_REAL_MAX];

	jsonout_format_real(t, timeout_s);
	return err_set(e, ERR_DATA, "The statement ran longer than %s s", t);
}

/* Whether name (possibly "main.name") is a view this dsight writes. */
static int known_view(const char *name)
{
	if (!strncasecmp(name, "main.", 5))
		name += 5;
	for (size_t k = 0; k < store_view_doc_count; k++)
		if (!strcasecmp(store_view_docs[k].name, name))
			return 1;
	return 0;
}

/* The nvtx column SQLite's message msg ("no such column: [X.]name")
 * names when the cache predates it; NULL otherwise. */
static const char *new_column(const struct sqlctx *c, const char *msg)
{
	const char *col;

	if (strncmp(msg, "no such column: ", 16))
		return NULL;
	col = strrchr(msg + 16, '.');
	col = col ? col + 1 : msg + 16;
	if (c->lacks_threads && !strcmp(col, "thread_name"))
		return "thread_name";
	if (c->lacks_depth && !strcmp(col, "depth"))
		return "depth";
	return NULL;
}

/* The error of a failed prepare or step. */
static int sql_error(sqlite3 *db, const struct sqlctx *c, double timeout_s,
                     struct err *e)
{
	const char *col;

	if (c->clock.expired == 2)
		return err_set(e, ERR_DATA, "The session is stopping; the "
		               "statement was interrupted");
	if (c->clock.expired == 3)
		return err_set(e, ERR_DATA, "The client went away; the "
		               "statement was interrupted");
	if (c->clock.expired)
		return timed_out(timeout_s, e);
	if (c->auth.denied[0])
		return err_set(e, ERR_USAGE, "%s", c->auth.denied);
	switch (sqlite3_errcode(db)) {
	case SQLITE_NOMEM:
		return err_set(e, ERR_DATA, "The statement needs more memory "
		               "than sql allows (%d MiB)",
		               (int)(QUERY_SQL_HEAP_MAX >> 20));
	case SQLITE_FULL:
		return err_set(e, ERR_DATA, "The statement needs more temporary "
		               "storage than sql allows (%d MiB)",
		               (int)(QTEMPVFS_CAP >> 20));
	case SQLITE_TOOBIG:
		return err_set(e, ERR_USAGE, "A value of the statement is longer "
		               "than sql allows (%d MiB)",
		               (int)(QUERY_SQL_VALUE_MAX >> 20));
	default:
		if (!strncmp(sqlite3_errmsg(db), "no such table: ", 15) &&
		    known_view(sqlite3_errmsg(db) + 15))
			/* a view newer than the cache */
			return err_set(e, ERR_USAGE, "%s (the cache was built "
			               "by an older dsight: run dsight build "
			               "again to add this view)",
			               sqlite3_errmsg(db));
		if ((col = new_column(c, sqlite3_errmsg(db))))
			return err_set(e, ERR_USAGE, "%s (the cache was built "
			               "by an older dsight: run dsight build "
			               "again to add nvtx.%s)",
			               sqlite3_errmsg(db), col);
		if (!strncmp(sqlite3_errmsg(db), "no such function: ", 18))
			/* on the allow-list, newer than the linked SQLite */
			return err_set(e, ERR_USAGE, "%s (the linked SQLite is %s)",
			               sqlite3_errmsg(db), sqlite3_libversion());
		return err_set(e, ERR_USAGE, "%s", sqlite3_errmsg(db));
	}
}

/* A connection set up for statements: opened, its functions and virtual
 * tables installed, the authorizer and progress handler on. */
struct sqlconn {
	sqlite3 *db;
	struct sqlctx c;            /* borrowed by db: never moved */
	const struct qsqlmem *mem;  /* what its virtual tables serve, or NULL */
	int agg;                    /* its SQLite adds as qsqlagg does */
};

struct query_sql_pool {
	pthread_mutex_t lock;
	struct sqlconn *idle[QUERY_SQL_POOL_MAX];
	size_t n;
	unsigned long long native; /* statements qsqlagg answered */
};

struct query_sql_cursor {
	struct sqlconn *conn;
	sqlite3 *db;           /* conn->db */
	struct query_sql_pool *pool; /* where conn goes back, or NULL */
	sqlite3_stmt *st;
	struct sqlctx *c;      /* &conn->c */
	double timeout_s;
	int64_t max_rows;
	int64_t rows;          /* rows written so far */
	int ncol;
	int pending;           /* st holds a stepped row not written yet */
	int done, truncated;
	/* a grouped aggregate the engine computes itself (qsqlagg.h):
	 * shape read (has_shape), then computed on the first batch (tried),
	 * its rows served from agg when that succeeded (use_agg) */
	struct qsqlshape shape;
	struct qsqlagg_result agg;
	int has_shape, tried, use_agg;
	size_t agg_row;
};

void query_sql_columns(const struct query_sql_cursor *cur, struct buf *out)
{
	buf_putc(out, '[');
	for (int k = 0; k < cur->ncol; k++) {
		const char *name = sqlite3_column_name(cur->st, k);
		if (k)
			buf_putc(out, ',');
		if (name)
			put_text(out, name, strlen(name));
		else
			buf_puts(out, "null");
	}
	buf_putc(out, ']');
}

int64_t query_sql_row_count(const struct query_sql_cursor *cur)
{
	return cur->rows;
}

int query_sql_truncated(const struct query_sql_cursor *cur)
{
	return cur->truncated;
}

int query_sql_done(const struct query_sql_cursor *cur)
{
	return cur->done;
}

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Writes the stepped row at out (mark = out->len): 1 written, 0 it does
 * not fit the batch (rolled back; it waits for the next one), -1 it is
 * longer than row_max (rolled back). */
static int put_row(struct query_sql_cursor *cur, struct buf *out,
                   size_t batch, size_t budget, size_t row_max, int first)
{
	size_t mark = out->len;
	const struct qsqlmem_val *cells = cur->use_agg ? cur->agg.cells +
	        cur->agg_row * (size_t)cur->agg.ncol : NULL;

	if (!first)
		buf_putc(out, ',');
	buf_putc(out, '[');
	for (int k = 0; k < cur->ncol; k++) {
		/* stop before a value that cannot fit (bounds memory); the
		 * size of text and blobs only: asking a number for its size
		 * would convert it */
		struct cell cell = cell_at(cur->st, cells, k);
		int type = cell_type(&cell);
		size_t nb = type == SQLITE_TEXT || type == SQLITE_BLOB
		                    ? cell_bytes(&cell) : 0;
		size_t used = out->len - mark;
		if (nb > row_max || used + nb > row_max) {
			out->len = mark;
			return -1;
		}
		if (!first && out->len - batch + nb > budget) {
			out->len = mark;
			return 0;
		}
		if (k)
			buf_putc(out, ',');
		put_value(out, &cell);
	}
	buf_putc(out, ']');
	if (out->len - mark > row_max) {
		out->len = mark;
		return -1;
	}
	if (!first && out->len - batch > budget) {
		out->len = mark;
		return 0;
	}
	return 1;
}

int query_sql_next(struct query_sql_cursor *cur, struct buf *out,
                   size_t budget, size_t row_max, double flush_s,
                   struct err *e)
{
	size_t batch = out->len;
	int64_t n = 0;
	double t0 = flush_s > 0 ? now_s() : 0;
	int rc = 0;

	qsqlfn_clock_resume(&cur->c->clock);
	if (cur->has_shape && !cur->tried) {
		int r = qsqlagg_run(cur->conn->mem, &cur->shape, &cur->c->clock,
		                    &cur->agg);
		cur->tried = 1;
		cur->use_agg = r == 0 && cur->agg.ncol == cur->ncol;
		if (cur->use_agg && cur->pool) {
			pthread_mutex_lock(&cur->pool->lock);
			cur->pool->native++;
			pthread_mutex_unlock(&cur->pool->lock);
		}
		if (r == QSQLAGG_STOPPED) {
			cur->done = 1;
			rc = sql_error(cur->db, cur->c, cur->timeout_s, e);
		}
	}
	while (!cur->done) {
		if (!cur->pending && cur->use_agg) {
			if (cur->agg_row == cur->agg.nrows) {
				cur->done = 1;
				break;
			}
			cur->pending = 1;
		} else if (!cur->pending) {
			int s = sqlite3_step(cur->st);
			if (s == SQLITE_DONE) {
				cur->done = 1;
				break;
			}
			if (s != SQLITE_ROW) {
				cur->done = 1;
				rc = sql_error(cur->db, cur->c, cur->timeout_s, e);
				break;
			}
			cur->pending = 1;
		}
		if (cur->rows == cur->max_rows) {
			cur->truncated = cur->done = 1;
			break;
		}
		int put = put_row(cur, out, batch, budget, row_max, n == 0);
		if (out->failed) {
			cur->done = 1;
			rc = err_set(e, ERR_NOMEM, "out of memory writing the rows");
			break;
		}
		if (put < 0) {
			cur->truncated = cur->done = 1;
			break;
		}
		if (put == 0)
			break; /* the batch is full; the row opens the next */
		cur->pending = 0;
		cur->agg_row += cur->use_agg;
		cur->rows++;
		n++;
		if (out->len - batch >= budget)
			break;
		if (flush_s > 0 && !(n & 63) && now_s() - t0 >= flush_s)
			break;
	}
	qsqlfn_clock_pause(&cur->c->clock);
	return rc;
}

/* Steps the cursor and writes the whole answer; caps rows and bytes. */
static int emit(struct query_sql_cursor *cur, struct buf *out, struct err *e)
{
	size_t base = out->len, room;
	int rc;

	buf_puts(out, "{\"columns\":");
	query_sql_columns(cur, out);
	buf_puts(out, ",\"rows\":[");
	/* 64 bytes left for the closing members */
	room = out->len - base + 64 < QUERY_SQL_MAX_BYTES
	               ? QUERY_SQL_MAX_BYTES - (out->len - base) - 64 : 0;
	rc = query_sql_next(cur, out, room, room, 0, e);
	if (rc)
		return rc;
	if (!cur->done) /* a row that does not fit the rest */
		cur->truncated = cur->done = 1;
	buf_puts(out, "],\"row_count\":");
	jsonout_int(out, cur->rows);
	buf_puts(out, cur->truncated ? ",\"truncated\":true}" :
	                               ",\"truncated\":false}");
	return 0;
}

static void conn_close(struct sqlconn *conn)
{
	if (!conn)
		return;
	sqlite3_close(conn->db);
	free(conn);
}

/* Opens and sets up a connection to abs_path, its virtual tables over mem
 * (borrowed, may be NULL): *out is the caller's (conn_close). */
static int conn_open(const char *abs_path, const struct qsqlmem *mem,
                     struct sqlconn **out, struct err *e)
{
	struct sqlconn *conn = calloc(1, sizeof *conn);
	struct sqlctx *c;
	int rc;

	*out = conn;
	if (!conn)
		return err_set(e, ERR_NOMEM, "out of memory");
	c = &conn->c;
	conn->mem = mem;
	c->auth.sql = "";
	if ((rc = connect(abs_path, &conn->db, c, e)) ||
	    (rc = qsqlauth_ready(conn->db, e)) ||
	    (mem && (rc = qsqlvtab_install(conn->db, mem, e))))
		return rc;
	/* DSIGHT_SQL_NATIVE=0: SQLite runs every statement (the tests
	 * compare the two answers) */
	conn->agg = mem && !(getenv("DSIGHT_SQL_NATIVE") &&
	                     !strcmp(getenv("DSIGHT_SQL_NATIVE"), "0")) &&
	            qsqlagg_matches_sqlite(conn->db);
	if (qsqlfn_register(conn->db, &c->clock) != SQLITE_OK)
		return err_set(e, ERR_NOMEM, "cannot set up the sql connection: %s",
		               sqlite3_errmsg(conn->db));
	sqlite3_set_authorizer(conn->db, qsqlauth_check, &c->auth);
	/* every 100 steps: one step can be a function call over a value of
	 * up to QUERY_SQL_VALUE_MAX bytes */
	sqlite3_progress_handler(conn->db, 100, past_deadline, c);
	return 0;
}

struct query_sql_pool *query_sql_pool_new(void)
{
	struct query_sql_pool *p = calloc(1, sizeof *p);

	if (p)
		pthread_mutex_init(&p->lock, NULL);
	return p;
}

void query_sql_pool_free(struct query_sql_pool *p)
{
	if (!p)
		return;
	for (size_t k = 0; k < p->n; k++)
		conn_close(p->idle[k]);
	pthread_mutex_destroy(&p->lock);
	free(p);
}

unsigned long long query_sql_pool_native(struct query_sql_pool *p)
{
	unsigned long long n;

	if (!p)
		return 0;
	pthread_mutex_lock(&p->lock);
	n = p->native;
	pthread_mutex_unlock(&p->lock);
	return n;
}

/* An idle connection of p set up for mem, or NULL (one set up for another
 * mem is closed: the engine loaded since). */
static struct sqlconn *pool_take(struct query_sql_pool *p,
                                 const struct qsqlmem *mem)
{
	struct sqlconn *conn = NULL, *stale = NULL;

	pthread_mutex_lock(&p->lock);
	if (p->n) {
		conn = p->idle[--p->n];
		if (conn->mem != mem) {
			stale = conn;
			conn = NULL;
		}
	}
	pthread_mutex_unlock(&p->lock);
	conn_close(stale);
	return conn;
}

/* Gives conn back to p (its page cache released first), or closes it when
 * p is full. */
static void pool_give(struct query_sql_pool *p, struct sqlconn *conn)
{
	int kept = 0;

	sqlite3_db_release_memory(conn->db);
	pthread_mutex_lock(&p->lock);
	if (p->n < QUERY_SQL_POOL_MAX) {
		p->idle[p->n++] = conn;
		kept = 1;
	}
	pthread_mutex_unlock(&p->lock);
	if (!kept)
		conn_close(conn);
}

void query_sql_close(struct query_sql_cursor *cur)
{
	if (!cur)
		return;
	qsqlagg_result_free(&cur->agg);
	qsqlshape_free(&cur->shape);
	sqlite3_finalize(cur->st);
	/* a statement leaves nothing on its connection (the authorizer allows
	 * reads only), so the next one may use it */
	if (cur->pool && cur->conn && sqlite3_get_autocommit(cur->db))
		pool_give(cur->pool, cur->conn);
	else
		conn_close(cur->conn);
	free(cur);
}

int query_sql_open(const char *abs_path, const char *sql, double timeout_s,
                   int64_t max_rows, const struct query_sql_with *with,
                   struct query_sql_cursor **out, struct err *e)
{
	struct query_sql_cursor *cur = calloc(1, sizeof *cur);
	struct sqlctx *c;
	const char *tail = NULL;
	int rc;

	*out = NULL;
	if (!cur)
		return err_set(e, ERR_NOMEM, "out of memory");
	cur->timeout_s = timeout_s;
	cur->max_rows = max_rows;
	if (with->pool)
		cur->conn = pool_take(with->pool, with->mem);
	if (!cur->conn && (rc = conn_open(abs_path, with->mem, &cur->conn, e)))
		goto fail;
	cur->pool = with->pool;
	cur->db = cur->conn->db;
	c = cur->c = &cur->conn->c;
	c->auth.denied[0] = '\0';
	qsqlfn_clock_start(&c->clock, timeout_s, with->stop);
	c->clock.cancel = with->cancel;
	c->auth.sql = sql;
	if (sqlite3_prepare_v3(cur->db, sql, -1, 0, &cur->st, &tail) !=
	    SQLITE_OK) {
		rc = sql_error(cur->db, c, timeout_s, e);
		goto fail;
	}
	if (!cur->st) {
		rc = err_set(e, ERR_USAGE, "sql needs --sql STATEMENT");
		goto fail;
	}
	if (tail && tail[qsqlauth_skip_blank(tail)]) {
		rc = err_set(e, ERR_USAGE, "Give one SQL statement");
		goto fail;
	}
	if (!sqlite3_stmt_readonly(cur->st)) {
		rc = err_set(e, ERR_USAGE, "sql is read-only: %s",
		             "this statement would write");
		goto fail;
	}
	/* the statement text is the caller's: nothing reads it after this */
	c->auth.sql = "";
	cur->ncol = sqlite3_column_count(cur->st);
	if (cur->conn->agg)
		cur->has_shape = qsqlshape_read(cur->db, sql, &cur->shape);
	qsqlfn_clock_pause(&c->clock);
	*out = cur;
	return 0;
fail:
	if (cur->conn)
		cur->conn->c.auth.sql = "";
	/* a connection that failed to set up is not pooled */
	if (!cur->db)
		cur->pool = NULL;
	query_sql_close(cur);
	return rc;
}

int query_sql_run(const char *abs_path, const char *sql, double timeout_s,
                  int64_t max_rows, const struct query_sql_with *with,
                  struct buf *out, struct err *e)
{
	struct query_sql_cursor *cur;
	int rc = query_sql_open(abs_path, sql, timeout_s, max_rows, with, &cur,
	                        e);

	if (!rc)
		rc = emit(cur, out, e);
	query_sql_close(cur);
	return rc;
}

int query_sql(struct qctx *q)
{
	double t = q->p->has_timeout ? q->p->timeout : QUERY_SQL_TIMEOUT_DEFAULT;
	const char *sql = q->p->sql;
	int rc;

	if (!sql || !*sql)
		return err_set(q->e, ERR_USAGE, "sql needs --sql STATEMENT");
	if (strlen(sql) > QUERY_SQL_TEXT_MAX)
		return err_set(q->e, ERR_USAGE, QUERY_SQL_TOO_LONG);
	if (!isfinite(t) || !(t > 0) || t > QUERY_SQL_TIMEOUT_MAX)
		return err_set(q->e, ERR_USAGE, "timeout must be > 0 and <= 30");
	if (q->p->max_rows < 0 || q->p->max_rows > QUERY_SQL_MAX_ROWS_LIMIT)
		return err_set(q->e, ERR_USAGE,
		               "max_rows must be >= 0 and <= 1000000");
	if (!dataset_has_cache(q->ds))
		return err_set(q->e, ERR_USAGE, QUERY_SQL_NO_CACHE);
	rc = dataset_check_generation(q->ds, q->e);
	if (rc)
		return rc;
	struct query_sql_with with = {q->p->stop, q->p->cancel, q->p->sql_mem,
	                              q->p->sql_pool};
	if (q->p->sql_cursor)
		return query_sql_open(dataset_data_path(q->ds), sql, t,
		                      q->p->max_rows, &with, q->p->sql_cursor,
		                      q->e);
	return query_sql_run(dataset_data_path(q->ds), sql, t,
	                     q->p->max_rows, &with, q->out, q->e);
}
