/*
 * dsapi: the C interface of libdsight.so for language bindings (see
 * dsapi.h).  A thin edge over dataset_open / query_params_from_json /
 * query_run: the same calls the daemon makes for a `query` request.
 */
#include "dsapi.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/fileid.h"
#include "base/utf8.h"
#include "address.h"
#include "query/dataset.h"
#include "query/qdoc.h"
#include "query/qparams.h"
#include "query/qsqlengine.h"
#include "query/query.h"

struct dsapi {
	char *path;          /* as given to dsapi_open (owned) */
	struct dataset *ds;  /* owned */
	/* the connections sql statements reuse (a cache only; owned, NULL:
	 * none): no columns are loaded into the caller's process */
	struct qsqlengine *sql;
};

/* h's engine for its current dataset (NULL when out of memory: each
 * statement then opens its own connection). */
static void set_engine(struct dsapi *h)
{
	qsqlengine_free(h->sql);
	h->sql = dataset_has_cache(h->ds)
	                 ? qsqlengine_new(dataset_data_path(h->ds), 0) : NULL;
}

/* Copies e's message into msg (cut on a character boundary) and returns
 * its code. */
static int fail(const struct err *e, int code, char *msg, size_t msglen)
{
	if (msg && msglen) {
		size_t n = strlen(e->msg);
		n = utf8_cut(e->msg, n, msglen - 1);
		memcpy(msg, e->msg, n);
		msg[n] = '\0';
	}
	return code;
}

static int nomem(char *msg, size_t msglen)
{
	struct err e;
	return fail(&e, err_set(&e, ERR_NOMEM, "out of memory"), msg, msglen);
}

int dsapi_open(const char *path, struct dsapi **out, char *msg, size_t msglen)
{
	struct dsapi *h;
	struct err e;
	int rc;

	*out = NULL;
	err_clear(&e);
	if (!path)
		return fail(&e, err_set(&e, ERR_USAGE, "a dataset path is "
		            "required"), msg, msglen);
	h = calloc(1, sizeof *h);
	if (!h || !(h->path = strdup(path))) {
		free(h);
		return nomem(msg, msglen);
	}
	rc = dataset_open(path, &h->ds, &e);
	if (rc) {
		free(h->path);
		free(h);
		return fail(&e, rc, msg, msglen);
	}
	set_engine(h);
	*out = h;
	return 0;
}

int dsapi_clone(struct dsapi *h, struct dsapi **out, char *msg, size_t msglen)
{
	struct dsapi *c;
	struct err e;
	int rc;

	*out = NULL;
	err_clear(&e);
	c = calloc(1, sizeof *c);
	if (!c || !(c->path = strdup(h->path))) {
		free(c);
		return nomem(msg, msglen);
	}
	rc = dataset_clone(h->ds, &c->ds, &e);
	if (rc) {
		free(c->path);
		free(c);
		return fail(&e, rc, msg, msglen);
	}
	set_engine(c);
	*out = c;
	return 0;
}

void dsapi_close(struct dsapi *h)
{
	if (!h)
		return;
	qsqlengine_free(h->sql);
	dataset_close(h->ds);
	free(h->path);
	free(h);
}

/* Reopens h->path when its data file is no longer the one opened (a
 * rebuilt report).  A file that cannot be stat'ed (a rebuild in progress,
 * the report removed) is left to the query, which still reads the open
 * generation or fails with its own message. */
static int refresh(struct dsapi *h, struct err *e)
{
	struct fileid now;
	struct err ignored;
	struct dataset *fresh = NULL;
	int rc;

	if (fileid_get(dataset_data_path(h->ds), &now, &ignored) != 0 ||
	    fileid_equal(&now, dataset_fileid(h->ds)))
		return 0;
	rc = dataset_open(h->path, &fresh, e);
	if (rc)
		return rc;
	dataset_close(h->ds);
	h->ds = fresh;
	set_engine(h);
	return 0;
}

int dsapi_query(struct dsapi *h, const char *params, char **out,
                size_t *outlen, char *msg, size_t msglen)
{
	struct query_params p;
	struct err e;
	struct buf b;
	json_t *j = NULL;
	json_error_t je;
	int rc;

	*out = NULL;
	*outlen = 0;
	err_clear(&e);
	query_params_init(&p);
	if (params && *params) {
		/* NUL is allowed here so that the parameter decoder names
		 * the parameter that holds one */
		j = json_loads(params, JSON_ALLOW_NUL, &je);
		if (!j || !json_is_object(j)) {
			json_decref(j);
			return fail(&e, err_set(&e, ERR_USAGE, "query parameters "
			            "must be a JSON object"), msg, msglen);
		}
	}
	if (j && (rc = query_params_from_json(j, &p, &e)) != 0)
		goto done;
	if ((rc = refresh(h, &e)) != 0)
		goto done;
	buf_init(&b, 0);
	qsqlengine_use(h->sql, &p);
	rc = query_run(h->ds, &p, &b, &e);
	if (!rc && b.failed)
		rc = err_set(&e, ERR_NOMEM, "out of memory");
	if (!rc) {
		buf_putc(&b, '\0');
		if (b.failed) {
			rc = err_set(&e, ERR_NOMEM, "out of memory");
		} else {
			*out = buf_detach(&b, outlen);
			(*outlen)--;
		}
	}
	buf_free(&b);
done:
	query_params_free(&p);
	json_decref(j);
	return rc ? fail(&e, rc, msg, msglen) : 0;
}

int dsapi_resolve(const char *addr, char *path, size_t pathlen, char *shown,
                  size_t shownlen, char *msg, size_t msglen)
{
	struct address a;
	struct err e;
	int rc;

	err_clear(&e);
	if (!addr)
		return fail(&e, err_set(&e, ERR_USAGE, "a session name or socket "
		            "path is required"), msg, msglen);
	rc = address_resolve(addr, 0, &a, &e);
	if (rc)
		return fail(&e, rc, msg, msglen);
	if (strlen(a.path) >= pathlen)
		return fail(&e, err_set(&e, ERR_USAGE, "socket path buffer too "
		            "small"), msg, msglen);
	strcpy(path, a.path);
	address_not_live(&a, shown, shownlen);
	return 0;
}

const char *dsapi_generation(struct dsapi *h)
{
	return dataset_generation(h->ds);
}

char *dsapi_describe(void)
{
	struct buf b;
	size_t n;

	buf_init(&b, 0);
	qdoc_describe_json(&b);
	buf_putc(&b, '\0');
	if (b.failed) {
		buf_free(&b);
		return NULL;
	}
	return buf_detach(&b, &n);
}

const char *dsapi_version(void)
{
	return DSIGHT_VERSION;
}

void dsapi_free(char *p)
{
	free(p);
}
