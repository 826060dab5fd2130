/* fdio: whole writes to a file descriptor (see fdio.h). */
#include "base/fdio.h"

#include <errno.h>
#include <unistd.h>

int fdio_write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return -1;
		c += k;
		n -= (size_t)k;
	}
	return 0;
}
