/* qsqlengine: the sql engine of one open cache (see qsqlengine.h). */
#include "query/qsqlengine.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "query/qsqlmem.h"
#include "query/query_sql.h"

enum { MEM_OFF, MEM_LOADING, MEM_READY, MEM_DECLINED, MEM_FAILED };

struct qsqlengine {
	char *data_path;
	int with_mem;
	pthread_mutex_t lock;       /* guards loader_started */
	pthread_t loader;
	int loader_started;
	atomic_int state;
	struct qsqlmem *mem;        /* written by the loader before READY */
	cancel_flag stop_load;
	struct query_sql_pool *pool; /* NULL: each statement opens its own */
};

struct qsqlengine *qsqlengine_new(const char *data_path, int with_mem)
{
	struct qsqlengine *g = calloc(1, sizeof *g);

	if (!g)
		return NULL;
	if (!(g->data_path = strdup(data_path))) {
		free(g);
		return NULL;
	}
	g->with_mem = with_mem;
	pthread_mutex_init(&g->lock, NULL);
	atomic_init(&g->state, MEM_OFF);
	g->pool = query_sql_pool_new();
	return g;
}

/* The loader thread: g's columns, or the state saying why none. */
static void *load(void *arg)
{
	struct qsqlengine *g = arg;
	struct err e;
	int rc;

	err_clear(&e);
	rc = qsqlmem_load(g->data_path, &g->stop_load, &g->mem, &e);
	atomic_store(&g->state, rc == 0 ? MEM_READY
	                        : rc == QSQLMEM_DECLINED ? MEM_DECLINED
	                                                 : MEM_FAILED);
	return NULL;
}

void qsqlengine_use(struct qsqlengine *g, struct query_params *p)
{
	if (!g || !p->kind || strcmp(p->kind, "sql"))
		return;
	if (g->with_mem) {
		pthread_mutex_lock(&g->lock);
		if (!g->loader_started) {
			atomic_store(&g->state, MEM_LOADING);
			if (pthread_create(&g->loader, NULL, load, g) == 0)
				g->loader_started = 1;
			else
				atomic_store(&g->state, MEM_FAILED);
		}
		pthread_mutex_unlock(&g->lock);
		if (atomic_load(&g->state) == MEM_READY)
			p->sql_mem = g->mem;
	}
	p->sql_pool = g->pool;
}

unsigned long long qsqlengine_native(const struct qsqlengine *g)
{
	return g ? query_sql_pool_native(g->pool) : 0;
}

const char *qsqlengine_state(const struct qsqlengine *g)
{
	static const char *const names[] = {"off", "loading", "ready",
	                                    "declined", "failed"};

	return names[g ? atomic_load(&((struct qsqlengine *)g)->state)
	               : MEM_OFF];
}

void qsqlengine_free(struct qsqlengine *g)
{
	if (!g)
		return;
	if (g->loader_started) {
		g->stop_load = 1;
		pthread_join(g->loader, NULL);
	}
	/* the pool's connections may hold virtual tables over mem */
	query_sql_pool_free(g->pool);
	qsqlmem_free(g->mem);
	pthread_mutex_destroy(&g->lock);
	free(g->data_path);
	free(g);
}
