/* httpc: sessions over HTTP, client side (see httpc.h). */
#include "httpc.h"
#include "address.h"
#include "frame.h"

#include <curl/curl.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LIBCURL "libcurl.so.4"

/* The libcurl functions used, looked up at the first use. */
struct curl_api {
	void *lib;
	CURLcode (*global_init)(long);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
	CURLcode (*easy_perform)(CURL *);
	CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
	void (*easy_cleanup)(CURL *);
	const char *(*easy_strerror)(CURLcode);
	struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
	void (*slist_free_all)(struct curl_slist *);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_add_handle)(CURLM *, CURL *);
	CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
	CURLMcode (*multi_perform)(CURLM *, int *);
	CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
	CURLMsg *(*multi_info_read)(CURLM *, int *);
	CURLMcode (*multi_cleanup)(CURLM *);
};

enum body_kind { BODY_UNKNOWN, BODY_LINES, BODY_WHOLE };

struct httpc {
	struct httpc_addr a;
	char token[HTTPC_TOKEN_MAX + 1];
	struct curl_api c;
	CURL *easy;            /* kept: one connection for the requests */
	CURLM *multi;          /* drives easy, so an answer is read as it comes */
	struct curl_slist *headers;
	/* the POST in progress (httpc_stream) */
	int active, done;
	CURLcode res;
	long status;
	enum body_kind kind;   /* NDJSON lines, or one body */
	struct buf in;         /* received, from inpos not yet handed out */
	size_t inpos;
	int timeout_ms;
	int64_t last_ms;       /* when a byte last came */
};

int httpc_is_addr(const char *addr)
{
	const char *colon;
	if (strstr(addr, "://"))
		return 1;
	colon = strrchr(addr, ':');
	if (!colon || !colon[1])
		return 0;
	/* HOST:PORT, or HOST:PORT/ as copied from a URL */
	size_t n = strspn(colon + 1, "0123456789");
	return n > 0 && (!colon[1 + n] || !strcmp(colon + 1 + n, "/"));
}

int httpc_parse(const char *addr, struct httpc_addr *a, struct err *e)
{
	const char *p = addr, *hp, *pe, *colon;
	char *end;
	long port;
	size_t hl;

	memset(a, 0, sizeof *a);
	if (strstr(addr, "://")) {
		if (strncasecmp(addr, "http://", 7) != 0)
			return err_set(e, ERR_USAGE,
			               "Unsupported address %s: sessions speak plain http:// (use an ssh tunnel for "
			               "a remote node)", addr);
		p = addr + 7;
	}
	hp = p;
	pe = p + strcspn(p, "/?");
	if (hp[0] == '[') {
		const char *rb = memchr(hp, ']', (size_t)(pe - hp));
		if (!rb || rb[1] != ':')
			return err_set(e, ERR_USAGE, "Bad address %s: expected [IPV6]:PORT", addr);
		colon = rb + 1;
	} else {
		colon = memchr(hp, ':', (size_t)(pe - hp));
		if (colon && memchr(colon + 1, ':', (size_t)(pe - colon - 1)))
			return err_set(e, ERR_USAGE, "Bad address %s: write an IPv6 address as [ADDR]:PORT", addr);
	}
	if (!colon || colon == hp)
		return err_set(e, ERR_USAGE, "Bad address %s: expected HOST:PORT or http://HOST:PORT/", addr);
	hl = (size_t)(colon - hp);
	if (hl >= sizeof a->host)
		return err_set(e, ERR_USAGE, "Bad address %s: the host name is too long", addr);
	memcpy(a->host, hp, hl);
	a->host[hl] = 0;
	errno = 0;
	port = strtol(colon + 1, &end, 10);
	if (end != pe || end == colon + 1 || errno || port < 1 || port > 65535 || colon[1] == '-' ||
	    colon[1] == '+')
		return err_set(e, ERR_USAGE, "Bad address %s: the port must be a number from 1 to 65535", addr);
	a->port = (int)port;
	p = pe;
	if (*p == '/')
		p++;
	if (*p && *p != '?')
		return err_set(e, ERR_USAGE, "Bad address %s: a session's address has no path (use http://HOST:PORT/)", addr);
	if (*p == '?') {
		p++;
		if (strncmp(p, "token=", 6) != 0)
			return err_set(e, ERR_USAGE, "Bad address %s: the only parameter is ?token=TOKEN", addr);
		p += 6;
		if (strlen(p) > HTTPC_TOKEN_MAX || strspn(p, "0123456789abcdefABCDEF") != strlen(p))
			return err_set(e, ERR_USAGE, "Bad address: the token must be the session's hex token");
		snprintf(a->token, sizeof a->token, "%s", p);
	}
	snprintf(a->url, sizeof a->url, "http://%s:%d/", a->host, a->port);
	return 0;
}

static int loopback_name(const char *h)
{
	return !strcasecmp(h, "127.0.0.1") || !strcasecmp(h, "localhost") || !strcmp(h, "[::1]");
}

static int same_listener(const struct httpc_addr *x, const struct httpc_addr *y)
{
	if (x->port != y->port)
		return 0;
	return !strcasecmp(x->host, y->host) || (loopback_name(x->host) && loopback_name(y->host));
}

/* The token of one session file when its URL names a's listener. */
static int token_of_file(int dirfd, const char *name, const struct httpc_addr *a, char *out)
{
	char line[1024], *sp, *nl;
	struct httpc_addr fa;
	struct stat st;
	struct err e;
	ssize_t n;
	int fd = openat(dirfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != getuid()) {
		close(fd);
		return -1;
	}
	n = read(fd, line, sizeof line - 1);
	close(fd);
	if (n <= 0)
		return -1;
	line[n] = 0;
	if ((nl = strchr(line, '\n')))
		*nl = 0;
	if (!(sp = strchr(line, ' ')))
		return -1;
	*sp = 0;
	err_clear(&e);
	if (httpc_parse(line, &fa, &e) || !same_listener(&fa, a) || strlen(sp + 1) > HTTPC_TOKEN_MAX)
		return -1;
	snprintf(out, HTTPC_TOKEN_MAX + 1, "%s", sp + 1);
	return 0;
}

int httpc_find_token(const struct httpc_addr *a, char *out)
{
	char dir[4096];
	const char *env = getenv("DSIGHT_TOKEN");
	struct err e;
	int exists = 0, found = -1;
	DIR *dp;
	struct dirent *de;

	if (a->token[0]) {
		snprintf(out, HTTPC_TOKEN_MAX + 1, "%s", a->token);
		return 0;
	}
	if (env && env[0]) {
		snprintf(out, HTTPC_TOKEN_MAX + 1, "%s", env);
		return 0;
	}
	err_clear(&e);
	if (address_socket_dir(dir, sizeof dir, 0, &exists, &e) || !exists || !(dp = opendir(dir)))
		return -1;
	while (found != 0 && (de = readdir(dp))) {
		size_t n = strlen(de->d_name);
		if (n > 5 && !strcmp(de->d_name + n - 5, ".http"))
			found = token_of_file(dirfd(dp), de->d_name, a, out);
	}
	closedir(dp);
	return found;
}

/* Connects to a's listener within timeout_ms: 0, 1 refused (nothing
 * listens), -1 another failure (e filled). */
static int probe(const struct httpc_addr *a, int timeout_ms, struct err *e)
{
	char host[260], port[16];
	struct addrinfo hints, *res = NULL;
	int rc, fd, err = 0, result = -1;
	size_t hl = strlen(a->host);

	if (a->host[0] == '[') {
		memcpy(host, a->host + 1, hl - 2);
		host[hl - 2] = 0;
	} else {
		snprintf(host, sizeof host, "%s", a->host);
	}
	snprintf(port, sizeof port, "%d", a->port);
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	if ((rc = getaddrinfo(host, port, &hints, &res)) != 0) {
		err_set(e, ERR_DATA, "Cannot resolve %s: %s", a->host, gai_strerror(rc));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) != 0) {
		err = errno;
		if (err == EINPROGRESS) {
			struct pollfd p = {fd, POLLOUT, 0};
			socklen_t l = sizeof err;
			err = ETIMEDOUT;
			if (poll(&p, 1, timeout_ms) == 1)
				getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &l);
		}
	}
	if (fd < 0)
		err = errno;
	if (fd >= 0)
		close(fd);
	freeaddrinfo(res);
	if (err == 0)
		result = 0;
	else if (err == ECONNREFUSED)
		result = 1;
	else
		err_set(e, ERR_DATA, "Cannot connect to the session at %s: %s", a->url, strerror(err));
	return result;
}

static int load_curl(struct curl_api *c, struct err *e)
{
	if (c->lib)
		return 0;
	if (!(c->lib = dlopen(LIBCURL, RTLD_NOW | RTLD_LOCAL)))
		return err_set(e, ERR_DATA,
		               "Sessions over HTTP need libcurl (%s), which is not installed "
		               "(Debian: apt install libcurl4)", LIBCURL);
	/* dlsym's object pointer converted to the functions' types */
	*(void **)&c->global_init = dlsym(c->lib, "curl_global_init");
	*(void **)&c->easy_init = dlsym(c->lib, "curl_easy_init");
	*(void **)&c->easy_setopt = dlsym(c->lib, "curl_easy_setopt");
	*(void **)&c->easy_perform = dlsym(c->lib, "curl_easy_perform");
	*(void **)&c->easy_getinfo = dlsym(c->lib, "curl_easy_getinfo");
	*(void **)&c->easy_cleanup = dlsym(c->lib, "curl_easy_cleanup");
	*(void **)&c->easy_strerror = dlsym(c->lib, "curl_easy_strerror");
	*(void **)&c->slist_append = dlsym(c->lib, "curl_slist_append");
	*(void **)&c->slist_free_all = dlsym(c->lib, "curl_slist_free_all");
	*(void **)&c->multi_init = dlsym(c->lib, "curl_multi_init");
	*(void **)&c->multi_add_handle = dlsym(c->lib, "curl_multi_add_handle");
	*(void **)&c->multi_remove_handle = dlsym(c->lib, "curl_multi_remove_handle");
	*(void **)&c->multi_perform = dlsym(c->lib, "curl_multi_perform");
	*(void **)&c->multi_poll = dlsym(c->lib, "curl_multi_poll");
	*(void **)&c->multi_info_read = dlsym(c->lib, "curl_multi_info_read");
	*(void **)&c->multi_cleanup = dlsym(c->lib, "curl_multi_cleanup");
	if (!c->global_init || !c->easy_init || !c->easy_setopt || !c->easy_perform || !c->easy_getinfo ||
	    !c->easy_cleanup || !c->easy_strerror || !c->slist_append || !c->slist_free_all ||
	    !c->multi_init || !c->multi_add_handle || !c->multi_remove_handle || !c->multi_perform ||
	    !c->multi_poll || !c->multi_info_read || !c->multi_cleanup) {
		dlclose(c->lib);
		c->lib = NULL;
		return err_set(e, ERR_DATA, "%s lacks the functions dsight needs", LIBCURL);
	}
	/* plain http only: no TLS library to initialise (most of its cost) */
	if (c->global_init(CURL_GLOBAL_NOTHING) != CURLE_OK) {
		dlclose(c->lib);
		c->lib = NULL;
		return err_set(e, ERR_DATA, "Cannot initialise %s", LIBCURL);
	}
	return 0;
}

int httpc_open(const char *addr, int timeout_ms, struct httpc **out, int *not_live,
               struct err *e)
{
	struct httpc *h = calloc(1, sizeof *h);
	char auth[HTTPC_TOKEN_MAX + 40];
	int rc;

	*not_live = 0;
	if (!h)
		return err_set(e, ERR_NOMEM, "Out of memory");
	if (httpc_parse(addr, &h->a, e)) {
		free(h);
		return e->code;
	}
	rc = probe(&h->a, timeout_ms, e);
	if (rc != 0) {
		if (rc == 1) {
			*not_live = 1;
			err_set(e, ERR_DATA, "No live session at %s. Start one with: dsightd serve REPORT --http %d",
			        h->a.url, h->a.port);
		}
		free(h);
		return e->code;
	}
	if (httpc_find_token(&h->a, h->token) != 0)
		h->token[0] = 0; /* the session says what is missing */
	buf_init(&h->in, FRAME_RESPONSE_MAX + 4096);
	if (load_curl(&h->c, e) || !(h->easy = h->c.easy_init()) || !(h->multi = h->c.multi_init())) {
		if (!e->code)
			err_set(e, ERR_NOMEM, "Out of memory");
		httpc_close(h);
		return e->code;
	}
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", h->token);
	h->headers = h->c.slist_append(NULL, "Content-Type: application/json");
	h->headers = h->c.slist_append(h->headers, "Expect:");
	/* a streamed sql answer comes as NDJSON, one message a line */
	h->headers = h->c.slist_append(h->headers, "Accept: application/x-ndjson, application/json");
	if (h->token[0])
		h->headers = h->c.slist_append(h->headers, auth);
	*out = h;
	return 0;
}

void httpc_close(struct httpc *h)
{
	if (!h)
		return;
	httpc_abort(h);
	if (h->headers)
		h->c.slist_free_all(h->headers);
	if (h->multi)
		h->c.multi_cleanup(h->multi);
	if (h->easy)
		h->c.easy_cleanup(h->easy);
	buf_free(&h->in);
	if (h->c.lib)
		dlclose(h->c.lib);
	free(h);
}

const char *httpc_url(const struct httpc *h)
{
	return h->a.url;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t on_data(char *p, size_t size, size_t n, void *ctx)
{
	struct httpc *h = ctx;
	if (h->kind == BODY_UNKNOWN) {
		char *ct = NULL;
		h->c.easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &h->status);
		h->c.easy_getinfo(h->easy, CURLINFO_CONTENT_TYPE, &ct);
		h->kind = h->status == 200 && ct && !strncasecmp(ct, "application/x-ndjson", 20)
		          ? BODY_LINES : BODY_WHOLE;
	}
	buf_append(&h->in, p, size * n);
	h->last_ms = now_ms();
	return h->in.failed ? 0 : size * n;
}

/* The "error" member of a JSON error body, else a short excerpt. */
static void server_said(const struct buf *b, char *out, size_t n)
{
	const char *k = b->len ? strstr(b->data, "\"error\":\"") : NULL;
	size_t len = 0;
	if (k) {
		k += 9;
		while (k[len] && k[len] != '"' && len + 1 < n)
			len++;
		memcpy(out, k, len);
	}
	out[len] = 0;
}

void httpc_abort(struct httpc *h)
{
	if (h->active && !h->done)
		h->c.multi_remove_handle(h->multi, h->easy);
	h->active = h->done = 0;
	buf_reset(&h->in);
	h->inpos = 0;
}

int httpc_stream(struct httpc *h, const char *body, size_t len, int timeout_ms, struct err *e)
{
	struct curl_api *c = &h->c;
	char url[HTTPC_URL_MAX + 8];

	httpc_abort(h);
	snprintf(url, sizeof url, "%srpc", h->a.url);
	c->easy_setopt(h->easy, CURLOPT_URL, url);
	c->easy_setopt(h->easy, CURLOPT_NOPROXY, "*");
	c->easy_setopt(h->easy, CURLOPT_NOSIGNAL, 1L);
	c->easy_setopt(h->easy, CURLOPT_POST, 1L);
	c->easy_setopt(h->easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	c->easy_setopt(h->easy, CURLOPT_COPYPOSTFIELDS, body);
	c->easy_setopt(h->easy, CURLOPT_HTTPHEADER, h->headers);
	c->easy_setopt(h->easy, CURLOPT_WRITEFUNCTION, on_data);
	c->easy_setopt(h->easy, CURLOPT_WRITEDATA, h);
	c->easy_setopt(h->easy, CURLOPT_CONNECTTIMEOUT_MS, 5000L);
	h->kind = BODY_UNKNOWN;
	h->status = 0;
	h->res = CURLE_OK;
	h->timeout_ms = timeout_ms;
	h->last_ms = now_ms();
	if (c->multi_add_handle(h->multi, h->easy) != CURLM_OK)
		return err_set(e, ERR_NOMEM, "Cannot start a request to the session at %s", h->a.url);
	h->active = 1;
	return 0;
}

/* Moves the transfer on: what arrived is in h->in; h->done once over. */
static void pump(struct httpc *h)
{
	struct curl_api *c = &h->c;
	int running = 0, n;
	size_t before = h->in.len;
	CURLMsg *m;
	int64_t left;

	c->multi_perform(h->multi, &running);
	while ((m = c->multi_info_read(h->multi, &n)))
		if (m->msg == CURLMSG_DONE && m->easy_handle == h->easy) {
			h->res = m->data.result;
			h->done = 1;
		}
	if (h->done) {
		c->easy_getinfo(h->easy, CURLINFO_RESPONSE_CODE, &h->status);
		c->multi_remove_handle(h->multi, h->easy);
		return;
	}
	if (h->in.len != before)
		return;
	left = h->last_ms + h->timeout_ms - now_ms();
	if (left <= 0) { /* nothing came for the read timeout */
		c->multi_remove_handle(h->multi, h->easy);
		h->res = CURLE_OPERATION_TIMEDOUT;
		h->done = 1;
		return;
	}
	c->multi_poll(h->multi, NULL, 0, left < 1000 ? (int)left : 1000, NULL);
}

/* The transfer is over and no line is left: its verdict. */
static int verdict(struct httpc *h, char **out, size_t *out_len, struct err *e)
{
	char said[600];
	CURLcode rc = h->res;
	long status = h->status;

	h->active = 0;
	if (rc == CURLE_OPERATION_TIMEDOUT)
		return err_set(e, ERR_DATA,
		               "Timed out after %d s waiting for the session at %s (the query may still be "
		               "running there; DSIGHT_REMOTE_TIMEOUT=SECONDS waits longer)",
		               h->timeout_ms / 1000, h->a.url);
	if (rc == CURLE_WRITE_ERROR)
		return err_set(e, ERR_DATA, "The response of the session at %s exceeds the 64 MiB limit", h->a.url);
	if (rc != CURLE_OK) {
		if (httpc_gone(h))
			return err_set(e, ERR_DATA,
			               "The session at %s went away before answering: nothing listens there "
			               "any more (it stopped or crashed; its log may say why)", h->a.url);
		return err_set(e, ERR_DATA, "Lost the connection to the session at %s: %s", h->a.url,
		               h->c.easy_strerror(rc));
	}
	if (h->kind == BODY_LINES) {
		if (h->inpos < h->in.len)
			return err_set(e, ERR_DATA, "The session at %s ended its answer in the middle of a line",
			               h->a.url);
		return 0; /* every line was handed out */
	}
	buf_putc(&h->in, 0); /* NUL-terminated */
	server_said(&h->in, said, sizeof said);
	if (status == 200 && !h->in.failed) {
		*out = buf_detach(&h->in, out_len);
		(*out_len)--;
		return 0;
	}
	if (status == 204)
		return 0;
	if (status == 401)
		return err_set(e, ERR_DATA,
		               "The session at %s refused the token; give it with DSIGHT_TOKEN=TOKEN or "
		               "%s?token=TOKEN, or run as the user who started it (dsight ctl url NAME "
		               "prints the URL with its token)", h->a.url, h->a.url);
	return err_set(e, ERR_DATA, "The session at %s answered HTTP %ld%s%s", h->a.url, status,
	               said[0] ? ": " : "", said);
}

int httpc_next(struct httpc *h, char **out, size_t *out_len, struct err *e)
{
	*out = NULL;
	*out_len = 0;
	while (h->active) {
		char *nl = h->kind == BODY_LINES
		           ? memchr(h->in.data + h->inpos, '\n', h->in.len - h->inpos) : NULL;
		if (nl) {
			size_t n = (size_t)(nl - (h->in.data + h->inpos));
			if (!(*out = malloc(n + 1)))
				return err_set(e, ERR_NOMEM, "Out of memory");
			memcpy(*out, h->in.data + h->inpos, n);
			(*out)[n] = 0;
			*out_len = n;
			h->inpos += n + 1;
			if (h->inpos == h->in.len) {
				buf_reset(&h->in);
				h->inpos = 0;
			} else if (h->inpos >= ((size_t)1 << 20)) {
				memmove(h->in.data, h->in.data + h->inpos, h->in.len - h->inpos);
				h->in.len -= h->inpos;
				h->inpos = 0;
			}
			return 0;
		}
		if (h->done) {
			int rc = verdict(h, out, out_len, e);
			buf_reset(&h->in);
			h->inpos = 0;
			return rc;
		}
		pump(h);
	}
	return 0;
}

int httpc_post(struct httpc *h, const char *body, size_t len, int timeout_ms,
               char **out, size_t *out_len, struct err *e)
{
	struct buf all;
	char *msg;
	size_t mlen;
	int rc;

	*out = NULL;
	*out_len = 0;
	if ((rc = httpc_stream(h, body, len, timeout_ms, e)))
		return rc;
	buf_init(&all, FRAME_RESPONSE_MAX);
	/* a streamed answer's lines, joined (one line: the answer) */
	while (!(rc = httpc_next(h, &msg, &mlen, e)) && msg) {
		if (all.len)
			buf_putc(&all, '\n');
		buf_append(&all, msg, mlen);
		free(msg);
	}
	if (!rc && all.len) {
		buf_putc(&all, 0);
		if (all.failed) {
			buf_free(&all);
			return err_set(e, ERR_DATA, "The response of the session at %s exceeds the 64 MiB limit",
			               h->a.url);
		}
		*out = buf_detach(&all, out_len);
		(*out_len)--;
	}
	buf_free(&all);
	return rc;
}

int httpc_gone(const struct httpc *h)
{
	struct err e;
	err_clear(&e);
	return probe(&h->a, 1000, &e) == 1;
}
