/* input: plain or gzip file reading (see input.h). */
#include "ingest/input.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define RAW_CHUNK (1u << 20)
#define OUT_CHUNK (1u << 20)
#define NSLOT 4

/* One chunk of inflated content handed from the thread to the reader. */
struct slot {
	char *data;
	size_t len;
	uint64_t consumed; /* file bytes read when the chunk was complete */
	int rc;            /* an error ends the stream */
	char msg[ERR_MSG_MAX];
};

struct input {
	int fd;
	char *path;
	int gzip;
	int eof;         /* the file is exhausted */
	int in_member;   /* inside a gzip member (inflate has started it) */
	int done;        /* content fully delivered */
	unsigned char *raw;
	size_t raw_len, raw_pos; /* plain: unread bytes of raw[] */
	z_stream zs;
	int zs_init;
	uint64_t consumed, size;
	/* the producer thread's ring of chunks */
	uint64_t handed; /* consumed as of the last chunk returned */
	pthread_t thread;
	int started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	struct slot slots[NSLOT];
	unsigned head, tail; /* filled slots are [head, tail) mod NSLOT */
	int held;            /* the reader holds slot head */
	int stop, finished;
};

/* Reads more file bytes into raw (whole buffer); sets eof at the end. */
static int fill_raw(struct input *in, struct err *e)
{
	ssize_t got;

	for (;;) {
		got = read(in->fd, in->raw, RAW_CHUNK);
		if (got >= 0)
			break;
		if (errno != EINTR)
			return err_sys(e, ERR_DATA, "%s: read failed", in->path);
	}
	in->raw_len = (size_t)got;
	in->raw_pos = 0;
	in->consumed += (uint64_t)got;
	if (got == 0)
		in->eof = 1;
	return 0;
}

int input_open(const char *path, struct input **out, struct err *e)
{
	struct input *in;
	struct stat st;
	int rc;

	*out = NULL;
	in = calloc(1, sizeof *in);
	if (!in || !(in->path = strdup(path)) || !(in->raw = malloc(RAW_CHUNK))) {
		if (in)
			free(in->path);
		free(in);
		return err_set(e, ERR_NOMEM, "out of memory");
	}
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		rc = err_sys(e, ERR_DATA, "%s: cannot open", path);
		goto fail;
	}
	posix_fadvise(in->fd, 0, 0, POSIX_FADV_SEQUENTIAL); /* deeper readahead */
	if (fstat(in->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			rc = err_set(e, ERR_DATA, "%s: is a directory", path);
			goto fail;
		}
		if (S_ISREG(st.st_mode))
			in->size = (uint64_t)st.st_size;
	}
	/* Enough bytes to see the magic (a read may return less). */
	if ((rc = fill_raw(in, e)))
		goto fail;
	while (in->raw_len < 2 && !in->eof) {
		ssize_t got = read(in->fd, in->raw + in->raw_len, RAW_CHUNK - in->raw_len);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = err_sys(e, ERR_DATA, "%s: read failed", path);
			goto fail;
		}
		if (got == 0)
			in->eof = 1;
		in->raw_len += (size_t)got;
		in->consumed += (uint64_t)got;
	}
	if (in->raw_len >= 2 && in->raw[0] == 0x1f && in->raw[1] == 0x8b) {
		in->gzip = 1;
		if (inflateInit2(&in->zs, 15 + 16) != Z_OK) {
			rc = err_set(e, ERR_NOMEM, "%s: cannot start gzip decoding", path);
			goto fail;
		}
		in->zs_init = 1;
		in->zs.next_in = in->raw;
		in->zs.avail_in = (uInt)in->raw_len;
		in->in_member = 1;
	}
	*out = in;
	return 0;
fail:
	input_close(in);
	return rc;
}

/* Plain content into dst: first the bytes read to sniff the magic, then
 * straight from the file. */
static int read_plain(struct input *in, char *dst, size_t cap, size_t *n,
                      struct err *e)
{
	*n = 0;
	if (in->raw_pos < in->raw_len) {
		size_t k = in->raw_len - in->raw_pos;
		if (k > cap)
			k = cap;
		memcpy(dst, in->raw + in->raw_pos, k);
		in->raw_pos += k;
		*n = k;
		return 0;
	}
	while (!in->eof) {
		ssize_t got = read(in->fd, dst, cap);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0)
			return err_sys(e, ERR_DATA, "%s: read failed", in->path);
		if (got == 0) {
			in->eof = 1;
			break;
		}
		in->consumed += (uint64_t)got;
		*n = (size_t)got;
		return 0;
	}
	return 0;
}

/* Skips the zero padding some tools put after the last member; returns 1
 * when another member starts, 0 at the clean end. */
static int next_member(struct input *in, struct err *e, int *rc)
{
	*rc = 0;
	for (;;) {
		while (in->zs.avail_in && *in->zs.next_in == 0)
			in->zs.next_in++, in->zs.avail_in--;
		if (in->zs.avail_in)
			break;
		if (in->eof)
			return 0;
		if ((*rc = fill_raw(in, e)))
			return 0;
		in->zs.next_in = in->raw;
		in->zs.avail_in = (uInt)in->raw_len;
	}
	if (*in->zs.next_in != 0x1f) {
		*rc = err_set(e, ERR_DATA, "%s: corrupt gzip data (trailing garbage after the last member)",
		              in->path);
		return 0;
	}
	inflateReset(&in->zs);
	in->in_member = 1;
	return 1;
}

static int read_gzip(struct input *in, char *dst, size_t cap, size_t *n,
                     struct err *e)
{
	int rc;

	in->zs.next_out = (unsigned char *)dst;
	in->zs.avail_out = (uInt)(cap > (1u << 30) ? (1u << 30) : cap);
	while (in->zs.avail_out && !in->done) {
		if (!in->in_member) {
			if (!next_member(in, e, &rc)) {
				if (rc)
					return rc;
				in->done = 1;
				break;
			}
		}
		if (!in->zs.avail_in) {
			if (in->eof)
				return err_set(e, ERR_DATA, "%s: truncated gzip data", in->path);
			if ((rc = fill_raw(in, e)))
				return rc;
			in->zs.next_in = in->raw;
			in->zs.avail_in = (uInt)in->raw_len;
			if (!in->raw_len)
				return err_set(e, ERR_DATA, "%s: truncated gzip data", in->path);
		}
		int z = inflate(&in->zs, Z_NO_FLUSH);
		if (z == Z_STREAM_END) {
			in->in_member = 0;
		} else if (z == Z_BUF_ERROR) {
			continue; /* needs more input: refilled above */
		} else if (z == Z_MEM_ERROR) {
			return err_set(e, ERR_NOMEM, "%s: out of memory decoding gzip", in->path);
		} else if (z != Z_OK) {
			return err_set(e, ERR_DATA, "%s: corrupt gzip data (%s)", in->path,
			               in->zs.msg ? in->zs.msg : "inflate failed");
		}
	}
	*n = (size_t)((char *)in->zs.next_out - dst);
	return 0;
}

/* The producer: reads (and inflates) into free slots until the end, an
 * error or stop. */
static void *producer(void *arg)
{
	struct input *in = arg;

	for (;;) {
		struct slot *sl;
		struct err e;
		size_t n = 0;

		pthread_mutex_lock(&in->mu);
		while (!in->stop && in->tail - in->head == NSLOT)
			pthread_cond_wait(&in->cv, &in->mu);
		if (in->stop) {
			pthread_mutex_unlock(&in->mu);
			return NULL;
		}
		sl = &in->slots[in->tail % NSLOT];
		pthread_mutex_unlock(&in->mu);

		err_clear(&e);
		sl->rc = in->gzip ? read_gzip(in, sl->data, OUT_CHUNK, &n, &e)
		                  : read_plain(in, sl->data, OUT_CHUNK, &n, &e);
		sl->len = sl->rc ? 0 : n;
		sl->consumed = in->consumed - (in->gzip ? in->zs.avail_in : 0);
		if (sl->rc)
			memcpy(sl->msg, e.msg, sizeof sl->msg);

		pthread_mutex_lock(&in->mu);
		in->tail++;
		if (sl->rc || n == 0)
			in->finished = 1;
		pthread_cond_broadcast(&in->cv);
		pthread_mutex_unlock(&in->mu);
		if (sl->rc || n == 0)
			return NULL;
	}
}

static int start_producer(struct input *in, struct err *e)
{
	for (int k = 0; k < NSLOT; k++)
		if (!(in->slots[k].data = malloc(OUT_CHUNK)))
			return err_set(e, ERR_NOMEM, "out of memory");
	if (pthread_mutex_init(&in->mu, NULL))
		return err_set(e, ERR_NOMEM, "cannot create a mutex");
	if (pthread_cond_init(&in->cv, NULL)) {
		pthread_mutex_destroy(&in->mu);
		return err_set(e, ERR_NOMEM, "cannot create a condition variable");
	}
	if (pthread_create(&in->thread, NULL, producer, in)) {
		pthread_cond_destroy(&in->cv);
		pthread_mutex_destroy(&in->mu);
		return err_set(e, ERR_NOMEM, "cannot start the reading thread");
	}
	in->started = 1;
	return 0;
}

static int next_chunk(struct input *in, const char **data, size_t *n,
                     struct err *e)
{
	struct slot *sl;
	int rc = 0;

	*n = 0;
	if (!in->started && (rc = start_producer(in, e)))
		return rc;
	pthread_mutex_lock(&in->mu);
	if (in->held) { /* give back the chunk returned last time */
		in->head++;
		in->held = 0;
		pthread_cond_broadcast(&in->cv);
	}
	while (in->head == in->tail)
		pthread_cond_wait(&in->cv, &in->mu);
	sl = &in->slots[in->head % NSLOT];
	pthread_mutex_unlock(&in->mu);
	if (sl->rc) {
		rc = err_set(e, sl->rc, "%s", sl->msg);
	} else if (sl->len) {
		in->held = 1;
		*data = sl->data;
		*n = sl->len;
	}
	in->handed = sl->consumed;
	return rc;
}

int input_next(struct input *in, const char **data, size_t *n, struct err *e)
{
	*data = NULL;
	return next_chunk(in, data, n, e);
}

int input_is_gzip(const struct input *in)
{
	return in->gzip;
}

uint64_t input_consumed(const struct input *in)
{
	return in->handed;
}

uint64_t input_size(const struct input *in)
{
	return in->size;
}

void input_close(struct input *in)
{
	if (!in)
		return;
	if (in->started) {
		pthread_mutex_lock(&in->mu);
		in->stop = 1;
		pthread_cond_broadcast(&in->cv);
		pthread_mutex_unlock(&in->mu);
		pthread_join(in->thread, NULL);
		pthread_cond_destroy(&in->cv);
		pthread_mutex_destroy(&in->mu);
	}
	for (int k = 0; k < NSLOT; k++)
		free(in->slots[k].data);
	if (in->zs_init)
		inflateEnd(&in->zs);
	if (in->fd >= 0)
		close(in->fd);
	free(in->raw);
	free(in->path);
	free(in);
}
