/* address: names, resolution, the socket directory rules (see address.h). */
#include "address.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *const adjectives[] = {
	"calm", "brave", "bright", "quick", "quiet", "gentle", "bold", "clever",
	"eager", "fancy", "happy", "jolly", "kind", "lively", "merry", "nimble",
	"proud", "silly", "swift", "witty", "zesty", "cosy", "daring", "fresh",
	"grand", "humble", "keen", "lucky", "mellow", "noble", "plucky", "sunny",
};
static const char *const colours[] = {
	"red", "blue", "green", "amber", "azure", "coral", "cyan", "gold",
	"indigo", "ivory", "jade", "lilac", "olive", "pink", "ruby", "teal",
};
static const char *const animals[] = {
	"otter", "badger", "falcon", "heron", "lynx", "marten", "newt", "owl",
	"panda", "puffin", "quail", "raven", "seal", "tapir", "viper", "walrus",
	"yak", "zebra", "beaver", "bison", "camel", "dingo", "egret", "ferret",
	"gecko", "hare", "ibis", "koala", "lemur", "moose", "narwhal", "ocelot",
};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

int address_name_valid(const char *name)
{
	size_t n = strlen(name);
	if (n < 1 || n > ADDRESS_NAME_MAX)
		return 0;
	for (size_t k = 0; k < n; k++) {
		char c = name[k];
		int alnum = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		            (c >= '0' && c <= '9');
		if (!alnum && (k == 0 || (c != '_' && c != '-')))
			return 0;
	}
	return 1;
}

void address_generate_name(char *out, size_t n)
{
	unsigned char r[3];
	if (getrandom(r, sizeof r, 0) != (ssize_t)sizeof r) {
		unsigned long t = (unsigned long)time(NULL) ^ (unsigned long)getpid();
		r[0] = (unsigned char)t;
		r[1] = (unsigned char)(t >> 8);
		r[2] = (unsigned char)(t >> 16);
	}
	snprintf(out, n, "%s-%s-%s", adjectives[r[0] % COUNT(adjectives)],
	         colours[r[1] % COUNT(colours)], animals[r[2] % COUNT(animals)]);
}

int address_check_path(const char *path, struct err *e)
{
	size_t n = strlen(path);
	if (n + 1 > ADDRESS_PATH_MAX)
		return err_set(e, ERR_USAGE,
		               "Socket path is %zu bytes, longer than the %d a unix socket allows: %s. "
		               "Use a shorter --path (or a shorter $XDG_RUNTIME_DIR/$TMPDIR)",
		               n, ADDRESS_PATH_MAX - 1, path);
	return 0;
}

/* 1 when dir is an existing directory owned by us with no group/other bits. */
static int private_dir(const char *dir)
{
	struct stat st;
	return stat(dir, &st) == 0 && S_ISDIR(st.st_mode) &&
	       st.st_uid == geteuid() && (st.st_mode & 077) == 0;
}

/* Checks an existing dsight directory (lstat: a symlink is refused). */
static int check_dir(const char *dir, struct err *e)
{
	struct stat st;
	if (lstat(dir, &st) != 0)
		return err_sys(e, ERR_USAGE, "Cannot inspect the session directory %s", dir);
	if (S_ISLNK(st.st_mode))
		return err_set(e, ERR_USAGE,
		               "Refusing the session directory %s: it is a symlink. "
		               "Remove it (rm %s) so dsight can create a private directory, or use --path",
		               dir, dir);
	if (!S_ISDIR(st.st_mode))
		return err_set(e, ERR_USAGE,
		               "Refusing the session directory %s: it is not a directory. "
		               "Remove it so dsight can create a private directory, or use --path",
		               dir);
	if (st.st_uid != geteuid())
		return err_set(e, ERR_USAGE,
		               "Refusing the session directory %s: it is owned by uid %u, not by you (uid %u). "
		               "Remove it, or point XDG_RUNTIME_DIR/TMPDIR elsewhere, or use --path",
		               dir, (unsigned)st.st_uid, (unsigned)geteuid());
	if (st.st_mode & 077)
		return err_set(e, ERR_USAGE,
		               "Refusing the session directory %s: its mode %04o gives access to group/other. "
		               "Fix it with: chmod 700 %s",
		               dir, (unsigned)(st.st_mode & 07777), dir);
	return 0;
}

int address_socket_dir(char *out, size_t n, int create, int *exists,
                       struct err *e)
{
	const char *xdg = getenv("XDG_RUNTIME_DIR");
	int len;

	if (xdg && xdg[0] == '/' && private_dir(xdg)) {
		len = snprintf(out, n, "%s/dsight", xdg);
	} else {
		const char *tmp = getenv("TMPDIR");
		if (!tmp || !tmp[0])
			tmp = "/tmp";
		len = snprintf(out, n, "%s/dsight-%u", tmp, (unsigned)geteuid());
	}
	if (len < 0 || (size_t)len >= n)
		return err_set(e, ERR_USAGE,
		               "Session directory path is too long; use --path with a shorter socket path");
	*exists = 1;
	if (create && mkdir(out, 0700) == 0)
		return 0;
	if (create && errno != EEXIST)
		return err_sys(e, ERR_USAGE, "Cannot create the session directory %s", out);
	if (!create) {
		struct stat st;
		if (lstat(out, &st) != 0 && errno == ENOENT) {
			*exists = 0;
			return 0;
		}
	}
	return check_dir(out, e);
}

static int is_tcp(const char *addr)
{
	if (strstr(addr, "://"))
		return 1;
	const char *colon = strrchr(addr, ':');
	if (!colon || !colon[1])
		return 0;
	for (const char *p = colon + 1; *p; p++)
		if (*p < '0' || *p > '9')
			return 0;
	return 1;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int address_resolve(const char *addr, int create, struct address *a,
                    struct err *e)
{
	char dir[4096];
	int exists;

	memset(a, 0, sizeof *a);
	if (!addr[0])
		return err_set(e, ERR_USAGE, "Empty session address");
	if (is_tcp(addr)) {
		a->kind = ADDRESS_TCP;
		return err_set(e, ERR_USAGE,
		               "%s is an HTTP address; here a session name or a unix socket "
		               "path is needed", addr);
	}
	a->kind = ADDRESS_SOCKET;
	if (addr[0] == '/' || ends_with(addr, ".sock"))
		return address_explicit_path(addr, a->path, e);
	if (!address_name_valid(addr))
		return err_set(e, ERR_USAGE,
		               "Invalid session name '%s': use 1-64 letters, digits, '_' or '-', "
		               "starting with a letter or digit (or give a socket path)", addr);
	a->by_name = 1;
	snprintf(a->name, sizeof a->name, "%s", addr);
	if (address_socket_dir(dir, sizeof dir, create, &exists, e))
		return e->code;
	size_t need = strlen(dir) + 1 + strlen(addr) + 5;
	if (need + 1 > ADDRESS_PATH_MAX)
		return err_set(e, ERR_USAGE,
		               "Socket path %s/%s.sock is %zu bytes, longer than the %d a unix socket allows. "
		               "Use a shorter --path", dir, addr, need, ADDRESS_PATH_MAX - 1);
	memcpy(a->path, dir, strlen(dir));
	a->path[strlen(dir)] = '/';
	memcpy(a->path + strlen(dir) + 1, addr, strlen(addr));
	memcpy(a->path + strlen(dir) + 1 + strlen(addr), ".sock", 6);
	return 0;
}

int address_explicit_path(const char *path, char *out, struct err *e)
{
	char cwd[4096];
	size_t n = strlen(path);

	if (address_check_path(path, e))
		return e->code;
	memcpy(out, path, n + 1);
	if (path[0] == '/' || !getcwd(cwd, sizeof cwd))
		return 0;
	size_t c = strlen(cwd);
	if (c + 1 + n + 1 > ADDRESS_PATH_MAX)
		return 0; /* relative to the working directory, as given */
	memcpy(out, cwd, c);
	out[c] = '/';
	memcpy(out + c + 1, path, n + 1);
	return 0;
}

void address_lock_path(const char *sock, char *out, size_t n)
{
	snprintf(out, n, "%s.lock", sock);
}

/* Checks that an opened file beside a socket is ours and regular. */
static int check_owned(int fd, const char *path, const char *what, struct err *e)
{
	struct stat st;
	if (fstat(fd, &st) != 0)
		return err_sys(e, ERR_DATA, "Cannot inspect the %s %s", what, path);
	if (!S_ISREG(st.st_mode))
		return err_set(e, ERR_USAGE, "Refusing the %s %s: it is not a regular file", what, path);
	if (st.st_uid != geteuid())
		return err_set(e, ERR_USAGE,
		               "Refusing the %s %s: it belongs to uid %u, not to you (uid %u). "
		               "Remove it or choose another path",
		               what, path, (unsigned)st.st_uid, (unsigned)geteuid());
	return 0;
}

/* open() without following a symlink, with a message that says so. */
static int open_nofollow(const char *path, int flags, const char *what, struct err *e)
{
	int fd = open(path, flags | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
	if (fd < 0 && errno == ELOOP)
		err_set(e, ERR_USAGE, "Refusing the %s %s: it is a symlink; remove it", what, path);
	else if (fd < 0)
		err_sys(e, ERR_DATA, "Cannot open the %s %s", what, path);
	return fd;
}

int address_lock(const char *sock, const char *shown, int *fd, int *busy,
                 struct err *e)
{
	char lock[ADDRESS_PATH_MAX + 8];

	*busy = 0;
	*fd = -1;
	address_lock_path(sock, lock, sizeof lock);
	for (int attempt = 0; attempt < 5; attempt++) {
		struct stat a, b;
		int f = open_nofollow(lock, O_RDWR | O_CREAT, "lock file", e);
		if (f < 0)
			return e->code;
		if (check_owned(f, lock, "lock file", e)) {
			close(f);
			return e->code;
		}
		if (flock(f, LOCK_EX | LOCK_NB) != 0) {
			*busy = errno == EWOULDBLOCK;
			close(f);
			if (*busy)
				return err_set(e, ERR_DATA,
				               "A live session already holds %s. Pick another --name/--path or stop it with: dsight ctl kill-server %s",
				               shown, shown);
			return err_sys(e, ERR_DATA, "Cannot lock %s", lock);
		}
		/* The previous holder may have unlinked the file meanwhile. */
		if (fstat(f, &a) == 0 && stat(lock, &b) == 0 &&
		    a.st_dev == b.st_dev && a.st_ino == b.st_ino) {
			*fd = f;
			return 0;
		}
		close(f);
	}
	return err_set(e, ERR_DATA, "Cannot settle the lock file %s (it keeps being replaced)", lock);
}

static void fill_sun(struct sockaddr_un *sa, const char *sock)
{
	memset(sa, 0, sizeof *sa);
	sa->sun_family = AF_UNIX;
	memcpy(sa->sun_path, sock, strlen(sock) + 1);
}

/* 1 when sock is a socket file that refuses connections (a dead server's),
 * 0 when something listens or it is not a socket, -1 when absent. */
static int dead_socket(const char *sock)
{
	struct sockaddr_un sa;
	struct stat st;
	int fd, rc, dead;

	if (lstat(sock, &st) != 0)
		return errno == ENOENT ? -1 : 0;
	if (!S_ISSOCK(st.st_mode) || strlen(sock) >= sizeof sa.sun_path)
		return 0;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return 0;
	fill_sun(&sa, sock);
	rc = connect(fd, (struct sockaddr *)&sa, sizeof sa);
	/* EAGAIN: a listener whose queue is full is alive */
	dead = rc != 0 && errno == ECONNREFUSED;
	close(fd);
	return dead;
}

int address_gone(const char *sock)
{
	return dead_socket(sock) != 0;
}

int address_bind(const char *sock, int backlog, int *fd, struct err *e)
{
	struct sockaddr_un sa;
	struct stat st;
	mode_t old;
	int f, rc;

	*fd = -1;
	if (address_check_path(sock, e))
		return e->code;
	if (lstat(sock, &st) == 0) {
		if (!S_ISSOCK(st.st_mode))
			return err_set(e, ERR_USAGE, /* a refused --path: exit 2 */
			               "%s exists and is not a socket; remove it or choose another --path",
			               sock);
		if (dead_socket(sock) == 0)
			return err_set(e, ERR_USAGE,
			               "%s is a live socket of another program (it accepts connections); "
			               "stop that program or choose another --path", sock);
		if (unlink(sock) != 0 && errno != ENOENT)
			return err_sys(e, ERR_DATA, "Cannot remove the stale socket %s", sock);
	}
	f = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f < 0)
		return err_sys(e, ERR_DATA, "Cannot create a socket");
	fill_sun(&sa, sock);
	old = umask(0177);
	rc = bind(f, (struct sockaddr *)&sa, sizeof sa);
	umask(old);
	if (rc != 0 || listen(f, backlog) != 0) {
		err_sys(e, ERR_DATA, "Cannot bind %s", sock);
		close(f);
		return ERR_DATA;
	}
	*fd = f;
	return 0;
}

int address_connect(const char *sock, int timeout_ms, int *fd, int *not_live,
                    struct err *e)
{
	struct sockaddr_un sa;
	struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
	int f;

	*fd = -1;
	*not_live = 0;
	if (address_check_path(sock, e))
		return e->code;
	/* A blocking connect with a send timeout: when the listen queue is
	 * full the kernel waits for room (up to the timeout) instead of
	 * answering EAGAIN as a non-blocking connect does. */
	f = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (f < 0)
		return err_sys(e, ERR_DATA, "Cannot create a socket");
	setsockopt(f, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	fill_sun(&sa, sock);
	while (connect(f, (struct sockaddr *)&sa, sizeof sa) != 0) {
		if (errno == EINTR)
			continue;
		if (errno == ENOENT || errno == ECONNREFUSED || errno == ENOTDIR)
			*not_live = 1;
		if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINPROGRESS)
			err_set(e, ERR_DATA, "Timed out after %d ms connecting to the session at %s "
			        "(its listen queue stayed full)", timeout_ms, sock);
		else
			err_sys(e, ERR_DATA, "Cannot connect to %s", sock);
		close(f);
		return ERR_DATA;
	}
	tv.tv_sec = 0;
	tv.tv_usec = 0;
	setsockopt(f, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	if (fcntl(f, F_SETFL, fcntl(f, F_GETFL) | O_NONBLOCK) != 0) {
		err_sys(e, ERR_DATA, "Cannot configure the socket");
		close(f);
		return ERR_DATA;
	}
	*fd = f;
	return 0;
}

int address_reap(const char *sock, const char *lock)
{
	int fd = open(lock, O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	int reaped = 1;

	if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) != 0) {
		close(fd);
		return 0;
	}
	if (sock) {
		int d = dead_socket(sock);
		if (d == 1)
			unlink(sock);
		else if (d == 0)
			reaped = 0; /* not a dead socket: leave it and its lock */
	}
	if (reaped)
		unlink(lock);
	if (fd >= 0)
		close(fd);
	return reaped;
}

int address_open_beside(const char *path, int truncate, int *fd,
                        struct err *e)
{
	int f = open_nofollow(path, O_WRONLY | O_CREAT | O_APPEND, "log file", e);
	*fd = -1;
	if (f < 0)
		return e->code;
	if (check_owned(f, path, "log file", e) ||
	    (truncate && ftruncate(f, 0) != 0 &&
	     err_sys(e, ERR_DATA, "Cannot truncate the log file %s", path))) {
		close(f);
		return e->code;
	}
	/* writes block as a file's do */
	fcntl(f, F_SETFL, fcntl(f, F_GETFL) & ~O_NONBLOCK);
	*fd = f;
	return 0;
}

void address_not_live(const struct address *a, char *out, size_t n)
{
	snprintf(out, n, "No live session at %s. Start one with: dsightd serve REPORT %s %s",
	         a->path, a->by_name ? "--name" : "--path", a->by_name ? a->name : a->path);
}
