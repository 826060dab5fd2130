/*
 * session-load: load and latency driver for warm sessions (tests and
 * scripts/bench/session).
 *
 *   session-load rpc SOCKET CLIENTS QUERIES PARAMS_JSON
 *       CLIENTS threads, each on its own connection: hello, then QUERIES
 *       `query` requests with PARAMS_JSON, one at a time.  Every reply must
 *       be a result.  Prints {"clients", "queries", "errors", "seconds",
 *       "qps", "p50_us", "p99_us", "max_us"}; exit 1 on any error.
 *   session-load spawn RUNS CMD [ARGS...]
 *       Runs CMD RUNS times (stdout to /dev/null), timing each end to end,
 *       process start included.  Prints {"runs", "errors", "p50_ms",
 *       "p99_ms", "mean_ms", "cpu_p50_ms"} (cpu: the child's user + system
 *       time, a figure a loaded machine does not inflate); exit 1 when a
 *       run fails.
 */
#include <fcntl.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/jsonout.h"
#include "rpc_client.h"

extern char **environ;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double pct(double *v, size_t n, double q)
{
	if (!n)
		return 0;
	size_t k = (size_t)(q * (double)(n - 1) + 0.5);
	return v[k < n ? k : n - 1];
}

struct client {
	pthread_t th;
	const char *path, *params;
	long queries;
	double *lat;   /* seconds per query */
	long done, errors;
	char first_error[ERR_MSG_MAX + 64];
};

static void *client_run(void *arg)
{
	struct client *c = arg;
	struct rpc_client *r = malloc(sizeof *r);
	struct buf hello;
	struct err e;
	int not_live;

	err_clear(&e);
	buf_init(&hello, 0);
	rpc_hello_params(&hello, "session-load");
	if (!r || rpc_client_connect(r, c->path, &not_live, &e)) {
		c->errors = c->queries;
		snprintf(c->first_error, sizeof c->first_error, "connect: %s", r ? e.msg : "out of memory");
		goto out;
	}
	for (long k = -1; k < c->queries; k++) {
		struct rpc_response resp;
		int64_t id;
		double t0 = now_s();
		if (rpc_client_send(r, k < 0 ? RPC_HELLO : RPC_QUERY, k < 0 ? hello.data : c->params,
		                    &id, &e) ||
		    rpc_client_recv(r, &resp, &e)) {
			c->errors += c->queries - (k < 0 ? 0 : k);
			snprintf(c->first_error, sizeof c->first_error, "connection lost after %ld queries: %.900s",
			         k < 0 ? 0 : k, e.msg);
			break;
		}
		if (resp.is_error) {
			c->errors++;
			if (!c->first_error[0])
				snprintf(c->first_error, sizeof c->first_error, "%s", resp.message);
		} else if (k >= 0) {
			c->lat[c->done++] = now_s() - t0;
		}
	}
out:
	if (r)
		rpc_client_close(r);
	free(r);
	buf_free(&hello);
	return NULL;
}

static int cmd_rpc(int argc, char **argv)
{
	long nclients, nq;
	struct client *cl;
	double t0, secs, *all;
	long total = 0, errors = 0;
	struct buf out;

	if (argc != 6)
		return fprintf(stderr, "usage: session-load rpc SOCKET CLIENTS QUERIES PARAMS_JSON\n"), 2;
	nclients = atol(argv[3]);
	nq = atol(argv[4]);
	if (nclients < 1 || nq < 1)
		return fprintf(stderr, "session-load: CLIENTS and QUERIES must be positive\n"), 2;
	cl = calloc((size_t)nclients, sizeof *cl);
	t0 = now_s();
	for (long i = 0; i < nclients; i++) {
		cl[i].path = argv[2];
		cl[i].params = argv[5];
		cl[i].queries = nq;
		cl[i].lat = calloc((size_t)nq, sizeof(double));
		pthread_create(&cl[i].th, NULL, client_run, &cl[i]);
	}
	for (long i = 0; i < nclients; i++)
		pthread_join(cl[i].th, NULL);
	secs = now_s() - t0;
	all = calloc((size_t)(nclients * nq), sizeof(double));
	for (long i = 0; i < nclients; i++) {
		memcpy(all + total, cl[i].lat, (size_t)cl[i].done * sizeof(double));
		total += cl[i].done;
		errors += cl[i].errors;
		if (cl[i].errors)
			fprintf(stderr, "session-load: client %ld: %ld errors, first: %s\n", i, cl[i].errors,
			        cl[i].first_error);
	}
	qsort(all, (size_t)total, sizeof(double), cmp_d);
	buf_init(&out, 0);
	buf_printf(&out, "{\"clients\":%ld,\"queries\":%ld,\"errors\":%ld,\"seconds\":", nclients, total, errors);
	jsonout_real(&out, (double)(long)(secs * 1000) / 1000);
	buf_puts(&out, ",\"qps\":");
	jsonout_int(&out, (int64_t)((double)total / secs));
	buf_printf(&out, ",\"p50_us\":%ld,\"p99_us\":%ld,\"max_us\":%ld}\n",
	           (long)(pct(all, (size_t)total, 0.5) * 1e6), (long)(pct(all, (size_t)total, 0.99) * 1e6),
	           (long)(total ? all[total - 1] * 1e6 : 0));
	fputs(out.data, stdout);
	buf_free(&out);
	for (long i = 0; i < nclients; i++)
		free(cl[i].lat);
	free(cl);
	free(all);
	return errors ? 1 : 0;
}

static int cmd_spawn(int argc, char **argv)
{
	long runs, errors = 0;
	double *t, *cpu, sum = 0;
	posix_spawn_file_actions_t fa;
	struct buf out;

	if (argc < 4)
		return fprintf(stderr, "usage: session-load spawn RUNS CMD [ARGS...]\n"), 2;
	runs = atol(argv[2]);
	if (runs < 1)
		return fprintf(stderr, "session-load: RUNS must be positive\n"), 2;
	t = calloc((size_t)runs, sizeof *t);
	cpu = calloc((size_t)runs, sizeof *cpu);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	for (long i = 0; i < runs; i++) {
		pid_t pid;
		int status = 0;
		double t0 = now_s();
		if (posix_spawn(&pid, argv[3], &fa, NULL, argv + 3, environ) != 0) {
			errors++;
			continue;
		}
		struct rusage ru;
		wait4(pid, &status, 0, &ru);
		t[i] = now_s() - t0;
		cpu[i] = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		         (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
		sum += t[i];
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			errors++;
	}
	posix_spawn_file_actions_destroy(&fa);
	qsort(t, (size_t)runs, sizeof *t, cmp_d);
	qsort(cpu, (size_t)runs, sizeof *cpu, cmp_d);
	buf_init(&out, 0);
	buf_printf(&out, "{\"runs\":%ld,\"errors\":%ld,\"p50_ms\":", runs, errors);
	jsonout_real(&out, (double)(long)(pct(t, (size_t)runs, 0.5) * 1e6) / 1000);
	buf_puts(&out, ",\"p99_ms\":");
	jsonout_real(&out, (double)(long)(pct(t, (size_t)runs, 0.99) * 1e6) / 1000);
	buf_puts(&out, ",\"mean_ms\":");
	jsonout_real(&out, (double)(long)(sum / (double)runs * 1e6) / 1000);
	buf_puts(&out, ",\"cpu_p50_ms\":");
	jsonout_real(&out, (double)(long)(pct(cpu, (size_t)runs, 0.5) * 1e6) / 1000);
	buf_puts(&out, "}\n");
	fputs(out.data, stdout);
	buf_free(&out);
	free(t);
	free(cpu);
	return errors ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "rpc"))
		return cmd_rpc(argc, argv);
	if (argc >= 2 && !strcmp(argv[1], "spawn"))
		return cmd_spawn(argc, argv);
	fputs("usage: session-load rpc SOCKET CLIENTS QUERIES PARAMS_JSON\n"
	      "       session-load spawn RUNS CMD [ARGS...]\n", stderr);
	return 2;
}
