/* gzpipe: gzip members compressed on a worker thread (see gzpipe.h). */
#include "base/gzpipe.h"

#include <pthread.h>
#include <stdlib.h>

#include "base/fdio.h"
#include "base/gz.h"

struct gzpipe {
	int fd;
	const char *path;
	struct gz gz;          /* the worker's */
	unsigned char *z;      /* the worker's member buffer */
	size_t zcap;
	uint64_t bytes;

	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct buf slot;       /* the member handed over, or empty */
	int full;              /* slot holds a member not yet written */
	int closing;
	int failed;            /* the worker's error is in err */
	struct err err;
	pthread_t thread;
};

static void *worker_main(void *arg)
{
	struct gzpipe *p = arg;
	struct err e;
	size_t n;

	pthread_mutex_lock(&p->mu);
	for (;;) {
		while (!p->full && !p->closing)
			pthread_cond_wait(&p->cv, &p->mu);
		if (!p->full)
			break;
		pthread_mutex_unlock(&p->mu);
		/* the slot is the worker's until full is cleared */
		int rc = p->failed ? 0 :
		         gz_member(&p->gz, p->slot.data, p->slot.len, &p->z,
		                   &p->zcap, &n, "the document", &e);
		if (!rc && !p->failed && fdio_write_all(p->fd, p->z, n) != 0)
			rc = err_sys(&e, ERR_DATA, "cannot write %s", p->path);
		pthread_mutex_lock(&p->mu);
		if (rc && !p->failed) {
			p->failed = 1;
			p->err = e;
		} else if (!rc && !p->failed) {
			p->bytes += n;
		}
		p->full = 0;
		pthread_cond_broadcast(&p->cv);
	}
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int gzpipe_open(int fd, const char *path, int level, struct gzpipe **out,
                struct err *e)
{
	struct gzpipe *p = calloc(1, sizeof *p);

	*out = NULL;
	if (!p)
		return err_set(e, ERR_NOMEM, "out of memory");
	p->fd = fd;
	p->path = path;
	gz_init(&p->gz, level);
	buf_init(&p->slot, 0);
	err_clear(&p->err);
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	if (pthread_create(&p->thread, NULL, worker_main, p) != 0) {
		pthread_mutex_destroy(&p->mu);
		pthread_cond_destroy(&p->cv);
		free(p);
		return err_set(e, ERR_DATA, "cannot start a thread for %s", path);
	}
	*out = p;
	return 0;
}

/* Waits until the slot is free; with the lock held. */
static void wait_free(struct gzpipe *p)
{
	while (p->full)
		pthread_cond_wait(&p->cv, &p->mu);
}

int gzpipe_put(struct gzpipe *p, struct buf *text, struct err *e)
{
	struct buf t;

	pthread_mutex_lock(&p->mu);
	wait_free(p);
	if (p->failed) {
		*e = p->err;
		pthread_mutex_unlock(&p->mu);
		return e->code;
	}
	t = p->slot;
	p->slot = *text;
	*text = t;
	buf_reset(text);
	p->full = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return 0;
}

int gzpipe_finish(struct gzpipe *p, uint64_t *bytes, struct err *e)
{
	int rc = 0;

	pthread_mutex_lock(&p->mu);
	wait_free(p);
	if (p->failed) {
		*e = p->err;
		rc = e->code;
	}
	*bytes = p->bytes;
	pthread_mutex_unlock(&p->mu);
	return rc;
}

void gzpipe_free(struct gzpipe *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->mu);
	p->closing = 1;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	gz_free(&p->gz);
	free(p->z);
	buf_free(&p->slot);
	free(p);
}
