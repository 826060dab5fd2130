/* http_auth: the listener's address, the token, Host/Origin rules (see
 * http_auth.h). */
#include "http_auth.h"
#include "address.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#define BACKLOG 512 /* a burst of connections waits for accept, not for a SYN retry */

/* Splits spec into host (default 127.0.0.1) and port. */
static int split(const char *spec, char *host, size_t n, long *port, struct err *e)
{
	const char *colon, *ps;
	char *end;
	if (!spec[0])
		return err_set(e, ERR_USAGE, "--http needs [HOST:]PORT, such as 9001 or 127.0.0.1:9001");
	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');
		if (!rb || rb[1] != ':' || (size_t)(rb - spec - 1) >= n)
			return err_set(e, ERR_USAGE, "--http '%s': write an IPv6 address as [ADDR]:PORT", spec);
		memcpy(host, spec + 1, (size_t)(rb - spec - 1));
		host[rb - spec - 1] = 0;
		ps = rb + 2;
	} else if ((colon = strrchr(spec, ':')) != NULL) {
		if (memchr(spec, ':', (size_t)(colon - spec)))
			return err_set(e, ERR_USAGE, "--http '%s': write an IPv6 address as [ADDR]:PORT", spec);
		if ((size_t)(colon - spec) >= n || colon == spec)
			return err_set(e, ERR_USAGE, "--http '%s': expected [HOST:]PORT", spec);
		memcpy(host, spec, (size_t)(colon - spec));
		host[colon - spec] = 0;
		ps = colon + 1;
	} else {
		snprintf(host, n, "127.0.0.1");
		ps = spec;
	}
	errno = 0;
	*port = strtol(ps, &end, 10);
	if (!*ps || *end || *port < 0 || *port > 65535 || errno || strspn(ps, "0123456789") != strlen(ps))
		return err_set(e, ERR_USAGE, "--http '%s': the port must be a number from 0 to 65535 (0 picks a free one)", spec);
	return 0;
}

static int is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *a = (const struct sockaddr_in *)ss;
		return (ntohl(a->sin_addr.s_addr) >> 24) == 127;
	}
	if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *a = (const struct sockaddr_in6 *)ss;
		return IN6_IS_ADDR_LOOPBACK(&a->sin6_addr);
	}
	return 0;
}

static int is_wildcard(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return ((const struct sockaddr_in *)ss)->sin_addr.s_addr == htonl(INADDR_ANY);
	return IN6_IS_ADDR_UNSPECIFIED(&((const struct sockaddr_in6 *)ss)->sin6_addr);
}

/* host -> an address; names only with allow_remote (localhost is always
 * 127.0.0.1, never looked up). */
static int resolve(const char *host, int allow_remote, struct sockaddr_storage *ss,
                   socklen_t *len, struct err *e)
{
	struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
	memset(ss, 0, sizeof *ss);
	if (!strcasecmp(host, "localhost"))
		host = "127.0.0.1";
	if (inet_pton(AF_INET, host, &a4->sin_addr) == 1) {
		a4->sin_family = AF_INET;
		*len = sizeof *a4;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &a6->sin6_addr) == 1) {
		a6->sin6_family = AF_INET6;
		*len = sizeof *a6;
		return 0;
	}
	if (!allow_remote)
		return err_set(e, ERR_USAGE,
		               "--http host '%s' is not a loopback address (127.0.0.1, localhost, [::1]); "
		               "to serve the network add --allow-remote, though an ssh tunnel "
		               "(ssh -L 9001:127.0.0.1:9001 node) is safer", host);
	struct addrinfo hints, *res = NULL;
	memset(&hints, 0, sizeof hints);
	hints.ai_socktype = SOCK_STREAM;
	int rc = getaddrinfo(host, NULL, &hints, &res);
	if (rc != 0 || !res)
		return err_set(e, ERR_USAGE, "--http host '%s': %s", host, gai_strerror(rc));
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

static void add_host(struct http_auth *a, const char *host, int port)
{
	if (a->nhosts >= HTTP_AUTH_HOSTS)
		return;
	snprintf(a->hosts[a->nhosts], sizeof a->hosts[0], "%s:%d", host, port);
	for (int k = 0; k < a->nhosts; k++)
		if (!strcasecmp(a->hosts[k], a->hosts[a->nhosts]))
			return;
	a->nhosts++;
}

int http_auth_listen(const char *spec, int allow_remote, struct http_auth *a,
                     int *fd, struct err *e)
{
	char host[256], num[INET6_ADDRSTRLEN], shown[300];
	struct sockaddr_storage ss;
	socklen_t len;
	long port = 0;
	int s, one = 1;

	memset(a, 0, sizeof *a);
	*fd = -1;
	if (split(spec, host, sizeof host, &port, e) || resolve(host, allow_remote, &ss, &len, e))
		return e->code;
	a->remote = !is_loopback(&ss);
	if (a->remote && !allow_remote)
		return err_set(e, ERR_USAGE,
		               "--http host '%s' is not a loopback address (127.0.0.1, localhost, [::1]); "
		               "to serve the network add --allow-remote, though an ssh tunnel "
		               "(ssh -L 9001:127.0.0.1:9001 node) is safer", host);
	a->any_host = allow_remote && is_wildcard(&ss);
	if (ss.ss_family == AF_INET)
		((struct sockaddr_in *)&ss)->sin_port = htons((uint16_t)port);
	else
		((struct sockaddr_in6 *)&ss)->sin6_port = htons((uint16_t)port);
	inet_ntop(ss.ss_family, ss.ss_family == AF_INET ? (void *)&((struct sockaddr_in *)&ss)->sin_addr
	                                                 : (void *)&((struct sockaddr_in6 *)&ss)->sin6_addr,
	          num, sizeof num);
	snprintf(shown, sizeof shown, ss.ss_family == AF_INET6 ? "[%s]" : "%s", num);
	s = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (s < 0)
		return err_sys(e, ERR_DATA, "Cannot create the HTTP listener");
	setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ss.ss_family == AF_INET6)
		setsockopt(s, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(s, (struct sockaddr *)&ss, len) != 0 || listen(s, BACKLOG) != 0) {
		int err = errno;
		close(s);
		errno = err;
		if (err == EADDRINUSE)
			return err_set(e, ERR_DATA,
			               "Cannot listen on http://%s:%ld/: the port is in use (pick another "
			               "--http PORT, or 0 for a free one)", shown, port);
		return err_sys(e, ERR_DATA, "Cannot listen on http://%s:%ld/", shown, port);
	}
	len = sizeof ss;
	if (getsockname(s, (struct sockaddr *)&ss, &len) == 0)
		port = ntohs(ss.ss_family == AF_INET ? ((struct sockaddr_in *)&ss)->sin_port
		                                     : ((struct sockaddr_in6 *)&ss)->sin6_port);
	a->port = (int)port;
	snprintf(a->url, sizeof a->url, "http://%s:%d/", shown, a->port);
	add_host(a, "127.0.0.1", a->port);
	add_host(a, "localhost", a->port);
	add_host(a, "[::1]", a->port);
	add_host(a, shown, a->port);
	if (strchr(host, ':'))
		snprintf(shown, sizeof shown, "[%s]", host);
	else
		snprintf(shown, sizeof shown, "%s", host);
	add_host(a, shown, a->port);
	*fd = s;
	return 0;
}

int http_auth_new_token(struct http_auth *a, struct err *e)
{
	unsigned char raw[HTTP_AUTH_TOKEN_LEN / 2];
	size_t got = 0;
	static const char hex[] = "0123456789abcdef";
	while (got < sizeof raw) {
		ssize_t n = getrandom(raw + got, sizeof raw - got, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return err_sys(e, ERR_DATA, "Cannot make the session token");
		}
		got += (size_t)n;
	}
	for (size_t k = 0; k < sizeof raw; k++) {
		a->token[2 * k] = hex[raw[k] >> 4];
		a->token[2 * k + 1] = hex[raw[k] & 15];
	}
	a->token[HTTP_AUTH_TOKEN_LEN] = 0;
	return 0;
}

int http_auth_write_file(const struct http_auth *a, const char *path, struct err *e)
{
	char line[512];
	int fd, n = snprintf(line, sizeof line, "%s %s\n", a->url, a->token);
	if (address_open_beside(path, 1, &fd, e))
		return e->code;
	if (write(fd, line, (size_t)n) != n) {
		int err = errno;
		close(fd);
		errno = err;
		return err_sys(e, ERR_DATA, "Cannot write %s", path);
	}
	close(fd);
	return 0;
}

int http_auth_host_ok(const struct http_auth *a, const char *host)
{
	if (!host || !host[0])
		return 0;
	if (a->any_host)
		return 1;
	for (int k = 0; k < a->nhosts; k++) {
		if (!strcasecmp(host, a->hosts[k]))
			return 1;
		/* port 80: a browser leaves it out */
		size_t hl = strlen(host);
		if (a->port == 80 && !strncasecmp(host, a->hosts[k], hl) &&
		    !strcmp(a->hosts[k] + hl, ":80"))
			return 1;
	}
	return 0;
}

int http_auth_origin_ok(const char *origin, const char *host)
{
	if (!origin)
		return 1;
	return host && !strncasecmp(origin, "http://", 7) && !strcasecmp(origin + 7, host);
}

int http_auth_token_ok(const struct http_auth *a, const char *t)
{
	unsigned char diff = 0;
	size_t n;
	if (!t)
		return 0;
	n = strnlen(t, HTTP_AUTH_TOKEN_LEN + 1);
	/* every byte of the token is compared whatever t holds */
	for (size_t k = 0; k < HTTP_AUTH_TOKEN_LEN; k++)
		diff |= (unsigned char)(a->token[k] ^ (k < n ? t[k] : 0));
	return (diff | (n != HTTP_AUTH_TOKEN_LEN)) == 0;
}

/* Copies at most HTTP_AUTH_TOKEN_LEN + 1 bytes of v up to a stop byte. */
static void copy_token(const char *v, const char *stops, char *out)
{
	size_t n = strcspn(v, stops);
	if (n > HTTP_AUTH_TOKEN_LEN + 1)
		n = HTTP_AUTH_TOKEN_LEN + 1;
	memcpy(out, v, n);
	out[n] = 0;
}

int http_auth_request_token(const char *authorization, const char *cookie, char *out)
{
	out[0] = 0;
	if (authorization && !strncasecmp(authorization, "Bearer ", 7)) {
		const char *v = authorization + 7;
		while (*v == ' ')
			v++;
		copy_token(v, " \t", out);
		return 1;
	}
	for (const char *p = cookie; p && *p;) {
		while (*p == ' ' || *p == ';')
			p++;
		if (!strncmp(p, "dsight_token=", 13)) {
			copy_token(p + 13, "; \t", out);
			return 1;
		}
		p = strchr(p, ';');
	}
	return 0;
}
