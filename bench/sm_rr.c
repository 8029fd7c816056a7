// SPDX-License-Identifier: Apache-2.0
/*
 * Request/response and connection-rate traffic for bench/sockmap.sh. ENDPOINT is IP:PORT
 * (TCP, TCP_NODELAY on both ends) or an absolute path (an AF_UNIX stream socket).
 *   sm_rr rr-server ENDPOINT              echo 64-byte requests, one connection at a time
 *   sm_rr rr-client ENDPOINT SECONDS      64-byte ping-pong: "p50_us p99_us round_trips"
 *   sm_rr conn-server ENDPOINT            per connection: read 64 B, answer 64 B, wait for EOF
 *   sm_rr conn-client ENDPOINT SECONDS    connect, send 64 B, read 64 B, close, in a loop:
 *                                         "connections_per_s"
 * Servers print "ready" once listening. Reads are plain blocking reads, like an application's;
 * an EAGAIN from a blocking read on a sockhash socket (kernel tcp_bpf_recvmsg, see
 * docs/sockmap.md) is repeated but counted and reported on stderr, never hidden.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define MSG_SIZE 64
#define RR_WARMUP 500

struct endpoint {
	struct sockaddr_storage addr;
	socklen_t len;
	int family;
};

static unsigned long eagains;

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "sm_rr: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static struct endpoint parse_endpoint(const char *text)
{
	struct endpoint ep = { 0 };
	const char *colon = strrchr(text, ':');

	if (text[0] == '/') {
		struct sockaddr_un *sun = (struct sockaddr_un *)&ep.addr;

		if (strlen(text) >= sizeof(sun->sun_path)) {
			errno = ENAMETOOLONG;
			die(text);
		}
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, text);
		ep.len = sizeof(*sun);
		ep.family = AF_UNIX;
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ep.addr;
		char ip[INET_ADDRSTRLEN];
		size_t ip_len = colon ? (size_t)(colon - text) : 0;

		errno = EINVAL;
		if (!colon || ip_len >= sizeof(ip))
			die(text);
		memcpy(ip, text, ip_len);
		ip[ip_len] = '\0';
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)atoi(colon + 1));
		if (inet_pton(AF_INET, ip, &sin->sin_addr) != 1)
			die(text);
		ep.len = sizeof(*sin);
		ep.family = AF_INET;
	}
	return ep;
}

static void nodelay(const struct endpoint *ep, int fd)
{
	int one = 1;

	if (ep->family == AF_INET && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)))
		die("TCP_NODELAY");
}

static int listen_on(const struct endpoint *ep)
{
	int one = 1, fd = socket(ep->family, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	if (ep->family == AF_UNIX)
		unlink(((const struct sockaddr_un *)&ep->addr)->sun_path);
	else
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (const struct sockaddr *)&ep->addr, ep->len))
		die("bind");
	if (listen(fd, 1024))
		die("listen");
	printf("ready\n");
	fflush(stdout);
	return fd;
}

static int connect_to(const struct endpoint *ep)
{
	int fd = socket(ep->family, SOCK_STREAM, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, (const struct sockaddr *)&ep->addr, ep->len))
		die("connect");
	nodelay(ep, fd);
	return fd;
}

/* Reads exactly len bytes: 0, or -1 at EOF or on an error. */
static int read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			eagains += errno == EAGAIN;
			continue;
		}
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 0;
}

static int write_full(int fd, const char *buf, size_t len)
{
	return send(fd, buf, len, MSG_NOSIGNAL) == (ssize_t)len ? 0 : -1;
}

/* Waits for the peer's EOF, discarding anything before it. */
static void drain(int fd)
{
	char buf[MSG_SIZE];

	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && (errno == EINTR || errno == EAGAIN)) {
			eagains += errno == EAGAIN;
			continue;
		}
		if (n <= 0)
			return;
	}
}

static void report_eagains(const char *who)
{
	if (eagains)
		fprintf(stderr,
			"sm_rr: %s: %lu EAGAIN from blocking read (kernel tcp_bpf_recvmsg; "
			"docs/sockmap.md)\n",
			who, eagains);
	eagains = 0;
}

static __attribute__((noreturn)) void serve(const char *text, int conn_mode)
{
	struct endpoint ep = parse_endpoint(text);
	int lfd = listen_on(&ep);
	char buf[MSG_SIZE];

	for (;;) {
		int fd = accept(lfd, NULL, NULL);

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			die("accept");
		}
		nodelay(&ep, fd);
		if (conn_mode) {
			if (!read_full(fd, buf, MSG_SIZE) && !write_full(fd, buf, MSG_SIZE))
				drain(fd);
		} else {
			while (!read_full(fd, buf, MSG_SIZE) && !write_full(fd, buf, MSG_SIZE))
				;
		}
		close(fd);
		if (eagains)
			report_eagains(conn_mode ? "conn-server" : "rr-server");
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static int rr_client(const char *text, double seconds)
{
	struct endpoint ep = parse_endpoint(text);
	int fd = connect_to(&ep);
	size_t n = 0, cap = 1 << 16;
	uint32_t *rtt = malloc(cap * sizeof(*rtt));
	char buf[MSG_SIZE];
	uint64_t end;

	if (!rtt)
		die("malloc");
	memset(buf, 'r', sizeof(buf));
	for (int i = 0; i < RR_WARMUP; i++)
		if (write_full(fd, buf, MSG_SIZE) || read_full(fd, buf, MSG_SIZE))
			die("warm-up round trip");
	end = now_ns() + (uint64_t)(seconds * 1e9);
	for (;;) {
		uint64_t t0 = now_ns(), t1;

		if (t0 >= end)
			break;
		if (write_full(fd, buf, MSG_SIZE) || read_full(fd, buf, MSG_SIZE))
			die("round trip");
		t1 = now_ns();
		if (n == cap) {
			cap *= 2;
			rtt = realloc(rtt, cap * sizeof(*rtt));
			if (!rtt)
				die("realloc");
		}
		rtt[n++] = (uint32_t)(t1 - t0 > UINT32_MAX ? UINT32_MAX : t1 - t0);
	}
	close(fd);
	if (!n) {
		errno = ETIME;
		die("no round trip");
	}
	qsort(rtt, n, sizeof(*rtt), cmp_u32);
	/* Nearest rank. */
	printf("%.2f %.2f %zu\n", rtt[(n + 1) / 2 - 1] / 1e3, rtt[(n * 99 + 99) / 100 - 1] / 1e3,
	       n);
	free(rtt);
	report_eagains("rr-client");
	return 0;
}

static int conn_client(const char *text, double seconds)
{
	struct endpoint ep = parse_endpoint(text);
	uint64_t start = now_ns(), end = start + (uint64_t)(seconds * 1e9), t;
	unsigned long conns = 0;
	char buf[MSG_SIZE];

	memset(buf, 'c', sizeof(buf));
	while ((t = now_ns()) < end) {
		int fd = connect_to(&ep);

		if (write_full(fd, buf, MSG_SIZE) || read_full(fd, buf, MSG_SIZE))
			die("request/response");
		close(fd);
		conns++;
	}
	printf("%.0f\n", conns / ((double)(t - start) / 1e9));
	report_eagains("conn-client");
	return 0;
}

int main(int argc, char **argv)
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && !strcmp(argv[1], "rr-server"))
		serve(argv[2], 0);
	if (argc == 3 && !strcmp(argv[1], "conn-server"))
		serve(argv[2], 1);
	if (argc == 4 && !strcmp(argv[1], "rr-client"))
		return rr_client(argv[2], strtod(argv[3], NULL));
	if (argc == 4 && !strcmp(argv[1], "conn-client"))
		return conn_client(argv[2], strtod(argv[3], NULL));
	fprintf(stderr, "usage: see the comment at the top of bench/sm_rr.c\n");
	return 2;
}
