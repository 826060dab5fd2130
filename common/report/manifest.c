/* manifest: manifest.json writer (see manifest.h). */
#include "report/manifest.h"
#include "ingest/evidence.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/fdio.h"
#include "base/fswalk.h"
#include "base/hash.h"
#include "base/jsonout.h"

json_t *manifest_counts(const json_t *catalog, const uint64_t *elements)
{
	static const char *const keys[] = {"requests", "sessions", "workers",
	                                   "metrics", "profiles", "iterations"};
	json_t *c = json_object();

	for (size_t i = 0; c && i < sizeof keys / sizeof keys[0]; i++) {
		json_t *a = json_object_get(catalog, keys[i]);
		json_int_t n = (json_int_t)json_array_size(a);
		for (int k = 0; elements && k < EVIDENCE_NCOLLECTIONS; k++)
			if (!strcmp(keys[i], evidence_collection_key(k)))
				n += (json_int_t)elements[k];
		json_object_set_new(c, keys[i], json_integer(n));
	}
	return c;
}

static int collect(void *ctx, const char *rel, enum fswalk_type type,
                   struct err *e)
{
	if (type == FSWALK_DIR)
		return 0;
	if (type != FSWALK_FILE)
		return err_set(e, ERR_DATA, "unexpected non-regular file %s in the staged report", rel);
	if (!strcmp(rel, "manifest.json"))
		return 0;
	if (json_array_append_new(ctx, json_string(rel)))
		return err_set(e, ERR_NOMEM, "out of memory");
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The sorted list of every file in dir plus manifest.json. */
static int list_files(const char *dir, json_t **out, struct err *e)
{
	json_t *raw = json_array(), *sorted = json_array();
	const char **names = NULL;
	size_t n, i;
	json_t *v;

	*out = NULL;
	if (!raw || !sorted || json_array_append_new(raw, json_string("manifest.json")))
		goto nomem;
	if (fswalk(dir, collect, raw, e)) {
		json_decref(raw);
		json_decref(sorted);
		return e->code;
	}
	n = json_array_size(raw);
	names = malloc(n * sizeof *names);
	if (!names)
		goto nomem;
	json_array_foreach(raw, i, v)
		names[i] = json_string_value(v);
	qsort(names, n, sizeof *names, cmp_str);
	for (i = 0; i < n; i++)
		if (json_array_append_new(sorted, json_string(names[i])))
			goto nomem;
	free(names);
	json_decref(raw);
	*out = sorted;
	return 0;
nomem:
	free(names);
	json_decref(raw);
	json_decref(sorted);
	return err_set(e, ERR_NOMEM, "out of memory");
}

static json_t *hash_or_null(const char *dir, const char *rel, int required,
                            const cancel_flag *cancel, struct err *e,
                            int *rc)
{
	char path[4096], hex[HASH_HEX_LEN + 1];

	snprintf(path, sizeof path, "%s/%s", dir, rel);
	if (access(path, F_OK) && errno == ENOENT && !required)
		return json_null();
	if ((*rc = hash_sha256_file_cancel(path, hex, NULL, cancel, e)))
		return NULL;
	return json_string(hex);
}

static void copy_key(json_t *m, const json_t *catalog, const char *key)
{
	json_t *v = json_object_get(catalog, key);
	json_object_set_new(m, key, v ? json_deep_copy(v) : json_null());
}

int manifest_write(const char *dir, const json_t *catalog,
                   const struct manifest_info *info, struct err *e)
{
	json_t *m = json_object(), *files = NULL, *data, *html;
	char path[4096];
	struct buf b;
	int rc = 0, fd;

	if (!m)
		return err_set(e, ERR_NOMEM, "out of memory");
	json_object_set_new(m, "generator", json_string(MANIFEST_GENERATOR));
	copy_key(m, catalog, "schema");
	copy_key(m, catalog, "meta");
	copy_key(m, catalog, "audit");
	copy_key(m, catalog, "capabilities");
	json_object_set_new(m, "counts", manifest_counts(catalog, info->elements));
	json_object_set_new(m, "delivery", json_string(info->delivery));
	json_object_set_new(m, "generation", json_string(info->generation));
	data = hash_or_null(dir, info->data_file, 1, info->cancel, e, &rc);
	if (rc)
		goto out;
	json_object_set_new(m, "data_sha256", data);
	html = hash_or_null(dir, "index.html", 0, info->cancel, e, &rc);
	if (rc)
		goto out;
	json_object_set_new(m, "html_sha256", html);
	copy_key(m, catalog, "sources");
	if ((rc = list_files(dir, &files, e)))
		goto out;
	json_object_set_new(m, "files", files);

	buf_init(&b, 0);
	jsonout_tree(&b, m, 1);
	buf_putc(&b, '\n');
	if (b.failed) {
		rc = err_set(e, b.failed == ERR_DATA ? ERR_DATA : ERR_NOMEM,
		             "cannot encode manifest.json");
		buf_free(&b);
		goto out;
	}
	snprintf(path, sizeof path, "%s/manifest.json", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || fdio_write_all(fd, b.data, b.len) || fsync(fd)) {
		rc = err_sys(e, ERR_DATA, "cannot write %s", path);
	}
	if (fd >= 0 && close(fd) && !rc)
		rc = err_sys(e, ERR_DATA, "cannot write %s", path);
	buf_free(&b);
out:
	json_decref(m);
	return rc;
}
