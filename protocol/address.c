/* address: names, resolution, the socket directory rules (see address.h). */
#include "address.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
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
		               "TCP address %s: this transport is not served yet; "
		               "use a session name or a unix socket path", addr);
	}
	a->kind = ADDRESS_SOCKET;
	if (addr[0] == '/' || ends_with(addr, ".sock")) {
		if (address_check_path(addr, e))
			return e->code;
		snprintf(a->path, sizeof a->path, "%s", addr);
		return 0;
	}
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
