/*
 * dsightd: the warm-session server.  Owns the command line, the startup
 * sequence of doc/sessions-protocol.md (open the report, lock, stale socket, bind 0600,
 * the startup record), --daemonize (fork first, report through a pipe), the
 * log, signals, and the clean exit (unlink socket and lock, say why).
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uv.h>

#include "address.h"
#include "base/buf.h"
#include "base/jsonout.h"
#include "base/err.h"
#include "dispatch.h"
#include "http.h"
#include "lifetime.h"
#include "query/query_sql.h"
#include "server.h"
#include "session.h"

static const char usage[] =
	"usage: dsightd serve REPORT [--name NAME | --path SOCKET] [--daemonize] [--log FILE]\n"
	"                            [--idle-timeout auto|DURATION] [--idle-start auto|orphaned|last-query]\n"
	"                            [--conn-idle-timeout DURATION] [--frame-timeout DURATION]\n"
	"                            [--http [HOST:]PORT [--allow-remote]] [--no-sql-engine]\n"
	"\n"
	"Keeps REPORT (a report directory, a trace-data.sqlite cache or an evidence\n"
	"document) open behind a unix socket so that `dsight query --remote NAME ...`\n"
	"answers without reopening it.\n"
	"\n"
	"  --name NAME          session name (default: a generated adjective-colour-animal);\n"
	"                       the socket is $XDG_RUNTIME_DIR/dsight/NAME.sock, or\n"
	"                       ${TMPDIR:-/tmp}/dsight-UID/NAME.sock\n"
	"  --path SOCKET        bind this socket path instead of a name\n"
	"  --daemonize          fork into the background; return once the socket accepts\n"
	"  --log FILE           log file (--daemonize: default SOCKET.log; otherwise stderr\n"
	"                       is also copied into FILE)\n"
	"  --idle-timeout T     exit after T idle: auto (30m), 90, 45s, 10m, 1h; 0/off/never disable\n"
	"  --idle-start MODE    when the idle clock runs: last-query (always), orphaned (once\n"
	"                       the starting process is gone), auto (orphaned when started by\n"
	"                       a live parent, last-query when daemonized)\n"
	"  --conn-idle-timeout T close a connection with nothing asked or owed after T\n"
	"                       (default 60s)\n"
	"  --frame-timeout T    close a connection whose started request frame is not whole\n"
	"                       after T, with an error frame (default 10s)\n"
	"  --http [HOST:]PORT   also serve HTTP there (HOST 127.0.0.1 by default; PORT 0 picks\n"
	"                       one): POST /rpc, and the report's viewer at / backed by the\n"
	"                       session.  Every request needs the session's token, kept in\n"
	"                       SOCKET.http (`dsight ctl url NAME` prints the viewer's URL)\n"
	"  --allow-remote       let --http listen on a non-loopback address (plain HTTP:\n"
	"                       an ssh tunnel is safer)\n"
	"  --no-sql-engine      answer sql statements from the file's views only (by default\n"
	"                       the first sql query loads nvtx and metric_points into memory\n"
	"                       in the background, and later ones read them there)\n"
	"\n"
	"Prints one startup record on stdout:\n"
	"  pid=N session=NAME socket-path=PATH [http=URL] idle-timeout=1800s report=PATH generation=ID\n"
	"Stop it with `dsight ctl kill-server NAME`, SIGINT, SIGTERM or SIGHUP.  See dsightd(1).\n";

struct opts {
	const char *report, *name, *path, *log, *http;
	int daemonize;
	int allow_remote;
	int no_sql_engine;
	int64_t idle_ms;
	int idle_start;
	int64_t conn_idle_ms, frame_ms; /* 0: the server's defaults */
};

/* Everything the running daemon holds (main owns it). */
struct daemon {
	struct opts o;
	pid_t owner;
	char name[ADDRESS_NAME_MAX + 1];
	char socket_path[ADDRESS_PATH_MAX];
	char lock_path[ADDRESS_PATH_MAX + 8];
	char token_path[ADDRESS_PATH_MAX + 8];
	char log_path[4096];
	char started_utc[32];
	int lock_fd, listen_fd, log_fd;
	int notify_fd;  /* --daemonize: pipe to the waiting parent */
	struct session *sess;
	uv_loop_t loop;
	int loop_ready;
	uv_signal_t sigint, sigterm, sighup;
	struct lifetime *lt;
	struct server *srv;
	struct dispatch *dispatch; /* what srv's requests mean */
	struct http *http;         /* --http: the HTTP transport */
	char why[160];
};

/* ---- logging: stderr, plus the --log file when not daemonized ---- */

static void log_line(void *ctx, const char *msg)
{
	struct daemon *d = ctx;
	char stamp[32], line[1400];
	time_t t = time(NULL);
	struct tm tm;
	gmtime_r(&t, &tm);
	strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%SZ", &tm);
	int n = snprintf(line, sizeof line, "%s dsightd[%d]: %s\n", stamp, (int)getpid(), msg);
	if (n < 0)
		return;
	if ((size_t)n >= sizeof line)
		n = sizeof line - 1;
	if (write(2, line, (size_t)n) < 0) {
		/* nowhere else to report it */
	}
	if (d->log_fd >= 0 && !d->o.daemonize && write(d->log_fd, line, (size_t)n) < 0) {
		/* ditto */
	}
}

static void logf_(struct daemon *d, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void logf_(struct daemon *d, const char *fmt, ...)
{
	char msg[1200];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	log_line(d, msg);
}

/* ---- command line ---- */

/* --conn-idle-timeout, --frame-timeout: auto (0: the server's default) or
 * a positive duration, written as --idle-timeout takes it. */
static int parse_conn_limit(const char *flag, const char *s, int64_t *ms,
                            struct err *e)
{
	*ms = 0;
	if (!s || !strcmp(s, "auto"))
		return 0;
	if (lifetime_parse_timeout(s, ms, e) || *ms < 0)
		return err_set(e, ERR_USAGE, "%s must be auto or a duration like "
		               "60, 10s, 1.5s, 2m (got '%s')", flag, s);
	return 0;
}

static int parse(int argc, char **argv, struct opts *o, struct err *e)
{
	const char *timeout = "auto", *start = "auto";
	const char *conn_idle = NULL, *frame = NULL;
	memset(o, 0, sizeof *o);
	if (argc < 2 || strcmp(argv[1], "serve") != 0)
		return err_set(e, ERR_USAGE, "expected the subcommand 'serve' (see dsightd --help)");
	for (int k = 2; k < argc; k++) {
		const char *a = argv[k];
		const char **slot = NULL;
		if (!strcmp(a, "--daemonize")) {
			o->daemonize = 1;
			continue;
		}
		if (!strcmp(a, "--allow-remote")) {
			o->allow_remote = 1;
			continue;
		}
		if (!strcmp(a, "--no-sql-engine")) {
			o->no_sql_engine = 1;
			continue;
		}
		if (!strcmp(a, "--name"))
			slot = &o->name;
		else if (!strcmp(a, "--path"))
			slot = &o->path;
		else if (!strcmp(a, "--log"))
			slot = &o->log;
		else if (!strcmp(a, "--idle-timeout"))
			slot = &timeout;
		else if (!strcmp(a, "--idle-start"))
			slot = &start;
		else if (!strcmp(a, "--conn-idle-timeout"))
			slot = &conn_idle;
		else if (!strcmp(a, "--frame-timeout"))
			slot = &frame;
		else if (!strcmp(a, "--http"))
			slot = &o->http;
		if (slot) {
			if (k + 1 >= argc)
				return err_set(e, ERR_USAGE, "%s needs a value", a);
			*slot = argv[++k];
			continue;
		}
		if (a[0] == '-' && a[1])
			return err_set(e, ERR_USAGE, "unknown option '%s' (see dsightd --help)", a);
		if (o->report)
			return err_set(e, ERR_USAGE, "more than one REPORT given ('%s' and '%s')", o->report, a);
		o->report = a;
	}
	if (!o->report)
		return err_set(e, ERR_USAGE, "missing REPORT (see dsightd --help)");
	if (o->name && o->path)
		return err_set(e, ERR_USAGE, "--name and --path are exclusive: give one");
	if (o->allow_remote && !o->http)
		return err_set(e, ERR_USAGE, "--allow-remote goes with --http [HOST:]PORT");
	if (o->name && !address_name_valid(o->name))
		return err_set(e, ERR_USAGE,
		               "Invalid --name '%s': use 1-64 letters, digits, '_' or '-', starting with a letter or digit",
		               o->name);
	if (lifetime_parse_timeout(timeout, &o->idle_ms, e) ||
	    lifetime_parse_start(start, &o->idle_start, e) ||
	    parse_conn_limit("--conn-idle-timeout", conn_idle, &o->conn_idle_ms, e) ||
	    parse_conn_limit("--frame-timeout", frame, &o->frame_ms, e))
		return e->code;
	return 0;
}

/* ---- startup steps ---- */

/* Appends value, single-quoted only when it needs it. */
static void put_shell(struct buf *b, const char *v)
{
	int plain = v[0] != '\0';
	for (const char *p = v; *p; p++)
		if (!strchr("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789@%+=:,./_-", *p))
			plain = 0;
	if (plain) {
		buf_puts(b, v);
		return;
	}
	buf_putc(b, '\'');
	for (const char *p = v; *p; p++) {
		if (*p == '\'')
			buf_puts(b, "'\\''");
		else
			buf_putc(b, *p);
	}
	buf_putc(b, '\'');
}

/* Everything has stopped: the files go, the loop ends. */
static void on_all_stopped(void *ctx)
{
	struct daemon *d = ctx;
	unlink(d->socket_path);
	unlink(d->token_path);
	unlink(d->lock_path);
	logf_(d, "session %s stopped: %s", d->name, d->why);
	lifetime_close(d->lt);
	d->lt = NULL;
	uv_close((uv_handle_t *)&d->sigint, NULL);
	uv_close((uv_handle_t *)&d->sigterm, NULL);
	uv_close((uv_handle_t *)&d->sighup, NULL);
}

static void on_stopped(void *ctx, const char *why)
{
	struct daemon *d = ctx;
	snprintf(d->why, sizeof d->why, "%s", why);
	if (d->http)
		http_finish(d->http, on_all_stopped, d); /* its last responses first */
	else
		on_all_stopped(d);
}

static void on_idle(void *ctx, const char *why)
{
	struct daemon *d = ctx;
	server_stop(d->srv, why);
}

static void on_signal(uv_signal_t *h, int sig)
{
	struct daemon *d = h->data;
	server_stop(d->srv, sig == SIGINT ? "signal INT" : sig == SIGHUP ? "signal HUP" : "signal TERM");
}

/* Steps 1-3 of "Starting" plus the loop setup; fills the record. */
static int start(struct daemon *d, struct buf *record, struct buf *guide, struct err *e)
{
	struct address a;
	const char *shown;
	struct server_info info;
	struct lifetime_opts lo;
	time_t now = time(NULL);
	struct tm tm;

	if (d->o.path) {
		/* report (and use) the absolute path when it fits */
		if (address_explicit_path(d->o.path, d->socket_path, e))
			return e->code;
		if (d->o.name)
			snprintf(d->name, sizeof d->name, "%s", d->o.name);
		else
			address_generate_name(d->name, sizeof d->name);
		shown = d->socket_path;
	} else {
		if (d->o.name)
			snprintf(d->name, sizeof d->name, "%s", d->o.name);
		else
			address_generate_name(d->name, sizeof d->name);
		if (address_resolve(d->name, 1, &a, e))
			return e->code;
		snprintf(d->socket_path, sizeof d->socket_path, "%s", a.path);
		shown = d->name;
	}
	address_lock_path(d->socket_path, d->lock_path, sizeof d->lock_path);

	/* 1. the report first: a live socket always means a usable session */
	if (session_open(d->o.report, d->o.http != NULL, !d->o.no_sql_engine,
	                 &d->sess, e))
		return e->code;
	/* 2. one server per name (a generated name that is taken: pick another) */
	for (int tries = 0;; tries++) {
		int busy;
		if (address_lock(d->socket_path, shown, &d->lock_fd, &busy, e) == 0)
			break;
		if (!busy || d->o.name || d->o.path || tries >= 16)
			return e->code;
		address_generate_name(d->name, sizeof d->name);
		if (address_resolve(d->name, 1, &a, e))
			return e->code;
		snprintf(d->socket_path, sizeof d->socket_path, "%s", a.path);
		address_lock_path(d->socket_path, d->lock_path, sizeof d->lock_path);
		shown = d->name;
	}
	/* the token file of a server that died goes with the lock */
	snprintf(d->token_path, sizeof d->token_path, "%s.http", d->socket_path);
	unlink(d->token_path);
	/* the HTTP port before the socket: a port in use leaves nothing */
	if (d->o.http && http_prepare(d->o.http, d->o.allow_remote, &d->http, e))
		return e->code;
	/* 3. stale socket, bind 0600, listen; from here a failure removes
	 * what this start created (see fail_cleanup) */
	if (address_bind(d->socket_path, 128, &d->listen_fd, e))
		return e->code;
	if (d->http && http_write_token(d->http, d->token_path, e))
		return e->code;
	/* the log only once the name is ours: a failed start leaves the
	 * previous server's log alone */
	if (d->o.log || d->o.daemonize) {
		if (d->o.log)
			snprintf(d->log_path, sizeof d->log_path, "%s", d->o.log);
		else
			snprintf(d->log_path, sizeof d->log_path, "%s.log", d->socket_path);
		if (address_open_beside(d->log_path, 1, &d->log_fd, e))
			return e->code;
	}

	if (uv_loop_init(&d->loop) != 0)
		return err_set(e, ERR_DATA, "Cannot start the event loop");
	d->loop_ready = 1;
	uv_update_time(&d->loop);
	gmtime_r(&now, &tm);
	strftime(d->started_utc, sizeof d->started_utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
	memset(&info, 0, sizeof info);
	info.session_name = d->name;
	info.socket_path = d->socket_path;
	info.http_url = d->http ? http_url(d->http) : NULL;
	info.started_utc = d->started_utc;
	info.started_ms = uv_now(&d->loop);
	info.idle_timeout_ms = d->o.idle_ms;
	info.conn_idle_ms = d->o.conn_idle_ms;
	info.frame_timeout_ms = d->o.frame_ms;
	info.log = log_line;
	info.log_ctx = d;
	lo.idle_ms = d->o.idle_ms;
	lo.mode = d->o.idle_start;
	lo.owner = d->owner;
	lo.orphaned_now = d->o.daemonize;
	lo.fn = on_idle;
	lo.ctx = d;
	if (lifetime_start(&d->loop, &lo, &d->lt, e))
		return e->code;
	if (dispatch_new(&d->loop, d->sess, d->lt, &d->dispatch, e) ||
	    server_start(&d->loop, d->listen_fd, &info, on_stopped, d, &d->srv, e))
		return e->code;
	d->listen_fd = -1;
	dispatch_attach(d->dispatch, d->srv);
	uv_signal_init(&d->loop, &d->sigint);
	uv_signal_init(&d->loop, &d->sigterm);
	uv_signal_init(&d->loop, &d->sighup);
	d->sigint.data = d->sigterm.data = d->sighup.data = d;
	uv_signal_start(&d->sigint, on_signal, SIGINT);
	uv_signal_start(&d->sigterm, on_signal, SIGTERM);
	uv_signal_start(&d->sighup, on_signal, SIGHUP);
	if (d->http && http_start(d->http, &d->loop, d->srv, d->dispatch, d->sess, log_line, d, e)) {
		server_stop(d->srv, "the HTTP server could not start");
		return e->code;
	}

	buf_printf(record, "pid=%d session=", (int)getpid());
	put_shell(record, d->name);
	buf_puts(record, " socket-path=");
	put_shell(record, d->socket_path);
	if (d->http) {
		buf_puts(record, " http=");
		put_shell(record, http_url(d->http));
	}
	if (d->o.idle_ms < 0)
		buf_puts(record, " idle-timeout=never");
	else if (d->o.idle_ms % 1000 == 0)
		buf_printf(record, " idle-timeout=%llds", (long long)(d->o.idle_ms / 1000));
	else {
		buf_puts(record, " idle-timeout=");
		jsonout_real(record, (double)d->o.idle_ms / 1000.0);
		buf_putc(record, 's');
	}
	buf_puts(record, " report=");
	put_shell(record, session_report(d->sess));
	buf_puts(record, " generation=");
	put_shell(record, session_generation(d->sess));
	buf_putc(record, '\n');

	const char *addr = d->o.path ? d->socket_path : d->name;
	buf_printf(guide,
	           "dsightd: serving %s as session %s\n"
	           "  query it:  dsight query --remote %s summary   (any kind and filters of dsight query)\n"
	           "  status:    dsight ctl status %s\n"
	           "  stop it:   dsight ctl kill-server %s\n",
	           session_report(d->sess), d->name, addr, addr, addr);
	if (d->http) {
		buf_printf(guide,
		           "  HTTP:      %s  (dsight query --remote %s summary; open the viewer\n"
		           "             with the URL `dsight ctl url %s` prints: it carries the token)\n",
		           http_url(d->http), http_url(d->http), addr);
		if (http_remote(d->http))
			buf_puts(guide, "  warning:   --allow-remote serves plain HTTP to the network (the token "
			                "travels unencrypted);\n"
			                "             an ssh tunnel (ssh -L 9001:127.0.0.1:9001 node) is the safer way\n");
	}
	if (d->o.idle_ms >= 0) {
		char dur[48];
		lifetime_format_duration(dur, sizeof dur, (uint64_t)d->o.idle_ms);
		buf_printf(guide, "  it exits by itself after %s idle (%s)\n", dur,
		           lifetime_mode(d->lt) == LIFETIME_ORPHANED
		                   ? "counted once the starting process is gone"
		                   : "counted from the last query");
	}
	return 0;
}

/* A failed start removes the socket it bound and the lock it took (both
 * while still holding the lock), so that nothing is left behind. */
static void fail_cleanup(struct daemon *d)
{
	if (d->lock_fd < 0)
		return;
	if (d->listen_fd >= 0 || d->srv)
		unlink(d->socket_path);
	unlink(d->token_path);
	unlink(d->lock_path);
}

/* The parent of --daemonize: relays the child's record or error. */
static int wait_child(int fd)
{
	struct buf b;
	char tmp[4096];
	ssize_t n;
	buf_init(&b, 1 << 20);
	while ((n = read(fd, tmp, sizeof tmp)) != 0) {
		if (n < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		buf_append(&b, tmp, (size_t)n);
	}
	close(fd);
	if (b.len > 3 && !memcmp(b.data, "OK\n", 3)) {
		char *nl = memchr(b.data + 3, '\n', b.len - 3);
		size_t rec = nl ? (size_t)(nl - b.data) - 2 : b.len - 3;
		fwrite(b.data + 3, 1, rec, stdout);
		fflush(stdout);
		fwrite(b.data + 3 + rec, 1, b.len - 3 - rec, stderr);
		buf_free(&b);
		return 0;
	}
	if (b.len > 2 && b.data[0] == 'E') {
		int status = b.data[1] - '0';
		fprintf(stderr, "dsightd: %s\n", b.data + 3);
		buf_free(&b);
		return status > 0 ? status : 1;
	}
	fputs("dsightd: the background server exited before it was ready\n", stderr);
	buf_free(&b);
	return 1;
}

static void detach_stdio(struct daemon *d)
{
	int null = open("/dev/null", O_RDWR);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		if (null > 2)
			close(null);
	}
	if (d->log_fd >= 0)
		dup2(d->log_fd, 2);
}

int main(int argc, char **argv)
{
	struct daemon d;
	struct err e;
	struct buf record, guide;
	int rc = 0;

	/* what sql statements may take of SQLite's heap (query_sql.h) */
	sqlite3_hard_heap_limit64(QUERY_SQL_HEAP_MAX);
	signal(SIGPIPE, SIG_IGN);
	memset(&d, 0, sizeof d);
	d.owner = getppid(); /* before any fork */
	d.lock_fd = d.listen_fd = d.log_fd = d.notify_fd = -1;
	err_clear(&e);
	if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
	                  (argc >= 3 && !strcmp(argv[1], "serve") &&
	                   (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "--version")) {
		puts("dsightd " DSIGHT_VERSION);
		return 0;
	}
	if (parse(argc, argv, &d.o, &e)) {
		fprintf(stderr, "dsightd: %s\n", e.msg);
		return 2;
	}
	if (d.o.daemonize) {
		int p[2];
		pid_t pid;
		if (pipe2(p, O_CLOEXEC) != 0) {
			perror("dsightd: pipe");
			return 1;
		}
		fflush(NULL);
		pid = fork();
		if (pid < 0) {
			perror("dsightd: fork");
			return 1;
		}
		if (pid > 0) {
			close(p[1]);
			return wait_child(p[0]);
		}
		close(p[0]);
		d.notify_fd = p[1];
		setsid();
	}

	buf_init(&record, 0);
	buf_init(&guide, 0);
	if (start(&d, &record, &guide, &e)) {
		if (d.notify_fd >= 0) {
			char head[4] = {'E', (char)('0' + err_exit_status(e.code)), '\n', 0};
			if (write(d.notify_fd, head, 3) < 0 || write(d.notify_fd, e.msg, strlen(e.msg)) < 0) {
				/* the parent reports a silent exit */
			}
		} else {
			fprintf(stderr, "dsightd: %s\n", e.msg);
		}
		rc = err_exit_status(e.code);
		fail_cleanup(&d);
		if (d.loop_ready) {
			/* let whatever handles were created close */
			lifetime_close(d.lt);
			d.lt = NULL;
			uv_run(&d.loop, UV_RUN_DEFAULT);
		}
		goto out;
	}
	if (d.notify_fd >= 0) {
		struct buf msg;
		buf_init(&msg, 0);
		buf_puts(&msg, "OK\n");
		buf_append(&msg, record.data, record.len);
		buf_append(&msg, guide.data, guide.len);
		if (write(d.log_fd, record.data, record.len) < 0 ||
		    write(d.log_fd, guide.data, guide.len) < 0) {
			/* the log is best effort */
		}
		detach_stdio(&d);
		if (write(d.notify_fd, msg.data, msg.len) < 0) {
			/* the parent is gone: keep serving */
		}
		close(d.notify_fd);
		d.notify_fd = -1;
		buf_free(&msg);
	} else {
		fwrite(record.data, 1, record.len, stdout);
		fflush(stdout);
		/* stdout is done: let go of it so that a caller capturing it (an
		 * agent's tool running `dsightd serve ... &`) sees EOF. */
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
		if (null >= 0) {
			dup2(null, 1);
			close(null);
		}
		fwrite(guide.data, 1, guide.len, stderr);
		if (d.log_fd >= 0 && (write(d.log_fd, record.data, record.len) < 0 ||
		                      write(d.log_fd, guide.data, guide.len) < 0)) {
			/* best effort */
		}
	}
	uv_run(&d.loop, UV_RUN_DEFAULT);
out:
	if (d.loop_ready)
		uv_loop_close(&d.loop);
	http_free(d.http);
	dispatch_free(d.dispatch);
	server_free(d.srv);
	session_close(d.sess);
	buf_free(&record);
	buf_free(&guide);
	if (d.listen_fd >= 0)
		close(d.listen_fd);
	if (d.lock_fd >= 0) {
		close(d.lock_fd);
	}
	if (d.log_fd >= 0)
		close(d.log_fd);
	return rc;
}
