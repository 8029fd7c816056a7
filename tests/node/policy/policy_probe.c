// SPDX-License-Identifier: Apache-2.0
/*
 * The NetworkPolicy truth table's server and prober (tests/node/policy/policy_truth.bats).
 *
 *   serve PORT...         echo servers on each PORT for TCP, UDP and SCTP, IPv4 and IPv6;
 *                         prints "listening sctp=kernel|raw" once every socket is bound
 *   probe [-t MS]         reads "ID PROTO ADDR PORT" lines (proto tcp, udp or sctp), runs
 *                         them all at once and prints "ID ok|timeout|refused|error:..." each
 *   hold [-t MS] PROTO ADDR PORT
 *                         one connection (or UDP flow from one socket): prints the first
 *                         exchange's verdict, then one more exchange per line read on stdin
 *   sctp                  "kernel" or "raw: <why the kernel has no SCTP>"
 *
 * A probe sends "velo-probe <ID>" and wants exactly that back within the timeout (default
 * 1500 ms): TCP connects, sends, reads; UDP sends from a connected socket and reads; SCTP
 * uses the kernel's SOCK_STREAM IPPROTO_SCTP where it exists. Where it doesn't (a kernel
 * built without SCTP), SCTP is carried as raw IP protocol 132 packets, an INIT from an
 * ephemeral port answered by the server's raw socket with an INIT ACK to the INIT's tag:
 * on the wire the same ports and protocol a policy sees, so the truth table still checks
 * them. Exit 0 unless the arguments or the sockets themselves failed.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_PORTS 16
#define MAX_PROBES 4096
#define MSG_MAX 128
#define DEFAULT_TIMEOUT_MS 1500
#define SCTP_INIT 1
#define SCTP_INIT_ACK 2

enum proto { P_TCP, P_UDP, P_SCTP };

union addr {
	struct sockaddr sa;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
	struct sockaddr_storage ss;
};

static bool sctp_kernel;

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int parse_proto(const char *name, enum proto *proto)
{
	if (!strcmp(name, "tcp"))
		*proto = P_TCP;
	else if (!strcmp(name, "udp"))
		*proto = P_UDP;
	else if (!strcmp(name, "sctp"))
		*proto = P_SCTP;
	else
		return -EINVAL;
	return 0;
}

static int parse_addr(const char *text, const char *port, union addr *addr, socklen_t *len)
{
	char *end;
	long value = strtol(port, &end, 10);

	if (*end || value < 1 || value > 65535)
		return -EINVAL;
	memset(addr, 0, sizeof(*addr));
	if (inet_pton(AF_INET, text, &addr->in4.sin_addr) == 1) {
		addr->in4.sin_family = AF_INET;
		addr->in4.sin_port = htons((uint16_t)value);
		*len = sizeof(addr->in4);
		return 0;
	}
	if (inet_pton(AF_INET6, text, &addr->in6.sin6_addr) == 1) {
		addr->in6.sin6_family = AF_INET6;
		addr->in6.sin6_port = htons((uint16_t)value);
		*len = sizeof(addr->in6);
		return 0;
	}
	return -EINVAL;
}

/* Whether this kernel has SCTP sockets; why not in reason. */
static bool sctp_probe_kernel(char *reason, size_t len)
{
	int fd = socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP);

	if (fd < 0) {
		snprintf(reason, len, "socket(AF_INET, SOCK_STREAM, IPPROTO_SCTP): %s",
			 strerror(errno));
		return false;
	}
	close(fd);
	return true;
}

/* ---------------------------------------------------------------- raw SCTP */

static uint32_t crc32c(const uint8_t *data, size_t len)
{
	uint32_t crc = ~0u;

	for (size_t i = 0; i < len; i++) {
		crc ^= data[i];
		for (int bit = 0; bit < 8; bit++)
			crc = (crc >> 1) ^ (0x82f63b78u & -(crc & 1));
	}
	return ~crc;
}

struct sctp_packet {
	uint16_t sport, dport;
	uint32_t vtag;
	uint32_t checksum;
	uint8_t type, flags;
	uint16_t length;
	uint32_t init_tag;
	uint32_t a_rwnd;
	uint16_t n_out, n_in;
	uint32_t tsn;
} __attribute__((packed));

static void sctp_build(struct sctp_packet *pkt, uint16_t sport, uint16_t dport, uint8_t type,
		       uint32_t vtag, uint32_t init_tag)
{
	uint32_t crc;

	memset(pkt, 0, sizeof(*pkt));
	pkt->sport = sport;
	pkt->dport = dport;
	pkt->vtag = vtag;
	pkt->type = type;
	pkt->length = htons(20);
	pkt->init_tag = init_tag;
	pkt->a_rwnd = htonl(65536);
	pkt->n_out = pkt->n_in = htons(1);
	pkt->tsn = init_tag;
	crc = crc32c((const uint8_t *)pkt, sizeof(*pkt));
	/* SCTP's checksum goes on the wire least significant byte first. */
	memcpy(&pkt->checksum, &crc, sizeof(crc));
}

/* The SCTP packet inside what a raw socket of family received (IPv4 keeps its IP header). */
static const struct sctp_packet *sctp_parse(int family, const uint8_t *buf, ssize_t n)
{
	size_t off = 0;

	if (family == AF_INET) {
		const struct iphdr *ip = (const struct iphdr *)buf;

		if (n < (ssize_t)sizeof(*ip))
			return NULL;
		off = ip->ihl * 4u;
	}
	if (n < (ssize_t)(off + sizeof(struct sctp_packet)))
		return NULL;
	return (const struct sctp_packet *)(buf + off);
}

/* ---------------------------------------------------------------- serve */

static int listen_on(int type, int proto, uint16_t port)
{
	struct sockaddr_in6 any = { .sin6_family = AF_INET6, .sin6_port = htons(port) };
	int fd, zero = 0, one = 1;

	fd = socket(AF_INET6, type | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero));
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&any, sizeof(any)) ||
	    (type == SOCK_STREAM && listen(fd, 512))) {
		int err = -errno;

		close(fd);
		return err;
	}
	return fd;
}

enum serve_kind { S_LISTEN, S_CONN, S_UDP, S_RAW4, S_RAW6 };

struct serve_fd {
	enum serve_kind kind;
	int fd;
};

static int watch(int ep, enum serve_kind kind, int fd)
{
	struct serve_fd *entry = malloc(sizeof(*entry));
	struct epoll_event ev = { .events = EPOLLIN };

	if (!entry)
		return -ENOMEM;
	entry->kind = kind;
	entry->fd = fd;
	ev.data.ptr = entry;
	if (epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev)) {
		free(entry);
		return -errno;
	}
	return 0;
}

static bool serving(const uint16_t *ports, int n_ports, uint16_t port_be)
{
	for (int i = 0; i < n_ports; i++)
		if (htons(ports[i]) == port_be)
			return true;
	return false;
}

static void serve_raw(int fd, int family, const uint16_t *ports, int n_ports)
{
	uint8_t buf[2048];
	union addr from;
	socklen_t len = sizeof(from);
	const struct sctp_packet *in;
	struct sctp_packet out;
	ssize_t n;

	n = recvfrom(fd, buf, sizeof(buf), 0, &from.sa, &len);
	in = sctp_parse(family, buf, n);
	if (!in || in->type != SCTP_INIT || in->vtag || !serving(ports, n_ports, in->dport))
		return;
	sctp_build(&out, in->dport, in->sport, SCTP_INIT_ACK, in->init_tag, in->init_tag ^ 1);
	if (family == AF_INET6)
		from.in6.sin6_port = 0;
	else
		from.in4.sin_port = 0;
	sendto(fd, &out, sizeof(out), 0, &from.sa, len);
}

static void serve_event(int ep, struct serve_fd *entry, const uint16_t *ports, int n_ports)
{
	char buf[4096];
	union addr from;
	socklen_t len = sizeof(from);
	ssize_t n;
	int conn;

	switch (entry->kind) {
	case S_LISTEN:
		while ((conn = accept4(entry->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
			if (watch(ep, S_CONN, conn))
				close(conn);
		return;
	case S_CONN:
		n = recv(entry->fd, buf, sizeof(buf), 0);
		if (n > 0 && send(entry->fd, buf, n, MSG_NOSIGNAL) == n)
			return;
		if (n < 0 && errno == EAGAIN)
			return;
		epoll_ctl(ep, EPOLL_CTL_DEL, entry->fd, NULL);
		close(entry->fd);
		free(entry);
		return;
	case S_UDP:
		while ((n = recvfrom(entry->fd, buf, sizeof(buf), 0, &from.sa, &len)) >= 0) {
			sendto(entry->fd, buf, n, 0, &from.sa, len);
			len = sizeof(from);
		}
		return;
	case S_RAW4:
		serve_raw(entry->fd, AF_INET, ports, n_ports);
		return;
	case S_RAW6:
		serve_raw(entry->fd, AF_INET6, ports, n_ports);
		return;
	}
}

static int cmd_serve(int argc, char **argv)
{
	uint16_t ports[MAX_PORTS];
	int n_ports = 0, ep, fd;
	struct epoll_event events[64];

	for (int i = 0; i < argc; i++) {
		long port = strtol(argv[i], NULL, 10);

		if (port < 1 || port > 65535 || n_ports == MAX_PORTS) {
			fprintf(stderr, "serve: bad port '%s'\n", argv[i]);
			return 2;
		}
		ports[n_ports++] = (uint16_t)port;
	}
	if (!n_ports) {
		fprintf(stderr, "serve: no ports\n");
		return 2;
	}
	ep = epoll_create1(EPOLL_CLOEXEC);
	if (ep < 0)
		return 1;
	for (int i = 0; i < n_ports; i++) {
		struct {
			int type, proto;
			enum serve_kind kind;
		} socks[] = {
			{ SOCK_STREAM, IPPROTO_TCP, S_LISTEN },
			{ SOCK_DGRAM, IPPROTO_UDP, S_UDP },
			{ SOCK_STREAM, IPPROTO_SCTP, S_LISTEN },
		};

		for (unsigned s = 0; s < sizeof(socks) / sizeof(socks[0]); s++) {
			if (socks[s].proto == IPPROTO_SCTP && !sctp_kernel)
				continue;
			fd = listen_on(socks[s].type, socks[s].proto, ports[i]);
			if (fd < 0 || watch(ep, socks[s].kind, fd)) {
				fprintf(stderr, "serve: port %u proto %d: %s\n", ports[i],
					socks[s].proto, strerror(fd < 0 ? -fd : errno));
				return 1;
			}
		}
	}
	if (!sctp_kernel) {
		int fd4 = socket(AF_INET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_SCTP);
		int fd6 = socket(AF_INET6, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, IPPROTO_SCTP);

		if (fd4 < 0 || fd6 < 0 || watch(ep, S_RAW4, fd4) || watch(ep, S_RAW6, fd6)) {
			fprintf(stderr, "serve: raw SCTP sockets: %s\n", strerror(errno));
			return 1;
		}
	}
	printf("listening sctp=%s\n", sctp_kernel ? "kernel" : "raw");
	fflush(stdout);
	for (;;) {
		int n = epoll_wait(ep, events, 64, -1);

		if (n < 0 && errno != EINTR)
			return 1;
		for (int i = 0; i < n; i++)
			serve_event(ep, events[i].data.ptr, ports, n_ports);
	}
}

/* ---------------------------------------------------------------- probe */

enum probe_phase { CONNECTING, WAITING, DONE };

struct probe {
	char id[64];
	enum proto proto;
	union addr dst;
	socklen_t dst_len;
	int fd;
	enum probe_phase phase;
	char msg[MSG_MAX];
	size_t msg_len;
	size_t got; /* bytes of the echo read so far */
	uint16_t sport; /* raw SCTP */
	uint32_t tag; /* raw SCTP */
	bool keep; /* hold: the socket stays open after an ok */
	char verdict[96];
};

static void finish(struct probe *probe, const char *verdict)
{
	if (probe->phase == DONE)
		return;
	probe->phase = DONE;
	snprintf(probe->verdict, sizeof(probe->verdict), "%s", verdict);
	if (probe->keep && !strcmp(verdict, "ok"))
		return;
	if (probe->fd >= 0)
		close(probe->fd);
	probe->fd = -1;
}

static void finish_errno(struct probe *probe, int err)
{
	char verdict[96];

	if (err == ECONNREFUSED) {
		finish(probe, "refused");
		return;
	}
	snprintf(verdict, sizeof(verdict), "error:%s", strerror(err));
	for (char *c = verdict; *c; c++)
		if (*c == ' ')
			*c = '_';
	finish(probe, verdict);
}

static int raw_send(struct probe *probe)
{
	struct sctp_packet pkt;
	union addr dst = probe->dst;

	sctp_build(&pkt, htons(probe->sport), dst.in4.sin_port, SCTP_INIT, 0, probe->tag);
	if (dst.sa.sa_family == AF_INET6)
		dst.in6.sin6_port = 0;
	else
		dst.in4.sin_port = 0;
	if (sendto(probe->fd, &pkt, sizeof(pkt), 0, &dst.sa, probe->dst_len) != sizeof(pkt))
		return -errno;
	return 0;
}

/* Opens and starts a probe; its fd joins ep unless it finished at once. */
static void probe_start(int ep, struct probe *probe)
{
	int family = probe->dst.sa.sa_family, type, proto;
	struct epoll_event ev = { .data.ptr = probe };

	probe->msg_len =
		(size_t)snprintf(probe->msg, sizeof(probe->msg), "velo-probe %s\n", probe->id);
	probe->got = 0;
	switch (probe->proto) {
	case P_TCP:
		type = SOCK_STREAM, proto = IPPROTO_TCP;
		break;
	case P_UDP:
		type = SOCK_DGRAM, proto = IPPROTO_UDP;
		break;
	default:
		type = sctp_kernel ? SOCK_STREAM : SOCK_RAW, proto = IPPROTO_SCTP;
		break;
	}
	probe->fd = socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, proto);
	if (probe->fd < 0) {
		finish_errno(probe, errno);
		return;
	}
	if (type == SOCK_RAW) {
		uint32_t random[2];

		if (getrandom(random, sizeof(random), 0) != sizeof(random)) {
			finish_errno(probe, errno);
			return;
		}
		probe->sport = (uint16_t)(40000 + random[0] % 20000);
		probe->tag = random[1] | 1;
		if (raw_send(probe)) {
			finish_errno(probe, errno);
			return;
		}
		probe->phase = WAITING;
		ev.events = EPOLLIN;
	} else if (connect(probe->fd, &probe->dst.sa, probe->dst_len) && errno != EINPROGRESS) {
		finish_errno(probe, errno);
		return;
	} else {
		probe->phase = CONNECTING;
		ev.events = EPOLLOUT;
	}
	if (epoll_ctl(ep, EPOLL_CTL_ADD, probe->fd, &ev))
		finish_errno(probe, errno);
}

/* The echo of a raw SCTP INIT: an INIT ACK from the destination to our port and tag. */
static void raw_event(struct probe *probe)
{
	uint8_t buf[2048];
	const struct sctp_packet *pkt;
	ssize_t n;

	while ((n = recv(probe->fd, buf, sizeof(buf), 0)) > 0) {
		pkt = sctp_parse(probe->dst.sa.sa_family, buf, n);
		if (pkt && pkt->type == SCTP_INIT_ACK && pkt->dport == htons(probe->sport) &&
		    pkt->vtag == probe->tag && pkt->sport == probe->dst.in4.sin_port) {
			finish(probe, "ok");
			return;
		}
	}
}

static void probe_event(int ep, struct probe *probe, uint32_t events)
{
	char buf[MSG_MAX];
	int err = 0;
	socklen_t len = sizeof(err);
	ssize_t n;

	if (probe->proto == P_SCTP && !sctp_kernel) {
		raw_event(probe);
		return;
	}
	if (probe->phase == CONNECTING) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = probe };

		getsockopt(probe->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			finish_errno(probe, err);
			return;
		}
		if (send(probe->fd, probe->msg, probe->msg_len, MSG_NOSIGNAL) !=
		    (ssize_t)probe->msg_len) {
			finish_errno(probe, errno);
			return;
		}
		probe->phase = WAITING;
		epoll_ctl(ep, EPOLL_CTL_MOD, probe->fd, &ev);
		return;
	}
	(void)events;
	n = recv(probe->fd, buf, sizeof(buf) - probe->got, 0);
	if (n < 0 && errno == EAGAIN)
		return;
	if (n < 0) {
		finish_errno(probe, errno);
		return;
	}
	if (n == 0 || memcmp(buf, probe->msg + probe->got, (size_t)n)) {
		finish(probe, "error:bad_echo");
		return;
	}
	probe->got += (size_t)n;
	if (probe->got == probe->msg_len)
		finish(probe, "ok");
}

/* Runs probes[0..n) at once until each has a verdict or timeout_ms passed. */
static int run_probes(struct probe *probes, int n, long timeout_ms)
{
	struct epoll_event events[64];
	long deadline = now_ms() + timeout_ms;
	int ep = epoll_create1(EPOLL_CLOEXEC), pending;

	if (ep < 0)
		return -errno;
	for (int i = 0; i < n; i++)
		probe_start(ep, &probes[i]);
	for (;;) {
		long left = deadline - now_ms();
		int ready;

		pending = 0;
		for (int i = 0; i < n; i++)
			pending += probes[i].phase != DONE;
		if (!pending || left <= 0)
			break;
		ready = epoll_wait(ep, events, 64, (int)left);
		if (ready < 0 && errno != EINTR)
			break;
		for (int i = 0; i < ready; i++)
			probe_event(ep, events[i].data.ptr, events[i].events);
	}
	for (int i = 0; i < n; i++)
		finish(&probes[i], "timeout");
	close(ep);
	return 0;
}

static long parse_timeout(int *argc, char ***argv)
{
	long timeout = DEFAULT_TIMEOUT_MS;

	if (*argc >= 2 && !strcmp((*argv)[0], "-t")) {
		timeout = strtol((*argv)[1], NULL, 10);
		*argc -= 2;
		*argv += 2;
	}
	return timeout > 0 ? timeout : DEFAULT_TIMEOUT_MS;
}

static int cmd_probe(int argc, char **argv)
{
	static struct probe probes[MAX_PROBES];
	long timeout = parse_timeout(&argc, &argv);
	char line[256], id[64], proto[8], addr[64], port[8];
	int n = 0;

	if (argc) {
		fprintf(stderr, "probe: unexpected argument '%s'\n", argv[0]);
		return 2;
	}
	while (fgets(line, sizeof(line), stdin)) {
		struct probe *probe = &probes[n];

		if (sscanf(line, "%63s %7s %63s %7s", id, proto, addr, port) != 4)
			continue;
		if (n == MAX_PROBES || parse_proto(proto, &probe->proto) ||
		    parse_addr(addr, port, &probe->dst, &probe->dst_len)) {
			fprintf(stderr, "probe: bad line: %s", line);
			return 2;
		}
		snprintf(probe->id, sizeof(probe->id), "%s", id);
		probe->fd = -1;
		n++;
	}
	if (run_probes(probes, n, timeout))
		return 1;
	for (int i = 0; i < n; i++)
		printf("%s %s\n", probes[i].id, probes[i].verdict);
	return 0;
}

/* ---------------------------------------------------------------- hold */

/* One exchange on the held socket: "ok" or why not. */
static void hold_exchange(struct probe *probe, unsigned seq, long timeout_ms)
{
	char buf[MSG_MAX];
	struct pollfd pfd = { .fd = probe->fd, .events = POLLIN };
	long deadline = now_ms() + timeout_ms;
	size_t got = 0;
	ssize_t n;

	probe->msg_len = (size_t)snprintf(probe->msg, sizeof(probe->msg), "velo-hold %u\n", seq);
	if (send(probe->fd, probe->msg, probe->msg_len, MSG_NOSIGNAL) != (ssize_t)probe->msg_len) {
		printf("error:%s\n", strerror(errno));
		return;
	}
	while (got < probe->msg_len) {
		long left = deadline - now_ms();

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0) {
			printf("timeout\n");
			return;
		}
		n = recv(probe->fd, buf + got, sizeof(buf) - got, 0);
		if (n < 0 && errno == EAGAIN)
			continue;
		if (n <= 0) {
			printf(n ? "error:%s\n" : "error:closed\n", strerror(errno));
			return;
		}
		got += (size_t)n;
	}
	printf(memcmp(buf, probe->msg, probe->msg_len) ? "error:bad_echo\n" : "ok\n");
}

static int cmd_hold(int argc, char **argv)
{
	static struct probe probe;
	long timeout = parse_timeout(&argc, &argv);
	char line[64];
	unsigned seq = 0;

	if (argc != 3 || parse_proto(argv[0], &probe.proto) ||
	    parse_addr(argv[1], argv[2], &probe.dst, &probe.dst_len)) {
		fprintf(stderr, "usage: hold [-t MS] tcp|udp|sctp ADDR PORT\n");
		return 2;
	}
	if (probe.proto == P_SCTP && !sctp_kernel) {
		fprintf(stderr, "hold: no SCTP sockets in this kernel\n");
		return 2;
	}
	snprintf(probe.id, sizeof(probe.id), "hold");
	probe.fd = -1;
	probe.keep = true;
	/* The connection and a first exchange as a probe; an ok keeps the socket open. */
	if (run_probes(&probe, 1, timeout))
		return 1;
	printf("%s\n", probe.verdict);
	if (strcmp(probe.verdict, "ok"))
		return 0;
	while (fgets(line, sizeof(line), stdin)) {
		hold_exchange(&probe, ++seq, timeout);
		fflush(stdout);
	}
	close(probe.fd);
	return 0;
}

int main(int argc, char **argv)
{
	char reason[160];

	setvbuf(stdout, NULL, _IOLBF, 0);
	sctp_kernel = sctp_probe_kernel(reason, sizeof(reason));
	if (argc >= 2 && !strcmp(argv[1], "serve"))
		return cmd_serve(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "probe"))
		return cmd_probe(argc - 2, argv + 2);
	if (argc >= 2 && !strcmp(argv[1], "hold"))
		return cmd_hold(argc - 2, argv + 2);
	if (argc == 2 && !strcmp(argv[1], "sctp")) {
		if (sctp_kernel)
			printf("kernel\n");
		else
			printf("raw: %s\n", reason);
		return 0;
	}
	fprintf(stderr, "usage: policy_probe serve PORT... | probe [-t MS] | "
			"hold [-t MS] PROTO ADDR PORT | sctp\n");
	return 2;
}
