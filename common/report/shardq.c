/* shardq: whole shards written on a worker thread (see shardq.h). */
#include "report/shardq.h"

#include <stdlib.h>
#include <string.h>

#include "base/vec.h"
#include "report/shard.h"

/* A queued shard: its descriptor, filled by the worker, and the object
 * made for the caller, completed at the end. */
struct pending {
	struct shard_desc d;
	json_t *obj; /* a reference of our own */
};

struct shardq {
	struct shard_writer *w;
	struct pending **v; /* each allocated apart: the worker holds &v[i]->d */
	size_t n, cap;
};

int shardq_open(const char *dir, struct shardq **out, struct err *e)
{
	struct shard_writer_opts o = {dir, 1, 0};
	struct shardq *q = calloc(1, sizeof *q);

	*out = NULL;
	if (!q)
		return err_set(e, ERR_NOMEM, "Out of memory writing catalog shards");
	if (shard_writer_open(&q->w, &o, e)) {
		free(q);
		return e->code;
	}
	*out = q;
	return 0;
}

int shardq_add(struct shardq *q, const char *text, size_t len, uint64_t count,
               const double bounds[4], json_t **out, struct err *e)
{
	struct pending *p = NULL;
	char *copy;

	*out = NULL;
	if (vec_reserve(&q->v, &q->cap, q->n + 1, sizeof *q->v) ||
	    !(p = calloc(1, sizeof *p)) || !(copy = malloc(len ? len : 1))) {
		free(p);
		return err_set(e, ERR_NOMEM, "Out of memory writing catalog shards");
	}
	memcpy(copy, text, len);
	p->d.count = count;
	memcpy(p->d.bounds, bounds, sizeof p->d.bounds);
	if (!(p->obj = shard_desc_json(&p->d))) {
		free(copy);
		free(p);
		return err_set(e, ERR_NOMEM, "Out of memory writing catalog shards");
	}
	q->v[q->n++] = p;
	if (shard_writer_submit(q->w, copy, len, &p->d, e))
		return e->code;
	*out = json_incref(p->obj);
	return 0;
}

int shardq_finish(struct shardq *q, struct err *e)
{
	if (shard_writer_finish(q->w, e))
		return e->code;
	for (size_t i = 0; i < q->n; i++)
		if (shard_desc_set_names(q->v[i]->obj, &q->v[i]->d))
			return err_set(e, ERR_NOMEM, "Out of memory writing catalog shards");
	return 0;
}

void shardq_free(struct shardq *q)
{
	if (!q)
		return;
	/* the worker is stopped before the descriptors it fills are freed */
	shard_writer_free(q->w);
	for (size_t i = 0; i < q->n; i++) {
		json_decref(q->v[i]->obj);
		free(q->v[i]);
	}
	free(q->v);
	free(q);
}
