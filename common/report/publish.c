/* publish: output validation, lock, staging, atomic exchange (see
 * publish.h). */
#include "report/publish.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/fswalk.h"

#define GENERATOR "srtctl-trace"

struct publish {
	char *output;  /* absolute */
	char *parent;  /* absolute directory holding the output */
	char *name;    /* last component */
	char *lock_path;
	int lock_fd;
	char *staging; /* NULL once committed or removed */
};

/* ---- paths ---- */

static char *str_printf(const char *fmt, const char *a, const char *b)
{
	size_t n = strlen(fmt) + strlen(a) + strlen(b) + 1;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, fmt, a, b);
	return s;
}

/* Splits output into its absolute parent directory and last component,
 * refusing a symlink.  *parent and *name are owned by the caller. */
static int resolve_output(const char *output, char **parent, char **name,
                          int *exists, struct err *e)
{
	char *copy, *slash, *dir;
	struct stat st;
	size_t n;

	*parent = *name = NULL;
	if (!*output)
		return err_set(e, ERR_USAGE, "the output path is empty");
	copy = strdup(output);
	if (!copy)
		return err_set(e, ERR_NOMEM, "out of memory");
	n = strlen(copy);
	while (n > 1 && copy[n - 1] == '/')
		copy[--n] = '\0';
	if (lstat(copy, &st) == 0) {
		*exists = 1;
		if (S_ISLNK(st.st_mode)) {
			err_set(e, ERR_USAGE,
			        "refusing to write the report to %s: it is a symbolic link",
			        output);
			free(copy);
			return e->code;
		}
		if (!S_ISDIR(st.st_mode)) {
			err_set(e, ERR_USAGE,
			        "refusing to write the report to %s: it exists and is not a directory",
			        output);
			free(copy);
			return e->code;
		}
		char *abs = realpath(copy, NULL);
		free(copy);
		if (!abs)
			return err_sys(e, ERR_DATA, "cannot resolve %s", output);
		if (!strcmp(abs, "/")) {
			free(abs);
			return err_set(e, ERR_USAGE,
			               "refusing to write the report to /");
		}
		slash = strrchr(abs, '/');
		*name = strdup(slash + 1);
		*slash = '\0';
		*parent = strdup(*abs ? abs : "/");
		free(abs);
	} else {
		if (errno != ENOENT) {
			err_sys(e, ERR_DATA, "cannot inspect %s", output);
			free(copy);
			return e->code;
		}
		*exists = 0;
		slash = strrchr(copy, '/');
		const char *base = slash ? slash + 1 : copy;
		if (!strcmp(base, ".") || !strcmp(base, "..")) {
			free(copy);
			return err_set(e, ERR_USAGE, "invalid output path %s", output);
		}
		if (slash == copy)
			dir = "/";
		else if (slash) {
			*slash = '\0';
			dir = copy;
		} else
			dir = ".";
		char *abs = realpath(dir, NULL);
		if (!abs) {
			err_sys(e, ERR_USAGE,
			        "cannot write the report to %s: its parent directory %s is not usable",
			        output, dir);
			free(copy);
			return e->code;
		}
		*name = strdup(base);
		*parent = abs;
		free(copy);
	}
	if (!*name || !*parent) {
		free(*name);
		free(*parent);
		*name = *parent = NULL;
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	return 0;
}

static char *join(const char *parent, const char *name)
{
	return str_printf(strcmp(parent, "/") ? "%s/%s" : "%s%s", parent, name);
}

/* Refuses an output that is an input's directory or one of its
 * ancestors. */
static int check_inputs(const char *out_abs, const char *output,
                        const char *const *inputs, size_t ninputs,
                        struct err *e)
{
	size_t olen = strlen(out_abs);

	for (size_t i = 0; i < ninputs; i++) {
		struct stat st;
		char *real = realpath(inputs[i], NULL);

		if (!real)
			return err_sys(e, ERR_USAGE, "cannot read input %s", inputs[i]);
		if (stat(real, &st) == 0 && !S_ISDIR(st.st_mode)) {
			char *slash = strrchr(real, '/');
			if (slash == real)
				slash[1] = '\0';
			else if (slash)
				*slash = '\0';
		}
		int bad = !strcmp(real, out_abs) ||
		          (!strncmp(real, out_abs, olen) &&
		           (real[olen] == '/' || !strcmp(out_abs, "/")));
		free(real);
		if (bad)
			return err_set(e, ERR_USAGE,
			               "refusing to write the report to %s: it is the directory of the input %s or one of its ancestors",
			               output, inputs[i]);
	}
	return 0;
}

struct check_ctx {
	json_t *listed; /* object: listed path -> true */
	const char *output;
	size_t nentries;
};

/* True when some listed file lies below directory rel. */
static int dir_is_listed(json_t *listed, const char *rel)
{
	const char *k;
	json_t *v;
	size_t n = strlen(rel);

	if (!strcmp(rel, "detail"))
		return 1;
	json_object_foreach(listed, k, v) {
		if (!strncmp(k, rel, n) && k[n] == '/')
			return 1;
	}
	return 0;
}

static int check_entry(void *vctx, const char *rel, enum fswalk_type type,
                       struct err *e)
{
	struct check_ctx *c = vctx;

	c->nentries++;
	if (!c->listed)
		return err_set(e, ERR_USAGE,
		               "refusing to write the report to %s: it is a non-empty directory that is not a dsight report (no manifest.json)",
		               c->output);
	switch (type) {
	case FSWALK_LINK:
		return err_set(e, ERR_USAGE,
		               "refusing to replace the report %s: it contains the symbolic link %s",
		               c->output, rel);
	case FSWALK_OTHER:
		return err_set(e, ERR_USAGE,
		               "refusing to replace the report %s: it contains the special file %s",
		               c->output, rel);
	case FSWALK_DIR:
		if (!dir_is_listed(c->listed, rel))
			return err_set(e, ERR_USAGE,
			               "refusing to replace the report %s: it contains the directory %s, which its manifest.json does not list",
			               c->output, rel);
		return 0;
	case FSWALK_FILE:
		if (!json_object_get(c->listed, rel))
			return err_set(e, ERR_USAGE,
			               "refusing to replace the report %s: it contains %s, which its manifest.json does not list",
			               c->output, rel);
		return 0;
	}
	return 0;
}

/* Loads the listed files of dir/manifest.json into an object, or leaves
 * *listed NULL when there is no manifest.  Refuses a foreign manifest. */
static int load_listed(const char *dir, const char *output, json_t **listed,
                       struct err *e)
{
	struct stat st;
	char *path = join(dir, "manifest.json");
	json_t *m, *files, *v;
	json_error_t je;
	size_t i;

	*listed = NULL;
	if (!path)
		return err_set(e, ERR_NOMEM, "out of memory");
	if (lstat(path, &st)) {
		free(path);
		return 0;
	}
	if (!S_ISREG(st.st_mode)) {
		free(path);
		return err_set(e, ERR_USAGE,
		               "refusing to replace %s: its manifest.json is not a regular file",
		               output);
	}
	m = json_load_file(path, JSON_REJECT_DUPLICATES | JSON_ALLOW_NUL, &je);
	free(path);
	v = m ? json_object_get(m, "generator") : NULL;
	if (!m || !json_is_string(v) || strcmp(json_string_value(v), GENERATOR)) {
		json_decref(m);
		return err_set(e, ERR_USAGE,
		               "refusing to replace %s: its manifest.json is not from a dsight (srtctl-trace) report",
		               output);
	}
	files = json_object_get(m, "files");
	*listed = json_object();
	if (!json_is_array(files) || !*listed) {
		json_decref(m);
		json_decref(*listed);
		*listed = NULL;
		return err_set(e, ERR_USAGE,
		               "refusing to replace %s: its manifest.json has no file list",
		               output);
	}
	json_array_foreach(files, i, v) {
		if (json_is_string(v))
			json_object_set_new(*listed, json_string_value(v), json_true());
	}
	json_decref(m);
	return 0;
}

static int check_existing(const char *out_abs, const char *output,
                          struct err *e)
{
	struct check_ctx c = {NULL, output, 0};
	int rc;

	if ((rc = load_listed(out_abs, output, &c.listed, e)))
		return rc;
	rc = fswalk(out_abs, check_entry, &c, e);
	json_decref(c.listed);
	return rc;
}

int publish_check_output(const char *output, const char *const *inputs,
                         size_t ninputs, struct err *e)
{
	char *parent, *name, *abs;
	int exists, rc;

	if ((rc = resolve_output(output, &parent, &name, &exists, e)))
		return rc;
	abs = join(parent, name);
	if (!abs)
		rc = err_set(e, ERR_NOMEM, "out of memory");
	else if (!(rc = check_inputs(abs, output, inputs, ninputs, e)) && exists)
		rc = check_existing(abs, output, e);
	free(abs);
	free(parent);
	free(name);
	return rc;
}

/* ---- lock and staging ---- */

/* Removes `.<name>.build-*` directories left by killed builds (caller holds
 * the lock). */
static void remove_stale(const struct publish *p)
{
	char *prefix = str_printf(".%s.build-%s", p->name, "");
	DIR *d = prefix ? opendir(p->parent) : NULL;
	struct dirent *de;

	if (d) {
		size_t n = strlen(prefix);
		while ((de = readdir(d))) {
			if (strncmp(de->d_name, prefix, n) || strlen(de->d_name) != n + 6)
				continue;
			char *path = join(p->parent, de->d_name);
			if (path)
				fswalk_remove_tree(path);
			free(path);
		}
		closedir(d);
	}
	free(prefix);
}

void publish_abandon_staging(const char *output)
{
	char *parent = NULL, *name = NULL, *prefix = NULL, *gone[8];
	size_t ngone = 0;
	struct err e;
	int exists = 0;
	DIR *d;
	struct dirent *de;

	if (resolve_output(output, &parent, &name, &exists, &e) ||
	    !(prefix = str_printf(".%s.build-%s", name, "")) ||
	    !(d = opendir(parent))) {
		free(parent);
		free(name);
		free(prefix);
		return;
	}
	size_t n = strlen(prefix);
	while ((de = readdir(d)) && ngone < sizeof gone / sizeof gone[0]) {
		if (strncmp(de->d_name, prefix, n) || strlen(de->d_name) != n + 6)
			continue;
		char *path = join(parent, de->d_name);
		char *to = str_printf("%s/.%s.build-XXXXXX", parent, name);
		/* one rename (a fresh empty directory it replaces): the build's
		 * further writes fail instead of re-creating entries */
		if (path && to && mkdtemp(to)) {
			if (rename(path, to) == 0) {
				gone[ngone++] = to;
				to = NULL;
			} else {
				rmdir(to);
			}
		}
		if (to && path) { /* cannot rename: remove in place */
			gone[ngone++] = path;
			path = NULL;
		}
		free(path);
		free(to);
	}
	closedir(d);
	/* Removing thousands of files can wait on the filesystem journal for
	 * seconds while the build's writes are flushed: a child does it, so
	 * that the process can exit now (the names are stale staging names,
	 * which the next build removes too if the child has not finished). */
	pid_t pid = ngone ? fork() : -1;
	if (pid == 0) {
		close_range(3, ~0U, 0); /* not the build lock: the next build may start */
		for (size_t i = 0; i < ngone; i++)
			fswalk_remove_tree(gone[i]);
		_exit(0);
	}
	for (size_t i = 0; i < ngone; i++) {
		if (pid < 0)
			fswalk_remove_tree(gone[i]);
		free(gone[i]);
	}
	free(parent);
	free(name);
	free(prefix);
}

/* Creates a fresh empty `.<name>.build-XXXXXX` directory; caller frees. */
static char *make_temp_dir(const struct publish *p, struct err *e)
{
	char *tmpl = str_printf("%s/.%s.build-XXXXXX", p->parent, p->name);

	if (!tmpl) {
		err_set(e, ERR_NOMEM, "out of memory");
		return NULL;
	}
	if (!mkdtemp(tmpl)) {
		err_sys(e, ERR_DATA, "cannot create a staging directory beside %s",
		        p->output);
		free(tmpl);
		return NULL;
	}
	return tmpl;
}

int publish_begin(const char *output, const char *const *inputs,
                  size_t ninputs, struct publish **out, struct err *e)
{
	struct publish *p;
	int exists, rc;

	*out = NULL;
	if ((rc = publish_check_output(output, inputs, ninputs, e)))
		return rc;
	p = calloc(1, sizeof *p);
	if (!p)
		return err_set(e, ERR_NOMEM, "out of memory");
	p->lock_fd = -1;
	if ((rc = resolve_output(output, &p->parent, &p->name, &exists, e)))
		goto fail;
	p->output = join(p->parent, p->name);
	p->lock_path = str_printf("%s/.%s.lock", p->parent, p->name);
	if (!p->output || !p->lock_path) {
		rc = err_set(e, ERR_NOMEM, "out of memory");
		goto fail;
	}
	p->lock_fd = open(p->lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (p->lock_fd < 0) {
		rc = err_sys(e, ERR_DATA, "cannot create the build lock %s",
		             p->lock_path);
		goto fail;
	}
	if (flock(p->lock_fd, LOCK_EX | LOCK_NB)) {
		if (errno == EWOULDBLOCK)
			rc = err_set(e, ERR_DATA,
			             "another build of %s is running (lock %s is held); try again when it has finished",
			             output, p->lock_path);
		else
			rc = err_sys(e, ERR_DATA, "cannot lock %s", p->lock_path);
		goto fail;
	}
	/* Under the lock: the output may have changed while we waited. */
	if ((rc = publish_check_output(output, inputs, ninputs, e)))
		goto fail;
	remove_stale(p);
	p->staging = make_temp_dir(p, e);
	if (!p->staging) {
		rc = e->code;
		goto fail;
	}
	if (chmod(p->staging, 0755)) {
		rc = err_sys(e, ERR_DATA, "cannot set permissions of %s", p->staging);
		goto fail;
	}
	*out = p;
	return 0;
fail:
	publish_end(p);
	return rc;
}

int publish_verify_staged(const struct publish *p, struct err *e)
{
	json_t *listed = NULL;
	int rc = load_listed(p->staging, p->output, &listed, e);
	if (rc || !listed)
		rc = err_set(e, ERR_DATA, "its manifest.json is missing or unreadable, "
		             "so the next build of %s would refuse it", p->output);
	json_decref(listed);
	return rc;
}

const char *publish_staging(const struct publish *p)
{
	return p->staging;
}

const char *publish_output(const struct publish *p)
{
	return p->output;
}

int publish_sync_path(const char *path, struct err *e)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return err_sys(e, ERR_DATA, "cannot open %s", path);
	if (fsync(fd) && errno != EINVAL) {
		err_sys(e, ERR_DATA, "cannot sync %s", path);
		close(fd);
		return e->code;
	}
	close(fd);
	return 0;
}

static int exchange_unsupported(int err)
{
	return err == EINVAL || err == ENOSYS || err == EOPNOTSUPP;
}

/* Two-rename fallback: old report aside, staging in, old one removed; on a
 * failure of the second rename the old report is moved back. */
static int swap_by_renames(struct publish *p, struct err *e)
{
	char *aside = make_temp_dir(p, e);

	if (!aside)
		return e->code;
	if (rename(p->output, aside)) {
		err_sys(e, ERR_DATA, "cannot move the previous report %s aside",
		        p->output);
		rmdir(aside);
		free(aside);
		return e->code;
	}
	if (rename(p->staging, p->output)) {
		err_sys(e, ERR_DATA, "cannot publish the report at %s", p->output);
		if (rename(aside, p->output))
			err_prefix(e, "the previous report is left at %s", aside);
		free(aside);
		return e->code;
	}
	fswalk_remove_tree(aside);
	free(aside);
	return 0;
}

/* fswalk callback: syncs one staged file or directory to disk. */
static int sync_entry(void *ctx, const char *rel, enum fswalk_type type,
                      struct err *e)
{
	char path[4096];

	if (type != FSWALK_FILE && type != FSWALK_DIR)
		return 0;
	snprintf(path, sizeof path, "%s/%s", (const char *)ctx, rel);
	return publish_sync_path(path, e);
}

int publish_commit(struct publish *p, struct err *e)
{
	struct stat st;
	int rc = 0;

	/* Every staged file reaches the disk before it becomes the report
	 * (files their writers already synced cost nothing here). */
	if ((rc = fswalk(p->staging, sync_entry, p->staging, e)) ||
	    (rc = publish_sync_path(p->staging, e)))
		return rc;
	if (lstat(p->output, &st) && errno == ENOENT) {
		if (renameat2(AT_FDCWD, p->staging, AT_FDCWD, p->output,
		              RENAME_NOREPLACE) &&
		    (!exchange_unsupported(errno) ||
		     rename(p->staging, p->output)))
			return err_sys(e, ERR_DATA, "cannot publish the report at %s",
			               p->output);
	} else {
		const char *force = getenv("DSIGHT_TEST_NO_RENAME_EXCHANGE");
		if (force && *force && strcmp(force, "0")) {
			rc = swap_by_renames(p, e);
		} else if (renameat2(AT_FDCWD, p->staging, AT_FDCWD, p->output,
		                     RENAME_EXCHANGE) == 0) {
			/* the staging path now holds the previous report */
			fswalk_remove_tree(p->staging);
		} else if (exchange_unsupported(errno)) {
			rc = swap_by_renames(p, e);
		} else {
			rc = err_sys(e, ERR_DATA, "cannot publish the report at %s",
			             p->output);
		}
		if (rc)
			return rc;
	}
	free(p->staging);
	p->staging = NULL;
	publish_sync_path(p->parent, e); /* best effort: it is published */
	err_clear(e);
	return 0;
}

void publish_end(struct publish *p)
{
	if (!p)
		return;
	if (p->staging)
		fswalk_remove_tree(p->staging);
	if (p->lock_fd >= 0)
		close(p->lock_fd); /* releases the flock */
	free(p->staging);
	free(p->output);
	free(p->parent);
	free(p->name);
	free(p->lock_path);
	free(p);
}
