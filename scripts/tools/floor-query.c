/*
 * floor-query: the floor of a one-shot query, for scripts/bench/session.
 *
 *   floor-query SOCKET [PARAMS_JSON]
 *
 * Does the least a one-shot client of a warm session can do: it is exec'd,
 * connects to the session's Unix socket, sends one query frame (a 4-byte
 * big-endian length and the JSON-RPC request, params {"kind":"summary"} by
 * default), reads one response frame and writes its body to stdout.  It
 * links the C library only (Makefile) and allocates nothing but the
 * response buffer, so what `dsight query --remote NAME summary` costs above
 * it is the client's own start-up and work.  Exit status 0 when a whole
 * frame came back, 1 otherwise.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static int read_all(int fd, unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = read(fd, p, n);
		if (k <= 0)
			return -1;
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

int main(int argc, char **argv)
{
	static char req[8192];
	struct sockaddr_un sa;
	unsigned char hdr[4];
	const char *params = argc > 2 ? argv[2] : "{\"kind\":\"summary\"}";

	if (argc < 2 || strlen(argv[1]) >= sizeof sa.sun_path) {
		fputs("usage: floor-query SOCKET [PARAMS_JSON]\n", stderr);
		return 2;
	}
	int n = snprintf(req + 4, sizeof req - 4,
	                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"query\","
	                 "\"params\":%s}", params);
	if (n < 0 || (size_t)n >= sizeof req - 4)
		return 2;
	req[0] = (char)((uint32_t)n >> 24);
	req[1] = (char)((uint32_t)n >> 16);
	req[2] = (char)((uint32_t)n >> 8);
	req[3] = (char)n;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	memset(&sa, 0, sizeof sa);
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, argv[1], strlen(argv[1]));
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) ||
	    write(fd, req, (size_t)n + 4) != n + 4 || read_all(fd, hdr, 4))
		return 1;
	size_t len = (size_t)hdr[0] << 24 | (size_t)hdr[1] << 16 |
	             (size_t)hdr[2] << 8 | hdr[3];
	unsigned char *body = malloc(len ? len : 1);
	if (!body || read_all(fd, body, len))
		return 1;
	fwrite(body, 1, len, stdout);
	putchar('\n');
	return 0;
}
