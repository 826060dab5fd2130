/* session: the warm dataset and its generations (see session.h). */
#include "session.h"
#include "query/dataset.h"
#include "query/qsqlengine.h"
#include "webgen.h"
#include "base/fileid.h"
#include "base/vec.h"

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct session_gen {
	atomic_int refs;
	struct dataset *ds;     /* the handle opened first: catalog and id */
	char *id;
	char *data_path;
	struct fileid ident;    /* dataset_fileid(ds): the file this serves */
	pthread_mutex_t lock;   /* guards the pool */
	struct dataset **pool;  /* idle per-thread handles */
	size_t npool, cap;
	struct webgen *web;     /* the viewer files (sessions with --http) */
	struct qsqlengine *sql; /* the sql engine of data_path (NULL: none) */
};

struct session {
	char *report;
	int web;                /* load each generation's viewer files */
	int sql_engine;         /* generations may load the sql engine */
	struct session_gen *cur;
};

#define WEB_TRIES 3 /* a report rebuilt between opening its data and its files */

static int gen_open_data(const char *report, int sql_engine,
                         struct session_gen **out, struct err *e);

static void gen_free(struct session_gen *g)
{
	qsqlengine_free(g->sql);
	for (size_t k = 0; k < g->npool; k++)
		dataset_close(g->pool[k]);
	free(g->pool);
	dataset_close(g->ds);
	webgen_free(g->web);
	pthread_mutex_destroy(&g->lock);
	free(g->id);
	free(g->data_path);
	free(g);
}

/* Opens a generation of report; *out holds one reference.  web: its
 * viewer files too, from the same generation (a report rebuilt in between
 * is opened again); sql_engine: as gen_open_data takes it. */
static int gen_open(const char *report, int web, int sql_engine,
                    struct session_gen **out, struct err *e)
{
	for (int tries = 1;; tries++) {
		struct session_gen *g = NULL;
		int rc;
		if (gen_open_data(report, sql_engine, &g, e))
			return e->code;
		if (!web) {
			*out = g;
			return 0;
		}
		rc = webgen_load(report, g->data_path, g->ident.dev, g->ident.ino, &g->web, e);
		if (rc == ERR_DATA && tries >= WEB_TRIES)
			rc = webgen_none("The report is being rebuilt; reload in a moment", &g->web, e);
		if (rc == 0) {
			*out = g;
			return 0;
		}
		gen_free(g);
		if (rc != ERR_DATA)
			return rc;
		err_clear(e);
	}
}

/* The data of a generation (catalog, database) and, for a cache, its sql
 * engine (sql_engine 0: its connection pool only); *out holds one
 * reference. */
static int gen_open_data(const char *report, int sql_engine,
                         struct session_gen **out, struct err *e)
{
	struct session_gen *g = calloc(1, sizeof *g);
	if (!g)
		return err_set(e, ERR_NOMEM, "Out of memory");
	pthread_mutex_init(&g->lock, NULL);
	atomic_init(&g->refs, 1);
	if (dataset_open(report, &g->ds, e)) {
		pthread_mutex_destroy(&g->lock);
		free(g);
		return e->code;
	}
	g->id = strdup(dataset_generation(g->ds));
	g->data_path = strdup(dataset_data_path(g->ds));
	if (!g->id || !g->data_path) {
		gen_free(g);
		return err_set(e, ERR_NOMEM, "Out of memory");
	}
	g->ident = *dataset_fileid(g->ds);
	/* NULL (out of memory, or a document): statements open their own */
	g->sql = dataset_has_cache(g->ds)
	                 ? qsqlengine_new(g->data_path, sql_engine) : NULL;
	*out = g;
	return 0;
}

int session_open(const char *report, int web, int sql_engine,
                 struct session **out, struct err *e)
{
	char abs[PATH_MAX];
	struct session *s;

	if (!realpath(report, abs))
		return err_sys(e, ERR_DATA, "Cannot open %s", report);
	s = calloc(1, sizeof *s);
	if (!s || !(s->report = strdup(abs))) {
		free(s);
		return err_set(e, ERR_NOMEM, "Out of memory");
	}
	s->web = web;
	s->sql_engine = sql_engine;
	if (gen_open(s->report, web, sql_engine, &s->cur, e)) {
		free(s->report);
		free(s);
		return e->code;
	}
	*out = s;
	return 0;
}

void session_close(struct session *s)
{
	if (!s)
		return;
	session_release(s->cur);
	free(s->report);
	free(s);
}

const char *session_report(const struct session *s)
{
	return s->report;
}

const char *session_generation(const struct session *s)
{
	return s->cur->id;
}

int session_changed(const struct session *s)
{
	struct fileid now;
	return fileid_get(s->cur->data_path, &now, NULL) != 0 ||
	       !fileid_equal(&now, &s->cur->ident);
}

int session_load(const struct session *s, struct session_gen **out,
                 struct err *e)
{
	if (gen_open(s->report, s->web, s->sql_engine, out, e))
		return err_prefix(e, "The report changed but its new generation could not be opened "
		                     "(the next request will try again)");
	return 0;
}

void session_install(struct session *s, struct session_gen *g)
{
	session_release(s->cur);
	s->cur = g;
}

struct session_gen *session_acquire(struct session *s)
{
	atomic_fetch_add(&s->cur->refs, 1);
	return s->cur;
}

void session_release(struct session_gen *g)
{
	if (g && atomic_fetch_sub(&g->refs, 1) == 1)
		gen_free(g);
}

const char *session_gen_id(const struct session_gen *g)
{
	return g->id;
}

const struct webgen *session_gen_web(const struct session_gen *g)
{
	return g->web;
}

/* Takes an idle handle of g, or clones a new one. */
static int take_handle(struct session_gen *g, struct dataset **out, struct err *e)
{
	int rc = 0;
	pthread_mutex_lock(&g->lock);
	if (g->npool > 0)
		*out = g->pool[--g->npool];
	else
		rc = dataset_clone(g->ds, out, e);
	pthread_mutex_unlock(&g->lock);
	return rc;
}

static void give_handle(struct session_gen *g, struct dataset *ds)
{
	pthread_mutex_lock(&g->lock);
	if (vec_reserve(&g->pool, &g->cap, g->npool + 1, sizeof *g->pool)) {
		pthread_mutex_unlock(&g->lock);
		dataset_close(ds);
		return;
	}
	g->pool[g->npool++] = ds;
	pthread_mutex_unlock(&g->lock);
}

const char *session_sql_engine(const struct session *s)
{
	return qsqlengine_state(s->cur->sql);
}

unsigned long long session_sql_native(const struct session *s)
{
	return qsqlengine_native(s->cur->sql);
}

int session_gen_query(struct session_gen *g, const struct query_params *p,
                      struct buf *out, struct err *e)
{
	struct query_params q = *p;
	struct dataset *ds;
	int rc;

	qsqlengine_use(g->sql, &q);
	if (take_handle(g, &ds, e))
		return e->code;
	rc = query_run(ds, &q, out, e);
	if (rc == 0 && out->failed)
		rc = err_set(e, out->failed, "Query output failed");
	give_handle(g, ds);
	return rc;
}
