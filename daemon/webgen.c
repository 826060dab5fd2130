/* webgen: the viewer files of a generation (see webgen.h). */
#include "webgen.h"
#include "base/vec.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MANIFEST_MAX ((size_t)64 << 20) /* a manifest larger than this is refused */
#define HEAD_SCAN 65536                  /* <head> must be in the first 64 KiB */

struct webgen {
	char *reason;     /* no viewer: why */
	int dirfd;
	int index_fd;
	uint64_t index_size;
	uint64_t marker_at;
	char **files;     /* sorted */
	size_t nfiles, cap;
};

static int no_viewer(struct webgen *w, const char *fmt, const char *arg)
{
	char m[600];
	snprintf(m, sizeof m, fmt, arg);
	free(w->reason);
	w->reason = strdup(m);
	return w->reason ? 0 : -1;
}

/* 1 for the names a browser may fetch: detail/<hex>.json.gz, parts.json,
 * part-NNN.html (nothing with a slash beyond detail/, no dot files). */
static int servable(const char *rel)
{
	if (!strcmp(rel, "parts.json"))
		return 1;
	if (!strncmp(rel, "part-", 5)) {
		const char *p = rel + 5;
		size_t n = strspn(p, "0123456789");
		return n > 0 && !strcmp(p + n, ".html");
	}
	if (!strncmp(rel, "detail/", 7)) {
		const char *p = rel + 7;
		size_t n = strspn(p, "0123456789abcdef");
		return n > 0 && n <= 128 && !strcmp(p + n, ".json.gz");
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Reads the whole manifest (at most MANIFEST_MAX). */
static json_t *read_manifest(int dirfd)
{
	int fd = openat(dirfd, "manifest.json", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	json_t *j = NULL;
	char *buf;
	size_t got = 0;
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size > MANIFEST_MAX ||
	    !(buf = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);
		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			break;
		}
		got += (size_t)n;
	}
	if (got == (size_t)st.st_size)
		j = json_loadb(buf, got, 0, NULL);
	free(buf);
	close(fd);
	return j;
}

/* Finds the end of "<head>" (or "<head ...>") in the first bytes. */
static uint64_t find_marker(int fd, uint64_t size)
{
	char *buf = malloc(HEAD_SCAN + 1);
	uint64_t at = 0;
	ssize_t n = buf ? pread(fd, buf, size < HEAD_SCAN ? (size_t)size : HEAD_SCAN, 0) : -1;
	if (n <= 0) {
		free(buf);
		return 0;
	}
	buf[n] = 0;
	for (char *p = buf; !at && (p = strstr(p, "<head")) != NULL; p += 5) {
		if (p[5] == '>' || p[5] == ' ') {
			char *gt = memchr(p, '>', (size_t)(buf + n - p));
			if (gt)
				at = (uint64_t)(gt + 1 - buf);
		}
	}
	free(buf);
	return at;
}

static int load_files(struct webgen *w, const json_t *files)
{
	size_t k;
	json_t *v;
	json_array_foreach(files, k, v) {
		const char *rel = json_string_value(v);
		if (!rel || !servable(rel))
			continue;
		if (vec_reserve(&w->files, &w->cap, w->nfiles + 1, sizeof *w->files))
			return -1;
		if (!(w->files[w->nfiles] = strdup(rel)))
			return -1;
		w->nfiles++;
	}
	if (w->nfiles)
		qsort(w->files, w->nfiles, sizeof *w->files, cmp_str);
	return 0;
}

int webgen_load(const char *report, const char *generation,
                struct webgen **out, struct err *e)
{
	struct webgen *w = calloc(1, sizeof *w);
	struct stat st;
	json_t *m = NULL;
	int rc = 0;

	if (!w)
		return err_set(e, ERR_NOMEM, "Out of memory");
	w->dirfd = w->index_fd = -1;
	w->dirfd = open(report, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (w->dirfd < 0) {
		rc = no_viewer(w, "This session serves %s, a file with no viewer: build a report "
		                  "directory (dsight build ... -o DIR) and serve that to browse it", report);
		goto done;
	}
	m = read_manifest(w->dirfd);
	if (!json_is_object(m)) {
		rc = no_viewer(w, "%s has no readable manifest.json, so it has no viewer to serve: "
		                  "rebuild it with dsight build", report);
		goto done;
	}
	const char *mg = json_string_value(json_object_get(m, "generation"));
	if (!mg || strcmp(mg, generation) != 0) {
		rc = err_set(e, ERR_DATA, "%s changed while its generation was being opened", report);
		goto done;
	}
	w->index_fd = openat(w->dirfd, "index.html", O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (w->index_fd < 0 || fstat(w->index_fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		rc = no_viewer(w, "%s has no index.html (it was built without a viewer): rebuild it "
		                  "with dsight build to browse it", report);
		goto done;
	}
	w->index_size = (uint64_t)st.st_size;
	w->marker_at = find_marker(w->index_fd, w->index_size);
	if (json_is_array(json_object_get(m, "files")) &&
	    load_files(w, json_object_get(m, "files")))
		rc = err_set(e, ERR_NOMEM, "Out of memory");
done:
	json_decref(m);
	if (rc < 0)
		rc = err_set(e, ERR_NOMEM, "Out of memory");
	if (rc) {
		webgen_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int webgen_none(const char *reason, struct webgen **out, struct err *e)
{
	struct webgen *w = calloc(1, sizeof *w);
	if (!w || !(w->reason = strdup(reason))) {
		free(w);
		return err_set(e, ERR_NOMEM, "Out of memory");
	}
	w->dirfd = w->index_fd = -1;
	*out = w;
	return 0;
}

void webgen_free(struct webgen *w)
{
	if (!w)
		return;
	for (size_t k = 0; k < w->nfiles; k++)
		free(w->files[k]);
	free(w->files);
	if (w->index_fd >= 0)
		close(w->index_fd);
	if (w->dirfd >= 0)
		close(w->dirfd);
	free(w->reason);
	free(w);
}

const char *webgen_reason(const struct webgen *w)
{
	return w->reason;
}

int webgen_index_fd(const struct webgen *w)
{
	return w->index_fd;
}

uint64_t webgen_index_size(const struct webgen *w)
{
	return w->index_size;
}

uint64_t webgen_marker_at(const struct webgen *w)
{
	return w->marker_at;
}

int webgen_has(const struct webgen *w, const char *rel)
{
	if (w->reason || !w->nfiles)
		return 0;
	return bsearch(&rel, w->files, w->nfiles, sizeof *w->files, cmp_str) != NULL;
}

int webgen_open(const struct webgen *w, const char *rel)
{
	return openat(w->dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
}
