/* dscache: open datasets cached by resolved path (see dscache.h). */
#include "dscache.h"
#include "base/fileid.h"
#include "query/qsqlengine.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	char *path;          /* resolved path of the dataset as given */
	struct dataset *ds;
	struct fileid id;    /* dataset_fileid(ds) */
	struct qsqlengine *sql; /* its sql engine (a cache only), or NULL */
	unsigned long used;  /* LRU clock */
};

struct dscache {
	struct entry *e;
	int n, max;
	int sql_engine;      /* the engines load their columns */
	unsigned long clock;
};

struct dscache *dscache_new(int max, int sql_engine)
{
	struct dscache *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->e = calloc((size_t)max, sizeof *c->e);
	if (!c->e) {
		free(c);
		return NULL;
	}
	c->max = max;
	c->sql_engine = sql_engine;
	return c;
}

static void drop(struct dscache *c, int k)
{
	qsqlengine_free(c->e[k].sql);
	dataset_close(c->e[k].ds);
	free(c->e[k].path);
	c->e[k] = c->e[--c->n];
}

void dscache_free(struct dscache *c)
{
	if (!c)
		return;
	while (c->n)
		drop(c, 0);
	free(c->e);
	free(c);
}

static int find(struct dscache *c, const char *path)
{
	for (int k = 0; k < c->n; k++)
		if (!strcmp(c->e[k].path, path))
			return k;
	return -1;
}

void dscache_forget(struct dscache *c, const char *path)
{
	char real[PATH_MAX];
	int k = find(c, realpath(path, real) ? real : path);
	if (k >= 0)
		drop(c, k);
}

int dscache_get(struct dscache *c, const char *path, struct dataset **out,
                struct qsqlengine **sql, struct err *e)
{
	char real[PATH_MAX];
	const char *key = realpath(path, real) ? real : path;
	struct fileid now;
	int k = find(c, key), rc;

	if (k >= 0) {
		if (fileid_get(dataset_data_path(c->e[k].ds), &now, e) == 0 &&
		    fileid_equal(&now, &c->e[k].id)) {
			c->e[k].used = ++c->clock;
			*out = c->e[k].ds;
			if (sql)
				*sql = c->e[k].sql;
			return 0;
		}
		drop(c, k); /* rebuilt, rewritten or removed: reopen below */
	}
	struct dataset *ds;
	if ((rc = dataset_open(key, &ds, e)) != 0)
		return rc;
	if (c->n == c->max) {
		int old = 0;
		for (k = 1; k < c->n; k++)
			if (c->e[k].used < c->e[old].used)
				old = k;
		drop(c, old);
	}
	char *copy = strdup(key);
	if (!copy) {
		dataset_close(ds);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	c->e[c->n].path = copy;
	c->e[c->n].ds = ds;
	c->e[c->n].id = *dataset_fileid(ds);
	/* NULL when out of memory: statements then open their own */
	c->e[c->n].sql = dataset_has_cache(ds)
	        ? qsqlengine_new(dataset_data_path(ds), c->sql_engine) : NULL;
	c->e[c->n].used = ++c->clock;
	if (sql)
		*sql = c->e[c->n].sql;
	*out = c->e[c->n++].ds;
	return 0;
}
