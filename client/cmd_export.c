/* cmd_export: `dsight export REPORT --format chrome-trace [flags]`: a window
 * of a report as a Chrome trace (query/chrometrace.h) on stdout or into a
 * file written atomically (a temporary file beside it, renamed at the end;
 * a failure leaves no file). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/err.h"
#include "base/fdio.h"
#include "cmd.h"
#include "query/chrometrace.h"
#include "query/dataset.h"
#include "query/qparams.h"

#define MAX_METRICS 1000

static const char usage[] =
	"usage: dsight export REPORT --format chrome-trace [--from S] [--to S]\n"
	"                    [--profile N] [--worker ID] [--metrics NAME,...]\n"
	"                    [--no-requests] [-o FILE]\n"
	"\n"
	"Writes a window of REPORT (a report directory, a trace-data.sqlite cache\n"
	"or an evidence document) as a Chrome trace (Trace Event Format JSON) to\n"
	"open in Perfetto UI (ui.perfetto.dev) or chrome://tracing: the NVTX\n"
	"ranges as complete events (one process per profile, one track per\n"
	"thread), the CPU samples as instant events on their thread's track, the\n"
	"metric series as counters and the requests as async slices,\n"
	"the events the viewer's \"Chrome trace\" export writes.\n"
	"\n"
	"  --format chrome-trace  the output format (the only one; required)\n"
	"  --from SECONDS       window start (default 0)\n"
	"  --to SECONDS         window end (default: the run duration)\n"
	"  --profile N          only this profile (and its worker's series)\n"
	"  --worker ID          only this worker's profiles and series\n"
	"  --metrics NAME,...   only the series of these metric names (default:\n"
	"                       every series of the workers in scope)\n"
	"  --no-requests        leave the requests out\n"
	"  -o FILE              write FILE (atomically) instead of stdout\n"
	"  -h, --help           this text\n"
	"\n"
	"On failure {\"ok\": false, \"error\": ...} on stderr and exit status 2\n"
	"(usage/validation) or 1 (data/I/O); 141, quietly, when the reader of\n"
	"stdout goes away.  See dsight-export(1).\n";

static int fail(int code, const char *msg)
{
	return cmd_fail(code, msg);
}

static int fail_fmt(int code, const char *fmt, const char *arg)
{
	char msg[ERR_MSG_MAX];
	snprintf(msg, sizeof msg, fmt, arg);
	return fail(code, msg);
}

struct sink {
	int fd;
	const char *path; /* for messages */
};

static int write_out(void *ctx, const char *data, size_t n, struct err *e)
{
	struct sink *s = ctx;
	if (fdio_write_all(s->fd, data, n) == 0)
		return 0;
	/* `dsight export ... | head`: quietly, as dsight query does */
	if (errno == EPIPE && s->fd == STDOUT_FILENO)
		return err_set(e, ERR_CLOSED, "stdout was closed by its reader");
	return err_set(e, ERR_DATA, "Cannot write %s: %s", s->path,
	               strerror(errno));
}

/* Splits list (comma-separated, modified in place) into names[]. */
static int split_metrics(char *list, const char **names, size_t *n)
{
	char *save = NULL;
	*n = 0;
	for (char *t = strtok_r(list, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		if (*n == MAX_METRICS)
			return -1;
		names[(*n)++] = t;
	}
	return *n ? 0 : -1;
}

/* Writes the trace into a temporary file beside path and renames it. */
static int export_file(struct dataset *ds, const struct chrometrace_opts *o,
                       const char *path, struct err *e)
{
	struct buf tmp;
	struct sink s;
	mode_t mask = umask(0);
	int rc;

	umask(mask);

	buf_init(&tmp, 0);
	buf_printf(&tmp, "%s.tmp.XXXXXX", path);
	if (tmp.failed) {
		buf_free(&tmp);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	s.fd = mkstemp(tmp.data);
	s.path = path;
	/* mkstemp makes it 0600: give it the mode a plain create would */
	if (s.fd >= 0 && fchmod(s.fd, 0666 & ~mask)) {
		close(s.fd);
		unlink(tmp.data);
		s.fd = -1;
	}
	if (s.fd < 0) {
		rc = err_set(e, ERR_DATA, "Cannot write %s: %s", path,
		             strerror(errno));
		buf_free(&tmp);
		return rc;
	}
	rc = chrometrace_write(ds, o, write_out, &s, NULL, e);
	if (!rc && fsync(s.fd))
		rc = err_set(e, ERR_DATA, "Cannot write %s: %s", path,
		             strerror(errno));
	if (close(s.fd) && !rc)
		rc = err_set(e, ERR_DATA, "Cannot write %s: %s", path,
		             strerror(errno));
	if (!rc && rename(tmp.data, path))
		rc = err_set(e, ERR_DATA, "Cannot write %s: %s", path,
		             strerror(errno));
	if (rc)
		unlink(tmp.data);
	buf_free(&tmp);
	return rc;
}

/* Whether a (its first nlen bytes) is flag. */
static int flag_is(const char *a, size_t nlen, const char *flag)
{
	return nlen == strlen(flag) && !strncmp(a, flag, nlen);
}

/* The value of flag argv[*k] ("--flag VALUE" or "--flag=VALUE"); NULL
 * (after printing the error) when it has none. */
static const char *value_of(int argc, char **argv, int *k, size_t nlen)
{
	const char *a = argv[*k];
	if (a[nlen] == '=')
		return a + nlen + 1;
	if (*k + 1 >= argc)
		return NULL;
	return argv[++*k];
}

int cmd_export_main(int argc, char **argv)
{
	struct query_params p;
	struct chrometrace_opts o;
	const char *report = NULL, *format = NULL, *outpath = NULL;
	const char *names[MAX_METRICS];
	char *metrics = NULL;
	struct dataset *ds = NULL;
	struct err e;
	int rc = 0;

	query_params_init(&p);
	memset(&o, 0, sizeof o);
	o.requests = 1;
	err_clear(&e);
	for (int k = 1; k < argc && !rc; k++) {
		const char *a = argv[k], *v;
		size_t nlen = strcspn(a, "=");
		const struct qparam *qp;

		if (a[0] != '-' || !a[1]) {
			if (report)
				rc = fail_fmt(ERR_USAGE,
				              "Unexpected argument '%s'", a);
			report = a;
			continue;
		}
		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			fputs(usage, stdout);
			query_params_free(&p);
			free(metrics);
			return 0;
		}
		if (!strcmp(a, "--no-requests")) {
			o.requests = 0;
			continue;
		}
		if (!strcmp(a, "-o") || flag_is(a, nlen, "--format") ||
		    flag_is(a, nlen, "--metrics")) {
			if (!(v = value_of(argc, argv, &k, nlen)) || !*v) {
				char msg[ERR_MSG_MAX];
				snprintf(msg, sizeof msg, "%.*s needs a value",
				         (int)nlen, a);
				rc = fail(ERR_USAGE, msg);
				continue;
			}
			if (a[1] == 'o')
				outpath = v;
			else if (a[2] == 'f')
				format = v;
			else if (!(metrics = strdup(v)) && (rc = fail(
			           ERR_NOMEM, "out of memory")))
				continue;
			continue;
		}
		qp = qparam_by_flag(a, nlen);
		if (!qp || (strcmp(qp->name, "start") &&
		            strcmp(qp->name, "end") &&
		            strcmp(qp->name, "profile") &&
		            strcmp(qp->name, "worker"))) {
			rc = fail_fmt(ERR_USAGE, "Unknown flag '%s' (see dsight "
			              "export --help)", a);
			continue;
		}
		if (!(v = value_of(argc, argv, &k, nlen))) {
			char msg[ERR_MSG_MAX];
			snprintf(msg, sizeof msg, "%s needs a value", qp->flag);
			rc = fail(ERR_USAGE, msg);
			continue;
		}
		if (query_params_set_cli(&p, qp, v, &e))
			rc = fail(e.code, e.msg);
	}
	if (!rc && !report)
		rc = fail(ERR_USAGE, "Give the report: dsight export REPORT "
		                     "--format chrome-trace");
	if (!rc && !format)
		rc = fail(ERR_USAGE, "Give the format: --format chrome-trace");
	if (!rc && strcmp(format, "chrome-trace"))
		rc = fail_fmt(ERR_USAGE, "Unknown format '%s'; choose from "
		              "chrome-trace", format);
	if (!rc && p.worker_list.n)
		rc = fail(ERR_USAGE, "Give one --worker");
	if (!rc && metrics && split_metrics(metrics, names, &o.nmetrics))
		rc = fail(ERR_USAGE, "--metrics takes 1 to 1000 names");
	if (!rc) {
		o.has_from = p.has_start;
		o.from = p.start;
		o.has_to = p.has_end;
		o.to = p.end;
		o.has_profile = p.has_profile;
		o.profile = p.profile;
		o.worker = p.worker;
		o.metrics = metrics ? names : NULL;
		if ((rc = dataset_open(report, &ds, &e)))
			rc = fail(rc, e.msg);
	}
	if (!rc) {
		if (outpath) {
			rc = export_file(ds, &o, outpath, &e);
		} else {
			struct sink s = {STDOUT_FILENO, "standard output"};
			rc = chrometrace_write(ds, &o, write_out, &s, NULL,
			                       &e);
		}
		if (rc)
			rc = fail(rc, e.msg);
		dataset_close(ds);
	}
	query_params_free(&p);
	free(metrics);
	return rc;
}
