/*
 * cmd_ctl: `dsight ctl kill-server ADDR`, `dsight ctl status ADDR` and
 * `dsight ctl list` (live sessions of the convention directory; files left
 * by dead servers are removed).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "address.h"
#include "cmd.h"
#include "base/jsonout.h"
#include "httpc.h"
#include "rpc_client.h"

#define KILL_WAIT_MS 30000

static const char usage[] =
	"usage: dsight ctl kill-server ADDR\n"
	"       dsight ctl status ADDR\n"
	"       dsight ctl url ADDR\n"
	"       dsight ctl list\n"
	"\n"
	"Manage warm sessions started by `dsightd serve`.  ADDR is a session name\n"
	"(socket $XDG_RUNTIME_DIR/dsight/NAME.sock or ${TMPDIR:-/tmp}/dsight-UID/NAME.sock),\n"
	"a socket path (absolute, or ending in .sock), or the HTTP address of a session\n"
	"started with --http: HOST:PORT or http://HOST:PORT/ (the token comes from\n"
	"?token=TOKEN in the address, DSIGHT_TOKEN, or the same user's session files).\n"
	"\n"
	"  kill-server ADDR  ask the session to stop (RPC shutdown), wait until its\n"
	"                    socket (or HTTP port) is gone, print \"Stopped session NAME (pid N)\"\n"
	"  status ADDR       print the session's status as JSON\n"
	"  url ADDR          print the URL of the session's viewer with its token (for a\n"
	"                    browser; a session started with --http, same user)\n"
	"  list              print a JSON array of the live sessions of the session\n"
	"                    directory; removes sockets and locks left by dead servers\n"
	"\n"
	"Exit status: 0 ok, 1 error, 2 usage, 3 no live session at ADDR.\n";

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* Resolves and connects; prints the message and returns the exit status
 * on failure (3: nothing listens), 0 when r is connected. */
static int open_addr(const char *addr, struct rpc_client *r)
{
	struct err e;
	int not_live = 0;
	err_clear(&e);
	if (rpc_client_open(r, addr, &not_live, &e) == 0)
		return 0;
	rpc_client_close(r);
	if (not_live) {
		fprintf(stderr, "%s\n", e.msg);
		return 3;
	}
	fprintf(stderr, "dsight ctl: %s\n", e.msg);
	return e.code == ERR_USAGE ? 2 : 1;
}

static int ctl_status(const char *addr)
{
	struct rpc_client r;
	struct rpc_span res;
	struct err e;
	int rc = open_addr(addr, &r);
	if (rc)
		return rc;
	err_clear(&e);
	if (rpc_client_call(&r, RPC_STATUS, &res, &e)) {
		fprintf(stderr, "dsight ctl: %s\n", e.msg);
		rpc_client_close(&r);
		return 1;
	}
	fwrite(res.text, 1, res.len, stdout);
	putchar('\n');
	rpc_client_close(&r);
	return fflush(stdout) == 0 ? 0 : 1;
}

/* HTTP: waits until the session's port refuses connections. */
static int wait_port_gone(struct rpc_client *r, const char *name, long long pid)
{
	for (int waited = 0; !httpc_gone(r->http); waited += 20) {
		if (waited >= KILL_WAIT_MS) {
			fprintf(stderr, "dsight ctl: session %s (pid %lld) accepted shutdown but %s still "
			        "accepts connections after %d s\n", name, pid, r->path, KILL_WAIT_MS / 1000);
			return 1;
		}
		sleep_ms(20);
	}
	return 0;
}

/* `ctl url ADDR`: the viewer's URL with the token, for the same user. */
static int ctl_url(const char *addr)
{
	struct httpc_addr ha;
	struct address a;
	struct err e;
	char token[HTTPC_TOKEN_MAX + 1], path[ADDRESS_PATH_MAX + 8], line[1024];
	struct rpc_client r;
	int rc;

	err_clear(&e);
	if (httpc_is_addr(addr)) {
		if (httpc_parse(addr, &ha, &e)) {
			fprintf(stderr, "dsight ctl: %s\n", e.msg);
			return 2;
		}
		if ((rc = open_addr(addr, &r)))
			return rc;
		rpc_client_close(&r);
		if (httpc_find_token(&ha, token)) {
			fprintf(stderr, "dsight ctl: no token for %s: it is not a session of this user's "
			        "session directory; set DSIGHT_TOKEN or add ?token=TOKEN\n", ha.url);
			return 1;
		}
		printf("%s?token=%s\n", ha.url, token);
		return fflush(stdout) == 0 ? 0 : 1;
	}
	if (address_resolve(addr, 0, &a, &e)) {
		fprintf(stderr, "dsight ctl: %s\n", e.msg);
		return 2;
	}
	if ((rc = open_addr(addr, &r)))
		return rc;
	rpc_client_close(&r);
	snprintf(path, sizeof path, "%s.http", a.path);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	ssize_t n = -1;
	if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid())
		n = read(fd, line, sizeof line - 1);
	if (fd >= 0)
		close(fd);
	char *sp = n > 0 ? (line[n] = 0, strchr(line, ' ')) : NULL;
	if (!sp) {
		fprintf(stderr, "dsight ctl: session %s serves no HTTP (start it with dsightd serve REPORT "
		        "--http PORT), or its token file %s is not yours\n", addr, path);
		return 1;
	}
	*sp = 0;
	sp[1 + strcspn(sp + 1, "\r\n")] = 0;
	printf("%s?token=%s\n", line, sp + 1);
	return fflush(stdout) == 0 ? 0 : 1;
}

static int ctl_kill(const char *addr)
{
	struct rpc_client r;
	struct rpc_span res;
	struct err e;
	json_t *hello;
	char name[ADDRESS_NAME_MAX + 1] = "?";
	char path[ADDRESS_PATH_MAX];
	long long pid = 0;
	struct stat st;
	int rc = open_addr(addr, &r);

	if (rc)
		return rc;
	err_clear(&e);
	/* over HTTP, status also names the socket to wait for */
	if (rpc_client_call(&r, r.http ? RPC_STATUS : RPC_HELLO, &res, &e)) {
		fprintf(stderr, "dsight ctl: %s\n", e.msg);
		rpc_client_close(&r);
		return 1;
	}
	hello = json_loadb(res.text, res.len, 0, NULL);
	snprintf(path, sizeof path, "%s", r.path);
	if (r.http)
		snprintf(path, sizeof path, "%s",
		         json_is_string(json_object_get(hello, "socket_path"))
		                 ? json_string_value(json_object_get(hello, "socket_path")) : "");
	if (json_is_string(json_object_get(hello, "session")))
		snprintf(name, sizeof name, "%s", json_string_value(json_object_get(hello, "session")));
	if (json_is_integer(json_object_get(hello, "pid")))
		pid = json_integer_value(json_object_get(hello, "pid"));
	json_decref(hello);
	if (rpc_client_call(&r, RPC_SHUTDOWN, &res, &e)) {
		fprintf(stderr, "dsight ctl: %s\n", e.msg);
		rpc_client_close(&r);
		return 1;
	}
	if (r.http && wait_port_gone(&r, name, pid)) {
		rpc_client_close(&r);
		return 1;
	}
	rpc_client_close(&r);
	/* over HTTP too: its socket goes last (when it is on this machine) */
	for (int waited = 0; path[0] && lstat(path, &st) == 0; waited += 20) {
		if (waited >= KILL_WAIT_MS) {
			fprintf(stderr, "dsight ctl: session %s (pid %lld) accepted shutdown but its socket %s is still there after %d s\n",
			        name, pid, path, KILL_WAIT_MS / 1000);
			return 1;
		}
		sleep_ms(20);
	}
	printf("Stopped session %s (pid %lld)\n", name, pid);
	return 0;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int ctl_list(void)
{
	char dir[4096], path[8192], lock[8200];
	struct err e;
	int exists = 0;
	DIR *dp;
	struct dirent *de;
	json_t *arr = json_array();
	struct buf out;

	err_clear(&e);
	if (address_socket_dir(dir, sizeof dir, 0, &exists, &e)) {
		fprintf(stderr, "dsight ctl: %s\n", e.msg);
		json_decref(arr);
		return err_exit_status(e.code);
	}
	dp = exists ? opendir(dir) : NULL;
	while (dp && (de = readdir(dp))) {
		const char *n = de->d_name;
		struct rpc_client r;
		struct rpc_span res;
		int not_live = 0;
		if (ends_with(n, ".sock.lock")) {
			/* a lock without a socket: a server that died before binding */
			snprintf(path, sizeof path, "%s/%.*s", dir, (int)(strlen(n) - 5), n);
			snprintf(lock, sizeof lock, "%s/%s", dir, n);
			struct stat st;
			if (lstat(path, &st) != 0 && errno == ENOENT)
				address_reap(NULL, lock);
			continue;
		}
		if (!ends_with(n, ".sock"))
			continue;
		snprintf(path, sizeof path, "%s/%s", dir, n);
		address_lock_path(path, lock, sizeof lock);
		if (strlen(path) >= ADDRESS_PATH_MAX)
			continue;
		if (rpc_client_connect(&r, path, &not_live, &e)) {
			rpc_client_close(&r);
			if (not_live && address_reap(path, lock)) {
				char tok[8300];
				snprintf(tok, sizeof tok, "%s.http", path);
				unlink(tok); /* its HTTP token file */
			}
			continue;
		}
		r.timeout_ms = 2000;
		if (rpc_client_call(&r, RPC_STATUS, &res, &e) == 0) {
			json_t *st = json_loadb(res.text, res.len, 0, NULL);
			if (json_is_object(st)) {
				static const char *const fields[] = {
					"session", "pid", "socket_path", "report", "generation", "idle_s",
				};
				json_t *o = json_object();
				for (size_t k = 0; k < sizeof fields / sizeof fields[0]; k++) {
					json_t *v = json_object_get(st, fields[k]);
					json_object_set(o, fields[k], v ? v : json_null());
				}
				json_array_append_new(arr, o);
			}
			json_decref(st);
		}
		rpc_client_close(&r);
	}
	if (dp)
		closedir(dp);
	buf_init(&out, 0);
	jsonout_tree(&out, arr, 0);
	buf_putc(&out, '\n');
	fwrite(out.data, 1, out.len, stdout);
	buf_free(&out);
	json_decref(arr);
	return fflush(stdout) == 0 ? 0 : 1;
}

int cmd_ctl_main(int argc, char **argv)
{
	const char *sub = argc > 1 ? argv[1] : NULL;
	if (!sub) {
		fputs(usage, stderr);
		return 2;
	}
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		fputs(usage, stdout);
		return 0;
	}
	if (!strcmp(sub, "list")) {
		if (argc != 2) {
			fputs("dsight ctl: list takes no argument\n", stderr);
			return 2;
		}
		return ctl_list();
	}
	if (!strcmp(sub, "kill-server") || !strcmp(sub, "status") || !strcmp(sub, "url")) {
		if (argc != 3 || argv[2][0] == '-') {
			if (argc == 3 && (!strcmp(argv[2], "--help") || !strcmp(argv[2], "-h"))) {
				fputs(usage, stdout);
				return 0;
			}
			fprintf(stderr, "dsight ctl: %s takes one ADDR (a session name, socket path or HOST:PORT)\n", sub);
			return 2;
		}
		if (!strcmp(sub, "url"))
			return ctl_url(argv[2]);
		return !strcmp(sub, "status") ? ctl_status(argv[2]) : ctl_kill(argv[2]);
	}
	fprintf(stderr, "dsight ctl: unknown subcommand '%s'\n\n%s", sub, usage);
	return 2;
}
