/* cmd_build: `dsight build` — flags, progress display, summary line. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "report/build.h"
#include "report/publish.h"
#include "cmd.h"
#include "base/err.h"
#include "base/jsonout.h"

#define MAX_NSYS 63

static const char usage[] =
	"usage: dsight build [EVIDENCE] [--nsys-sqlite PATH]... -o REPORT\n"
	"                    [--single-file [--max-part-size-mb N]]\n"
	"                    [--max-profile-events N] [--job NAME]\n"
	"\n"
	"Turns an evidence document (srtctl-trace/1, plain JSON or gzip, or a\n"
	"legacy single-file report directory) into a report directory, staged\n"
	"beside REPORT and swapped in atomically.  A failed build leaves the\n"
	"previous report untouched.\n"
	"\n"
	"Options:\n"
	"  -o, --output REPORT       the report directory to create or replace\n"
	"                            (missing, empty, or an earlier dsight report)\n"
	"  --single-file             write trace-data.json.gz (the whole document)\n"
	"                            instead of the SQLite cache, and a page with\n"
	"                            everything embedded\n"
	"  --max-part-size-mb N      with --single-file: a page that would exceed N\n"
	"                            MB (decimal; fractions allowed; default 200)\n"
	"                            is split by time into self-contained parts\n"
	"                            part-001.html, ... listed by index.html and\n"
	"                            parts.json; 0 never splits\n"
	"  --nsys-sqlite PATH        import an Nsight Systems SQLite export (file, or\n"
	"                            directory searched for *.sqlite; repeatable);\n"
	"                            make one with `nsys export --type sqlite\n"
	"                            --output X.sqlite X.nsys-rep`\n"
	"  --max-profile-events N    cap the NVTX ranges, and separately the GPU\n"
	"                            rows, imported per export\n"
	"  --job NAME                meta.job of a report built from exports only\n"
	"  -h, --help                show this help\n"
	"\n"
	"On success one JSON line is printed on stdout:\n"
	"  {\"output\":...,\"generation\":...,\"counts\":{...},\"rows\":{...},\n"
	"   \"bytes\":...,\"files\":...,\"shards\":...,\"html_bytes\":...,\"seconds\":...}\n"
	"Warnings (skipped exports, truncated profiles) are printed on stderr as\n"
	"\"dsight build: warning: ...\" and kept in meta.warnings.\n"
	"Progress is shown on stderr when it is a terminal.  Errors are one line\n"
	"on stderr; the exit status is 1 (2 for a usage error).  Ctrl-C (SIGINT,\n"
	"SIGTERM, SIGHUP) stops a build cleanly; a build of the same REPORT that\n"
	"is already running makes this one fail at once (lock .REPORT.lock).\n"
	"\n"
	"Examples:\n"
	"  dsight build run.trace.json.gz -o ./report\n"
	"  dsight build run.trace.json --single-file -o ./report-single\n"
	"  dsight build old-report/ -o ./report      # rebuild a legacy report\n"	"  dsight build --nsys-sqlite ./nsys/ --job run1 -o ./report\n"
	"\n"
	"See dsight(1) and dsight-report(5).\n";

/* Set by SIGINT/SIGTERM/SIGHUP: the build stops and cleans up its staging
 * directory (a second signal kills at once). */
static cancel_flag interrupted;

/*
 * The watchdog: most of a build notices `interrupted` within a fraction of a
 * second (rows, chunks, SQLite statements, hashing), but SQLite's index sort
 * does not look at it.  When a signal came and the build has neither
 * stopped nor started publishing after STOP_GRACE seconds, the watchdog
 * removes the staging directory itself and exits.  `phase_mu` orders it
 * with the start of publishing: whoever takes it first wins.
 */
#define STOP_GRACE 1.0
static int wake_pipe[2] = {-1, -1};
static pthread_mutex_t phase_mu = PTHREAD_MUTEX_INITIALIZER;
static int build_over; /* under phase_mu: publishing or returned */
static const char *build_output;

static void on_signal(int sig)
{
	int saved = errno;
	(void)sig;
	interrupted = 1;
	if (wake_pipe[1] >= 0 && write(wake_pipe[1], "", 1) < 0) {
		/* the watchdog is awake already */
	}
	errno = saved;
}

static void *watchdog(void *arg)
{
	char c;
	(void)arg;
	while (read(wake_pipe[0], &c, 1) < 0 && errno == EINTR)
		;
	for (int i = 0; i < (int)(STOP_GRACE * 50); i++) {
		struct timespec ts = {0, 20 * 1000 * 1000};
		pthread_mutex_lock(&phase_mu);
		int over = build_over;
		pthread_mutex_unlock(&phase_mu);
		if (over)
			return NULL;
		nanosleep(&ts, NULL);
	}
	pthread_mutex_lock(&phase_mu); /* kept: the build never publishes now */
	if (build_over) {
		pthread_mutex_unlock(&phase_mu);
		return NULL;
	}
	publish_abandon_staging(build_output);
	if (isatty(2))
		fputs("\r\033[K", stderr);
	fputs("dsight build: interrupted; the previous report is unchanged\n", stderr);
	_exit(1);
}

static void mark_over(void)
{
	pthread_mutex_lock(&phase_mu);
	build_over = 1;
	pthread_mutex_unlock(&phase_mu);
}

static void catch_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
	struct sigaction sa;

	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
		sigaction(sigs[i], &sa, NULL);
}

struct progress_state {
	double last;
	int shown;
	int draw; /* stderr is a terminal */
};

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void show_progress(void *ctx, enum build_phase phase, uint64_t done,
                          uint64_t total)
{
	struct progress_state *p = ctx;
	double t = now();

	if (phase == BUILD_PUBLISH)
		mark_over(); /* blocks for good if the watchdog took over */
	if (!p->draw)
		return;

	if (phase == BUILD_READ) {
		if (t - p->last < 0.2)
			return;
		if (total)
			fprintf(stderr, "\r\033[Kdsight build: reading %.0f%% (%.1f of %.1f MiB)",
			        100.0 * (double)done / (double)total,
			        (double)done / 1048576.0, (double)total / 1048576.0);
		else
			fprintf(stderr, "\r\033[Kdsight build: reading %.1f MiB",
			        (double)done / 1048576.0);
	} else {
		fprintf(stderr, "\r\033[Kdsight build: %s",
		        phase == BUILD_INDEX   ? "indexing"
		        : phase == BUILD_WRITE ? "writing files"
		                               : "publishing");
	}
	p->last = t;
	p->shown = 1;
}

static int fail(int code, const char *msg)
{
	fprintf(stderr, "dsight build: %s\n", msg);
	return err_exit_status(code);
}

static int usage_error(const char *fmt, const char *arg)
{
	char msg[512];
	snprintf(msg, sizeof msg, fmt, arg);
	fprintf(stderr, "dsight build: %s (see dsight build --help)\n", msg);
	return 2;
}

static void print_summary(const struct build_result *r)
{
	struct buf b;
	/* Seconds rounded to milliseconds; the whole line through jsonout. */
	double secs = (double)(long long)(r->seconds * 1000.0 + 0.5) / 1000.0;
	json_t *j = json_pack("{s:s,s:s,s:O,s:{s:I,s:I,s:I},s:I,s:I,s:I,s:I,s:f}",
		"output", r->output, "generation", r->generation,
		"counts", r->counts,
		"rows", "events", (json_int_t)r->events,
		"samples", (json_int_t)r->samples, "points", (json_int_t)r->points,
		"bytes", (json_int_t)r->bytes, "files", (json_int_t)r->files,
		"shards", (json_int_t)r->shards, "html_bytes", (json_int_t)r->html_bytes,
		"seconds", secs);

	if (!j)
		return;
	if (r->parts)
		json_object_set_new(j, "parts", json_integer((json_int_t)r->parts));
	buf_init(&b, 0);
	jsonout_tree(&b, j, 0);
	buf_putc(&b, '\n');
	if (!b.failed)
		fwrite(b.data, 1, b.len, stdout);
	fflush(stdout);
	buf_free(&b);
	json_decref(j);
}

/* Whether s is a plain decimal number: digits, an optional fraction and
 * an optional exponent (no sign, space, hex, inf or nan). */
static int decimal_number(const char *s)
{
	const char *p = s;

	while (*p >= '0' && *p <= '9')
		p++;
	if (*p == '.') {
		const char *f = ++p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == f)
			return 0;
	}
	if (p == s || *s == '.')
		return 0;
	if (*p == 'e' || *p == 'E') {
		const char *x;
		p++;
		if (*p == '+' || *p == '-')
			p++;
		x = p;
		while (*p >= '0' && *p <= '9')
			p++;
		if (p == x)
			return 0;
	}
	return *p == '\0';
}

int cmd_build_main(int argc, char **argv)
{
	const char *nsys[MAX_NSYS];
	struct build_options o;
	struct build_result r;
	struct progress_state ps = {0, 0, 0};
	struct err e;
	int only_positional = 0, part_flag = 0;

	memset(&o, 0, sizeof o);
	o.max_profile_events = -1;
	o.max_part_bytes = 200000000u;
	o.nsys_paths = nsys;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (!only_positional && a[0] == '-' && a[1]) {
			if (!strcmp(a, "--")) {
				only_positional = 1;
			} else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
				fputs(usage, stdout);
				return 0;
			} else if (!strcmp(a, "--single-file")) {
				o.single_file = 1;
			} else if (!strcmp(a, "-o") || !strcmp(a, "--output") ||
			           !strcmp(a, "--nsys-sqlite") || !strcmp(a, "--job") ||
			           !strcmp(a, "--max-profile-events") ||
			           !strcmp(a, "--max-part-size-mb")) {
				if (!val)
					return usage_error("%s needs a value", a);
				i++;
				if (a[1] == 'o' || !strcmp(a, "--output")) {
					if (o.output)
						return usage_error("%s given twice", a);
					o.output = val;
				} else if (!strcmp(a, "--nsys-sqlite")) {
					if (o.nnsys >= MAX_NSYS)
						return usage_error("too many %s paths", a);
					nsys[o.nnsys++] = val;
				} else if (!strcmp(a, "--job")) {
					o.job = val;
				} else if (!strcmp(a, "--max-part-size-mb")) {
					double mb;
					if (!decimal_number(val))
						return usage_error("--max-part-size-mb needs a decimal number of MB >= 0 (like 200 or 0.5), not '%s'", val);
					mb = strtod(val, NULL);
					if (!(mb <= 1e9))
						return usage_error("--max-part-size-mb %s is too large (at most 1000000000 MB)", val);
					o.max_part_bytes = (uint64_t)(mb * 1e6 + 0.5);
					part_flag = 1;
				} else {
					char *end;
					errno = 0;
					long long n = strtoll(val, &end, 10);
					if (errno || end == val || *end || n < 0)
						return usage_error("--max-profile-events needs a non-negative integer, not '%s'", val);
					o.max_profile_events = n;
				}
			} else {
				return usage_error("unknown option '%s'", a);
			}
		} else if (!o.input) {
			o.input = a;
		} else {
			return usage_error("unexpected argument '%s' (one EVIDENCE at most)", a);
		}
	}
	if (!o.output)
		return usage_error("%s", "no output given: -o REPORT is required");
	if (part_flag && !o.single_file)
		return usage_error("%s", "--max-part-size-mb applies to --single-file only");
	if (!o.input && !o.nnsys)
		return usage_error("%s", "no input given: name an EVIDENCE document or --nsys-sqlite exports");

	/* SQLite's temporary files (the ordered scans of Nsight exports, index
	 * sorts) go on disk beside the output, where the staging directory is,
	 * unless the user chose SQLITE_TMPDIR.  SQLite reads it once, at its
	 * initialisation, which has not happened yet. */
	if (!getenv("SQLITE_TMPDIR")) {
		char parent[4096];
		size_t n = strlen(o.output);
		while (n > 1 && o.output[n - 1] == '/')
			n--;
		while (n > 0 && o.output[n - 1] != '/')
			n--;
		while (n > 1 && o.output[n - 1] == '/')
			n--;
		if (n == 0)
			snprintf(parent, sizeof parent, ".");
		else
			snprintf(parent, sizeof parent, "%.*s", (int)n, o.output);
		setenv("SQLITE_TMPDIR", parent, 0);
	}
	/* A file-size limit must fail the write cleanly, not kill us. */
	signal(SIGXFSZ, SIG_IGN);
	build_output = o.output;
	pthread_t wd;
	if (pipe2(wake_pipe, O_CLOEXEC) == 0 &&
	    pthread_create(&wd, NULL, watchdog, NULL) == 0)
		pthread_detach(wd);
	catch_signals();
	o.cancel = &interrupted;
	o.progress = show_progress; /* also tells the watchdog about publishing */
	o.progress_ctx = &ps;
	ps.draw = isatty(2);
	err_clear(&e);
	int rc = build_run(&o, &r, &e);
	mark_over();
	if (ps.shown)
		fputs("\r\033[K", stderr);
	if (rc)
		return fail(rc, e.msg);
	print_summary(&r);
	for (size_t i = 0; i < json_array_size(r.warnings); i++)
		fprintf(stderr, "dsight build: warning: %s\n",
		        json_string_value(json_array_get(r.warnings, i)));
	build_result_free(&r);
	return 0;
}
