// SPDX-License-Identifier: Apache-2.0
/*
 * Traffic for bench/datapath.sh, run inside pod network namespaces:
 *   dp_traffic rr-server PORT                    TCP and UDP echo of 64-byte requests
 *   dp_traffic rr-client tcp|udp ADDR PORT COUNT  COUNT round trips: "p50_us p99_us"
 *   dp_traffic udp-sink PORT                     prints "ready", then "kpps packets"
 *   dp_traffic udp-blast ADDR PORT SIZE SECONDS  sends as fast as it can: "kpps_sent"
 * The sink times from its first to its last datagram and exits after 0.5 s of silence,
 * so its rate is what was received while the blaster ran, not what was sent. Its receive
 * buffer is SINK_RCVBUF (forced, as root): with the default ~200 KiB, a few milliseconds
 * without the CPU (other jobs on a shared machine) overflowed it, and the received rate
 * measured the sink's scheduling luck rather than the datapath.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RR_SIZE 64
#define RR_WARMUP 1000
#define BATCH 64
#define MAX_DGRAM 65536
#define SINK_RCVBUF (32 << 20)

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "dp_traffic: %s: %s\n", what, strerror(errno));
	exit(1);
}

static struct sockaddr_in addr_of(const char *ip, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(atoi(port)) };

	if (!ip)
		sin.sin_addr.s_addr = htonl(INADDR_ANY);
	else if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1)
		die("bad address");
	return sin;
}

static int socket_bound(int type, const char *port)
{
	struct sockaddr_in sin = addr_of(NULL, port);
	int one = 1, fd = socket(AF_INET, type, 0);

	if (fd < 0)
		die("socket");
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("bind");
	return fd;
}

static int socket_connected(int type, const char *ip, const char *port)
{
	struct sockaddr_in sin = addr_of(ip, port);
	int one = 1, fd = socket(AF_INET, type, 0);

	if (fd < 0)
		die("socket");
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
		die("connect");
	if (type == SOCK_STREAM)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return fd;
}

/* Reads exactly len bytes; 0 on success, -1 at EOF or error. */
static int read_full(int fd, char *buf, size_t len)
{
	size_t got = 0;

	while (got < len) {
		ssize_t n = read(fd, buf + got, len - got);

		if (n <= 0) {
			if (n < 0 && errno == EINTR)
				continue;
			return -1;
		}
		got += (size_t)n;
	}
	return 0;
}

static __attribute__((noreturn)) void rr_server(const char *port)
{
	int lfd = socket_bound(SOCK_STREAM, port), ufd = socket_bound(SOCK_DGRAM, port);
	int one = 1, cfd = -1;
	char buf[RR_SIZE];

	if (listen(lfd, 16))
		die("listen");
	for (;;) {
		struct pollfd p[3] = { { lfd, POLLIN, 0 }, { ufd, POLLIN, 0 }, { cfd, POLLIN, 0 } };

		if (poll(p, cfd >= 0 ? 3 : 2, -1) < 0) {
			if (errno == EINTR)
				continue;
			die("poll");
		}
		if (p[0].revents & POLLIN) {
			int fd = accept(lfd, NULL, NULL);

			if (fd >= 0) {
				if (cfd >= 0)
					close(cfd);
				cfd = fd;
				setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			}
		}
		if (p[1].revents & POLLIN) {
			struct sockaddr_in from;
			socklen_t flen = sizeof(from);
			ssize_t n =
				recvfrom(ufd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &flen);

			if (n > 0)
				sendto(ufd, buf, (size_t)n, 0, (struct sockaddr *)&from, flen);
		}
		if (cfd >= 0 && (p[2].revents & (POLLIN | POLLHUP | POLLERR))) {
			/* A blocking echo loop while the client talks: no poll per round trip. */
			while (read_full(cfd, buf, RR_SIZE) == 0)
				if (write(cfd, buf, RR_SIZE) != RR_SIZE)
					break;
			close(cfd);
			cfd = -1;
		}
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int rr_client(const char *proto, const char *ip, const char *port, long count)
{
	int udp = !strcmp(proto, "udp");
	int fd = socket_connected(udp ? SOCK_DGRAM : SOCK_STREAM, ip, port);
	uint64_t *rtt = calloc((size_t)count, sizeof(*rtt));
	struct timeval tv = { .tv_sec = 1 };
	char buf[RR_SIZE];
	long lost = 0;

	if (!rtt)
		die("calloc");
	memset(buf, 'r', sizeof(buf));
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	for (long i = -RR_WARMUP; i < count; i++) {
		uint64_t t0 = now_ns();
		int ok;

		if (write(fd, buf, RR_SIZE) != RR_SIZE)
			die("write");
		if (udp)
			ok = recv(fd, buf, sizeof(buf), 0) == RR_SIZE;
		else
			ok = read_full(fd, buf, RR_SIZE) == 0;
		if (!ok) {
			if (!udp || ++lost > 100)
				die("no answer");
			i--;
			continue;
		}
		if (i >= 0)
			rtt[i] = now_ns() - t0;
	}
	qsort(rtt, (size_t)count, sizeof(*rtt), cmp_u64);
	/* Nearest rank. */
	printf("%.2f %.2f\n", rtt[(count + 1) / 2 - 1] / 1e3,
	       rtt[(count * 99 + 99) / 100 - 1] / 1e3);
	return 0;
}

static int udp_sink(const char *port)
{
	int fd = socket_bound(SOCK_DGRAM, port);
	static char bufs[BATCH][2048];
	struct mmsghdr msgs[BATCH];
	struct iovec iov[BATCH];
	struct timeval tv = { .tv_usec = 100000 };
	uint64_t first = 0, last = 0, packets = 0, start = now_ns();
	int rcvbuf = SINK_RCVBUF;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcvbuf, sizeof(rcvbuf)))
		setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &rcvbuf, sizeof(rcvbuf));
	for (int i = 0; i < BATCH; i++) {
		iov[i] = (struct iovec){ bufs[i], sizeof(bufs[i]) };
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov[i], .msg_iovlen = 1 } };
	}
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		int n = recvmmsg(fd, msgs, BATCH, 0, NULL);
		uint64_t t = now_ns();

		if (n > 0) {
			if (!first)
				first = t;
			last = t;
			packets += (uint64_t)n;
			continue;
		}
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			die("recvmmsg");
		if (first && t - last > 500000000ull)
			break;
		if (!first && t - start > 30000000000ull) {
			fprintf(stderr, "dp_traffic: udp-sink: nothing received\n");
			return 1;
		}
	}
	printf("%.1f %llu\n", last > first ? packets / ((last - first) / 1e6) : 0.0,
	       (unsigned long long)packets);
	return 0;
}

static int udp_blast(const char *ip, const char *port, size_t size, double secs)
{
	int fd = socket_connected(SOCK_DGRAM, ip, port);
	static char buf[MAX_DGRAM];
	struct mmsghdr msgs[BATCH];
	struct iovec iov = { buf, size };
	uint64_t sent = 0, start = now_ns(), end = start + (uint64_t)(secs * 1e9), t = start;

	if (size > sizeof(buf))
		die("size");
	for (int i = 0; i < BATCH; i++)
		msgs[i] = (struct mmsghdr){ .msg_hdr = { .msg_iov = &iov, .msg_iovlen = 1 } };
	while ((t = now_ns()) < end) {
		int n = sendmmsg(fd, msgs, BATCH, 0);

		/* Full queues (ENOBUFS) or a stray ICMP error: keep sending. */
		if (n > 0)
			sent += (uint64_t)n;
	}
	printf("%.1f\n", sent / ((t - start) / 1e6));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "rr-server"))
		rr_server(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "rr-client"))
		return rr_client(argv[2], argv[3], argv[4], atol(argv[5]) > 0 ? atol(argv[5]) : 1);
	if (argc == 3 && !strcmp(argv[1], "udp-sink"))
		return udp_sink(argv[2]);
	if (argc == 6 && !strcmp(argv[1], "udp-blast"))
		return udp_blast(argv[2], argv[3], (size_t)atol(argv[4]), atof(argv[5]));
	fprintf(stderr, "usage: dp_traffic rr-server PORT | rr-client tcp|udp ADDR PORT COUNT |\n"
			"       udp-sink PORT | udp-blast ADDR PORT SIZE SECONDS\n");
	return 2;
}
