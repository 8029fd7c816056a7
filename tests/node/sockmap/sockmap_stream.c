// SPDX-License-Identifier: Apache-2.0
/*
 * Stream checker and throughput meter for the socket short-circuit's node
 * tests and benchmark. Every byte of a stream is a function of its offset
 * (a seeded xorshift per 8-byte word), so the receiver checks content,
 * order and length exactly and names the first bad offset.
 *
 *   server ADDR PORT CONNS SIZE [duplex]      check CONNS streams of SIZE bytes
 *   client ADDR PORT CONNS SIZE WSIZE [duplex] write SIZE in WSIZE writes right after connect
 *   bserver ADDR PORT CONNS SIZE WSIZE          like server, but plain blocking recv()/send()
 *   bclient ADDR PORT CONNS SIZE WSIZE          (no timeout, no O_NONBLOCK): the client writes,
 *                                               shuts down its side, reads the server's answer
 *   sink ADDR PORT                             bench: count bytes until EOF, answer the count
 *   meter ADDR PORT FILE                       one connection: read until EOF or error,
 *                                              FILE holding the byte count after every read
 *   blast ADDR PORT WSIZE SECONDS [nodelay]    bench: write WSIZE messages; prints Gbit/s
 *   unix WSIZE SECONDS                         bench: the same over an AF_UNIX socketpair
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SEED_UP 0x9e3779b97f4a7c15ull /* client -> server */
#define SEED_DOWN 0xc2b2ae3d27d4eb4full /* server -> client */
#define READ_BUF (1u << 20)

static uint64_t word_at(uint64_t seed, uint64_t index)
{
	uint64_t x = seed ^ (index * 0xff51afd7ed558ccdull);

	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 29;
	return x;
}

static uint8_t byte_at(uint64_t seed, uint64_t offset)
{
	return (uint8_t)(word_at(seed, offset / 8) >> (8 * (offset % 8)));
}

static void fill(uint64_t seed, uint64_t offset, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = byte_at(seed, offset + i);
}

static int die(const char *what)
{
	fprintf(stderr, "sockmap_stream: %s: %s\n", what, strerror(errno));
	exit(2);
}

static int resolve(const char *addr, const char *port, struct sockaddr_storage *out, socklen_t *len)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;

	if (getaddrinfo(addr, port, &hints, &res))
		return -EINVAL;
	memcpy(out, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
	return 0;
}

/* One connection, both halves: write `size` of seed_out, check `expect` bytes of seed_in. */
struct half {
	uint64_t seed;
	uint64_t done;
	uint64_t total;
};

static int pump(int fd, struct half *out, struct half *in, size_t wsize, const char *who)
{
	static uint8_t rbuf[READ_BUF];
	uint8_t *wbuf = malloc(wsize ? wsize : 1);
	bool eof = false, shut = false;

	if (!wbuf)
		die("malloc");
	while (!eof || !shut) {
		struct pollfd pfd = { .fd = fd,
				      .events = (eof ? 0 : POLLIN) | (shut ? 0 : POLLOUT) };

		if (!shut && out->done == out->total) {
			shutdown(fd, SHUT_WR);
			shut = true;
			continue;
		}
		if (poll(&pfd, 1, 20000) <= 0) {
			fprintf(stderr, "%s: stalled at sent %llu/%llu, received %llu/%llu\n", who,
				(unsigned long long)out->done, (unsigned long long)out->total,
				(unsigned long long)in->done, (unsigned long long)in->total);
			return 1;
		}
		if (!shut && (pfd.revents & POLLOUT)) {
			size_t n = wsize;
			ssize_t sent;

			if (n > out->total - out->done)
				n = (size_t)(out->total - out->done);
			fill(out->seed, out->done, wbuf, n);
			sent = send(fd, wbuf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
			if (sent < 0 && errno != EAGAIN) {
				fprintf(stderr, "%s: send at %llu: %s\n", who,
					(unsigned long long)out->done, strerror(errno));
				return 1;
			}
			/* A short write is resumed from where it stopped: the stream stays exact. */
			if (sent > 0)
				out->done += (uint64_t)sent;
		}
		if (!eof && (pfd.revents & (POLLIN | POLLHUP | POLLERR))) {
			ssize_t got = recv(fd, rbuf, sizeof(rbuf), MSG_DONTWAIT);

			/* Non-blocking by request: EAGAIN is an answer here (blocking: bclient). */
			if (got < 0 && errno == EAGAIN)
				continue;
			if (got < 0) {
				fprintf(stderr, "%s: recv at %llu: %s\n", who,
					(unsigned long long)in->done, strerror(errno));
				return 1;
			}
			if (got == 0) {
				eof = true;
				continue;
			}
			for (ssize_t i = 0; i < got; i++) {
				if (in->done + (uint64_t)i >= in->total ||
				    rbuf[i] != byte_at(in->seed, in->done + (uint64_t)i)) {
					fprintf(stderr, "%s: stream differs at offset %llu\n", who,
						(unsigned long long)(in->done + (uint64_t)i));
					return 1;
				}
			}
			in->done += (uint64_t)got;
		}
	}
	free(wbuf);
	if (in->done != in->total) {
		fprintf(stderr, "%s: stream ended at %llu of %llu bytes\n", who,
			(unsigned long long)in->done, (unsigned long long)in->total);
		return 1;
	}
	return 0;
}

static int listen_on(const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd;

	if (resolve(addr, port, &ss, &len))
		die("address");
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 1024))
		die("listen");
	return fd;
}

static int connect_to(const char *addr, const char *port)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	if (resolve(addr, port, &ss, &len))
		die("address");
	fd = socket(ss.ss_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&ss, len))
		die("connect");
	return fd;
}

/*
 * Blocking mode: what an ordinary application does. A blocking recv() on a
 * socket without SO_RCVTIMEO must never fail with EAGAIN; every one is
 * counted and fails the run (no silent retry), the read is then repeated so
 * that the stream is still checked to its end.
 */
static unsigned long eagains;

static void assert_blocking(int fd)
{
	struct timeval tv;
	socklen_t len = sizeof(tv);
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || getsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, &len))
		die("socket flags");
	if ((fl & O_NONBLOCK) || tv.tv_sec || tv.tv_usec) {
		fprintf(stderr, "sockmap_stream: socket is not plainly blocking\n");
		exit(2);
	}
}

static int blocking_send(int fd, struct half *out, size_t wsize, const char *who)
{
	uint8_t *wbuf = malloc(wsize ? wsize : 1);

	if (!wbuf)
		die("malloc");
	while (out->done < out->total) {
		size_t n = wsize;
		ssize_t sent;

		if (n > out->total - out->done)
			n = (size_t)(out->total - out->done);
		fill(out->seed, out->done, wbuf, n);
		sent = send(fd, wbuf, n, MSG_NOSIGNAL);
		if (sent < 0) {
			fprintf(stderr, "%s: send at %llu: %s\n", who,
				(unsigned long long)out->done, strerror(errno));
			free(wbuf);
			return 1;
		}
		out->done += (uint64_t)sent;
	}
	free(wbuf);
	return 0;
}

static int blocking_recv(int fd, struct half *in, const char *who)
{
	static uint8_t rbuf[READ_BUF];

	for (;;) {
		ssize_t got = recv(fd, rbuf, sizeof(rbuf), 0);

		if (got < 0 && errno == EAGAIN) {
			if (!eagains++)
				fprintf(stderr, "%s: blocking recv at %llu returned EAGAIN\n", who,
					(unsigned long long)in->done);
			continue;
		}
		if (got < 0) {
			fprintf(stderr, "%s: recv at %llu: %s\n", who, (unsigned long long)in->done,
				strerror(errno));
			return 1;
		}
		if (got == 0)
			break;
		for (ssize_t i = 0; i < got; i++) {
			if (in->done + (uint64_t)i >= in->total ||
			    rbuf[i] != byte_at(in->seed, in->done + (uint64_t)i)) {
				fprintf(stderr, "%s: stream differs at offset %llu\n", who,
					(unsigned long long)(in->done + (uint64_t)i));
				return 1;
			}
		}
		in->done += (uint64_t)got;
	}
	if (in->done != in->total) {
		fprintf(stderr, "%s: stream ended at %llu of %llu bytes\n", who,
			(unsigned long long)in->done, (unsigned long long)in->total);
		return 1;
	}
	return 0;
}

/* Exit 1: a stream differed or failed; 3: every stream intact, but a blocking recv said EAGAIN. */
static int report(const char *who, unsigned long conns, unsigned long bad)
{
	printf("%s: %lu of %lu streams intact, %lu EAGAIN from blocking recv\n", who, conns - bad,
	       conns, eagains);
	return bad ? 1 : eagains ? 3 : 0;
}

/* Reads the client's stream to its end, then answers with a stream of its own. */
static int cmd_bserver(char **argv)
{
	unsigned long conns = strtoul(argv[2], NULL, 0);
	uint64_t size = strtoull(argv[3], NULL, 0);
	size_t wsize = strtoul(argv[4], NULL, 0);
	int listener = listen_on(argv[0], argv[1]);
	unsigned long bad = 0;

	printf("listening\n");
	fflush(stdout);
	for (unsigned long i = 0; i < conns; i++) {
		struct half out = { SEED_DOWN, 0, size };
		struct half in = { SEED_UP, 0, size };
		int fd = accept(listener, NULL, NULL);

		if (fd < 0)
			die("accept");
		assert_blocking(fd);
		if (blocking_recv(fd, &in, "bserver") || blocking_send(fd, &out, wsize, "bserver"))
			bad++;
		close(fd);
	}
	return report("bserver", conns, bad);
}

/* Writes, half-closes, then waits in a blocking recv for the whole answer. */
static int cmd_bclient(char **argv)
{
	unsigned long conns = strtoul(argv[2], NULL, 0);
	uint64_t size = strtoull(argv[3], NULL, 0);
	size_t wsize = strtoul(argv[4], NULL, 0);
	unsigned long bad = 0;

	for (unsigned long i = 0; i < conns; i++) {
		struct half out = { SEED_UP, 0, size };
		struct half in = { SEED_DOWN, 0, size };
		int fd = connect_to(argv[0], argv[1]);

		assert_blocking(fd);
		if (blocking_send(fd, &out, wsize, "bclient") || shutdown(fd, SHUT_WR) ||
		    blocking_recv(fd, &in, "bclient"))
			bad++;
		close(fd);
	}
	return report("bclient", conns, bad);
}

static int cmd_server(int argc, char **argv)
{
	unsigned long conns = strtoul(argv[2], NULL, 0);
	uint64_t size = strtoull(argv[3], NULL, 0);
	bool duplex = argc > 4 && !strcmp(argv[4], "duplex");
	int listener = listen_on(argv[0], argv[1]);
	unsigned long bad = 0;

	/* Ready: the test waits for this line before connecting. */
	printf("listening\n");
	fflush(stdout);
	for (unsigned long i = 0; i < conns; i++) {
		struct half out = { SEED_DOWN, 0, duplex ? size : 0 };
		struct half in = { SEED_UP, 0, size };
		int fd = accept(listener, NULL, NULL);

		if (fd < 0)
			die("accept");
		bad += (unsigned long)pump(fd, &out, &in, 65536, "server");
		close(fd);
	}
	printf("server: %lu of %lu streams intact\n", conns - bad, conns);
	return bad ? 1 : 0;
}

static int cmd_client(int argc, char **argv)
{
	unsigned long conns = strtoul(argv[2], NULL, 0);
	uint64_t size = strtoull(argv[3], NULL, 0);
	size_t wsize = strtoul(argv[4], NULL, 0);
	bool duplex = argc > 5 && !strcmp(argv[5], "duplex");
	unsigned long bad = 0;

	for (unsigned long i = 0; i < conns; i++) {
		struct half out = { SEED_UP, 0, size };
		struct half in = { SEED_DOWN, 0, duplex ? size : 0 };
		int fd = connect_to(argv[0], argv[1]);

		/* Writes start right after connect(): the race with the server's insertion. */
		bad += (unsigned long)pump(fd, &out, &in, wsize, "client");
		close(fd);
	}
	printf("client: %lu of %lu streams intact\n", conns - bad, conns);
	return bad ? 1 : 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * The bench's reads are plain blocking recv()s, like an application's. On a
 * sockmap socket such a recv can fail with EAGAIN (a kernel bug, see "Known
 * limits" in docs/sockmap.md): the bench repeats the read so that it can
 * finish, but counts every one and reports it on stderr; never silently.
 */
static unsigned long bench_eagains;

static ssize_t bench_recv(int fd, void *buf, size_t len)
{
	for (;;) {
		ssize_t got = recv(fd, buf, len, 0);

		if (got >= 0 || errno != EAGAIN)
			return got;
		bench_eagains++;
	}
}

static void bench_report(const char *who)
{
	if (bench_eagains)
		fprintf(stderr,
			"sockmap_stream: %s: %lu EAGAIN from blocking recv (kernel "
			"tcp_bpf_recvmsg; docs/sockmap.md)\n",
			who, bench_eagains);
	bench_eagains = 0;
}

/* Reads until EOF in large reads, then answers the byte count (8 bytes). */
static void sink(int fd)
{
	static uint8_t buf[READ_BUF];
	uint64_t total = 0;
	ssize_t got;

	while ((got = bench_recv(fd, buf, sizeof(buf))) > 0)
		total += (uint64_t)got;
	if (got < 0)
		die("sink recv");
	bench_report("sink");
	if (send(fd, &total, sizeof(total), MSG_NOSIGNAL) != sizeof(total))
		die("send count");
}

/* The sink's 8-byte answer. */
static int recv_count(int fd, uint64_t *total)
{
	size_t got = 0;

	while (got < sizeof(*total)) {
		ssize_t n = bench_recv(fd, (char *)total + got, sizeof(*total) - got);

		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	bench_report("blast");
	return 0;
}

static void blast(int fd, size_t wsize, double seconds, double start)
{
	uint8_t *buf = calloc(1, wsize);
	uint64_t total = 0;
	double end = start + seconds;

	if (!buf)
		die("malloc");
	for (unsigned long n = 0;; n++) {
		ssize_t sent;

		if ((n & 63) == 0 && now() >= end)
			break;
		sent = send(fd, buf, wsize, MSG_NOSIGNAL);
		if (sent < 0)
			die("send");
		total += (uint64_t)sent;
	}
	shutdown(fd, SHUT_WR);
	if (recv_count(fd, &total))
		die("recv count");
	printf("%.3f\n", (double)total * 8 / (now() - start) / 1e9);
	free(buf);
}

static __attribute__((noreturn)) void cmd_sink(char **argv)
{
	int listener = listen_on(argv[0], argv[1]);

	printf("listening\n");
	fflush(stdout);
	for (;;) {
		int fd = accept(listener, NULL, NULL);

		if (fd < 0)
			die("accept");
		sink(fd);
		close(fd);
	}
}

static int cmd_blast(int argc, char **argv)
{
	int fd = connect_to(argv[0], argv[1]);
	int one = 1;

	if (argc > 4 && !strcmp(argv[4], "nodelay") &&
	    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY");
	blast(fd, strtoul(argv[2], NULL, 0), strtod(argv[3], NULL), now());
	close(fd);
	return 0;
}

/* The running count, rewritten in place: a reader sees the latest full line. */
static void meter_write(int out, uint64_t total)
{
	char line[32];
	int n = snprintf(line, sizeof(line), "%20llu\n", (unsigned long long)total);

	if (pwrite(out, line, (size_t)n, 0) != n)
		die("meter write");
}

static __attribute__((noreturn)) void cmd_meter(char **argv)
{
	static uint8_t buf[READ_BUF];
	int listener = listen_on(argv[0], argv[1]), fd, out;
	uint64_t total = 0;
	ssize_t got;

	out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (out < 0)
		die("meter open");
	meter_write(out, 0);
	printf("listening\n");
	fflush(stdout);
	fd = accept(listener, NULL, NULL);
	if (fd < 0)
		die("accept");
	while ((got = bench_recv(fd, buf, sizeof(buf))) > 0) {
		total += (uint64_t)got;
		meter_write(out, total);
	}
	printf("end after %llu bytes: %s\n", (unsigned long long)total,
	       got ? strerror(errno) : "EOF");
	exit(0);
}

static int cmd_unix(char **argv)
{
	int fds[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_STREAM, 0, fds))
		die("socketpair");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		close(fds[0]);
		sink(fds[1]);
		_exit(0);
	}
	close(fds[1]);
	blast(fds[0], strtoul(argv[0], NULL, 0), strtod(argv[1], NULL), now());
	waitpid(pid, NULL, 0);
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 6 && !strcmp(argv[1], "server"))
		return cmd_server(argc - 2, argv + 2);
	if (argc >= 7 && !strcmp(argv[1], "client"))
		return cmd_client(argc - 2, argv + 2);
	if (argc >= 7 && !strcmp(argv[1], "bserver"))
		return cmd_bserver(argv + 2);
	if (argc >= 7 && !strcmp(argv[1], "bclient"))
		return cmd_bclient(argv + 2);
	if (argc >= 4 && !strcmp(argv[1], "sink"))
		cmd_sink(argv + 2);
	if (argc >= 5 && !strcmp(argv[1], "meter"))
		cmd_meter(argv + 2);
	if (argc >= 6 && !strcmp(argv[1], "blast"))
		return cmd_blast(argc - 2, argv + 2);
	if (argc >= 4 && !strcmp(argv[1], "unix"))
		return cmd_unix(argv + 2);
	fprintf(stderr, "usage: see the comment at the top of tests/node/sockmap/sockmap_stream.c\n");
	return 2;
}
