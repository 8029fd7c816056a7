// SPDX-License-Identifier: Apache-2.0
/*
 * Socket semantics battery for tests/node/sockmap/sock_battery.bats: what applications
 * (curl, nginx, HAProxy, Go's net, Python's socket, Java NIO) expect of a TCP
 * socket, one connection per case, the same on every datapath.
 *
 *   server ADDR PORT          accepts until killed, one forked child per case
 *   client ADDR PORT [CASE]   runs the cases (all by default), one line each:
 *                             "ok CASE" or "FAIL CASE: why"; exit 1 if any failed
 *   list                      the case names
 *
 * Each byte of a stream is a function of its direction and offset: receivers
 * check every byte and the length, and uploads are answered with their
 * length and FNV-1a digest. Every case runs in a child under alarm(): a hang
 * is reported as a failure, never waited out. Server-side failures are
 * printed by the server as "FAIL CASE (server): why".
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/sockios.h>

#define UP 0x6a09e667f3bcc908ull /* client -> server */
#define DOWN 0xbb67ae8584caa73bull /* server -> client */
#define NAME_LEN 32
#define CASE_SECONDS 15
/* A case's deadline; SOCK_BATTERY_CASE_SECONDS raises it where the CPU is emulated (qemu TCG). */
static unsigned case_seconds = CASE_SECONDS;
#define POLL_MS 5000
#define BUF (1u << 20)

static uint8_t byte_at(uint64_t seed, uint64_t off)
{
	uint64_t x = seed ^ ((off / 8) * 0xff51afd7ed558ccdull);

	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 29;
	return (uint8_t)(x >> (8 * (off % 8)));
}

static void gen(uint64_t seed, uint64_t off, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = byte_at(seed, off + i);
}

/* The first offset in buf that isn't the stream's, or -1. */
static int64_t bad_at(uint64_t seed, uint64_t off, const uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		if (buf[i] != byte_at(seed, off + i))
			return (int64_t)(off + i);
	return -1;
}

struct digest {
	uint64_t len, fnv;
};

static void digest_add(struct digest *d, const uint8_t *buf, size_t len)
{
	if (!d->len && !d->fnv)
		d->fnv = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		d->fnv = (d->fnv ^ buf[i]) * 0x100000001b3ull;
	d->len += len;
}

static struct digest digest_of(uint64_t seed, uint64_t len)
{
	static uint8_t buf[65536];
	struct digest d = { 0 };

	for (uint64_t off = 0; off < len; off += sizeof(buf)) {
		size_t n = len - off < sizeof(buf) ? (size_t)(len - off) : sizeof(buf);

		gen(seed, off, buf, n);
		digest_add(&d, buf, n);
	}
	return d;
}

static char why[256];
static const char *role = "client";

static int __attribute__((format(printf, 1, 2))) fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	return -1;
}

static const char *en(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "?";
}

static void set_nonblock(int fd, bool on)
{
	int flags = fcntl(fd, F_GETFL);

	fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

static int wait_for(int fd, short events, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&pfd, 1, ms);
	while (n < 0 && errno == EINTR);
	return n;
}

static void msleep(int ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Writes len bytes of the stream from off in wsize pieces (blocking socket). */
static int send_stream(int fd, uint64_t seed, uint64_t off, uint64_t len, size_t wsize)
{
	static uint8_t buf[BUF];

	for (uint64_t done = 0; done < len;) {
		size_t n = len - done < wsize ? (size_t)(len - done) : wsize;
		ssize_t w;

		gen(seed, off + done, buf, n);
		w = send(fd, buf, n, MSG_NOSIGNAL);
		if (w < 0)
			return fail("send at %llu: %s", (unsigned long long)done, en(errno));
		done += (uint64_t)w;
	}
	return 0;
}

/*
 * Reads the stream to EOF and checks it: blocking recv() as plain clients do,
 * or poll() + non-blocking recv() as event loops do. Returns the length.
 */
static int64_t recv_stream(int fd, uint64_t seed, bool blocking, size_t chunk, struct digest *d)
{
	static uint8_t buf[BUF];
	uint64_t off = 0;

	set_nonblock(fd, !blocking);
	for (;;) {
		ssize_t n;
		int64_t bad;

		if (!blocking && wait_for(fd, POLLIN, POLL_MS) != 1)
			return fail("poll: no data or EOF in %d ms at %llu", POLL_MS,
				    (unsigned long long)off);
		n = recv(fd, buf, chunk, 0);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EINTR || (!blocking && errno == EAGAIN))
				continue;
			return fail("%s recv at %llu: %s", blocking ? "blocking" : "poll+",
				    (unsigned long long)off, en(errno));
		}
		bad = bad_at(seed, off, buf, (size_t)n);
		if (bad >= 0)
			return fail("byte %lld wrong", (long long)bad);
		if (d)
			digest_add(d, buf, (size_t)n);
		off += (uint64_t)n;
	}
	set_nonblock(fd, false);
	return (int64_t)off;
}

/* Exactly len bytes into buf (blocking, or poll first). */
static int recv_exact(int fd, void *buf, size_t len, bool blocking)
{
	for (size_t got = 0; got < len;) {
		ssize_t n;

		if (!blocking && wait_for(fd, POLLIN, POLL_MS) != 1)
			return fail("poll: nothing in %d ms", POLL_MS);
		n = recv(fd, (char *)buf + got, len - got, blocking ? 0 : MSG_DONTWAIT);
		if (n == 0)
			return fail("EOF after %zu of %zu bytes", got, len);
		if (n < 0) {
			if (errno == EINTR || (!blocking && errno == EAGAIN))
				continue;
			return fail("%s recv: %s", blocking ? "blocking" : "poll+", en(errno));
		}
		got += (size_t)n;
	}
	return 0;
}

/* The client's side of an upload: the server's answer (length and digest) must match. */
static int check_answer(int fd, uint64_t len, bool blocking)
{
	struct digest want = digest_of(UP, len), got;
	char end;

	if (recv_exact(fd, &got, sizeof(got), blocking))
		return -1;
	if (got.len != want.len || got.fnv != want.fnv)
		return fail("server got %llu bytes (digest %s), sent %llu",
			    (unsigned long long)got.len, got.fnv == want.fnv ? "ok" : "differs",
			    (unsigned long long)len);
	if (!blocking && wait_for(fd, POLLIN, POLL_MS) != 1)
		return fail("no EOF after the answer");
	if (recv(fd, &end, 1, 0) != 0)
		return fail("%s recv of the EOF after the answer: %s",
			    blocking ? "blocking" : "poll+", en(errno));
	return 0;
}

/* The server's side of an upload: read to EOF, answer with length and digest, close. */
static int answer_upload(int fd)
{
	struct digest d = { 0 };

	if (recv_stream(fd, UP, false, 65536, &d) < 0)
		return -1;
	if (send(fd, &d, sizeof(d), MSG_NOSIGNAL) != (ssize_t)sizeof(d))
		return fail("answer: %s", en(errno));
	return 0;
}

/* The server side of a download: send len bytes, half-close, wait for the client's EOF. */
static int serve_download(int fd, uint64_t len, size_t wsize)
{
	char c;

	if (send_stream(fd, DOWN, 0, len, wsize) || shutdown(fd, SHUT_WR))
		return -1;
	if (wait_for(fd, POLLIN, POLL_MS * 2) != 1)
		return fail("client never closed");
	(void)!recv(fd, &c, 1, MSG_DONTWAIT);
	return 0;
}

static int expect_len(int64_t got, uint64_t want)
{
	if (got < 0)
		return -1;
	if ((uint64_t)got != want)
		return fail("stream ended at %lld of %llu bytes", (long long)got,
			    (unsigned long long)want);
	return 0;
}

/* ----------------------------------------------------------------- cases */

/* Reads after the peer's FIN: a download the server ends with shutdown(SHUT_WR). */
static int c_fin_blocking(int fd)
{
	return expect_len(recv_stream(fd, DOWN, true, 65536, NULL), 1 << 20);
}

static int c_fin_poll(int fd)
{
	return expect_len(recv_stream(fd, DOWN, false, 65536, NULL), 1 << 20);
}

static int s_download_1m(int fd)
{
	return serve_download(fd, 1 << 20, 65536);
}

/* curl/Go/Python upload then read: write, shutdown(SHUT_WR), read the answer. */
static int upload(int fd, uint64_t len, size_t wsize, bool blocking, bool nodelay)
{
	int one = 1;

	if (nodelay)
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (send_stream(fd, UP, 0, len, wsize))
		return -1;
	if (shutdown(fd, SHUT_WR))
		return fail("shutdown: %s", en(errno));
	return check_answer(fd, len, blocking);
}

static int c_halfclose_blocking(int fd)
{
	return upload(fd, 16 << 20, 65536, true, false);
}

static int c_halfclose_small(int fd)
{
	return upload(fd, 65536, 65536, true, false);
}

static int c_halfclose_poll(int fd)
{
	return upload(fd, 16 << 20, 65536, false, false);
}

static int c_small_writes(int fd)
{
	return upload(fd, 7 * 20000, 7, false, false);
}

static int c_small_writes_nodelay(int fd)
{
	return upload(fd, 7 * 20000, 7, false, true);
}

static int c_large_writes(int fd)
{
	return upload(fd, 16 << 20, 1 << 20, false, true);
}

/* MSG_PEEK (HAProxy, protocol sniffers): each peek is exactly what the next read returns. */
static int c_peek(int fd)
{
	uint8_t peek[1000], got[1000];

	for (uint64_t off = 0; off < 4000; off += sizeof(got)) {
		ssize_t p, n;

		if (wait_for(fd, POLLIN, POLL_MS) != 1)
			return fail("poll at %llu", (unsigned long long)off);
		p = recv(fd, peek, sizeof(peek), MSG_PEEK | MSG_DONTWAIT);
		if (p <= 0)
			return fail("peek at %llu: %zd %s", (unsigned long long)off, p, en(errno));
		n = recv(fd, got, (size_t)p, MSG_DONTWAIT);
		if (n != p || memcmp(peek, got, (size_t)p))
			return fail("read after a peek of %zd returned %zd, other bytes", p, n);
		if (bad_at(DOWN, off, got, (size_t)n) >= 0)
			return fail("byte wrong at %llu", (unsigned long long)off);
		off -= sizeof(got) - (uint64_t)n;
	}
	return 0;
}

static int s_download_4000(int fd)
{
	return serve_download(fd, 4000, 1000);
}

/* MSG_WAITALL (Java's readFully-style, C clients): one recv returns the whole record. */
static int c_waitall(int fd)
{
	static uint8_t buf[65536];
	ssize_t n = recv(fd, buf, sizeof(buf), MSG_WAITALL);

	if (n != (ssize_t)sizeof(buf))
		return fail("recv(MSG_WAITALL, 65536) returned %zd (%s)", n,
			    n < 0 ? en(errno) : "");
	return bad_at(DOWN, 0, buf, sizeof(buf)) >= 0 ? fail("byte wrong") : 0;
}

static int s_trickle_64k(int fd)
{
	for (int i = 0; i < 16; i++) {
		if (send_stream(fd, DOWN, (uint64_t)i * 4096, 4096, 4096))
			return -1;
		msleep(5);
	}
	return serve_download(fd, 0, 1);
}

/* SO_RCVLOWAT (nginx, HAProxy): poll says readable only once that many bytes are queued. */
static int c_rcvlowat(int fd)
{
	int lowat = 1000, n;
	uint8_t buf[1000];

	if (setsockopt(fd, SOL_SOCKET, SO_RCVLOWAT, &lowat, sizeof(lowat)))
		return fail("SO_RCVLOWAT: %s", en(errno));
	n = wait_for(fd, POLLIN, 150);
	if (n != 0)
		return fail("poll readable with 500 of SO_RCVLOWAT 1000 bytes queued");
	if (wait_for(fd, POLLIN, POLL_MS) != 1)
		return fail("poll not readable with 1000 bytes queued");
	if (ioctl(fd, FIONREAD, &n) || n < 1000)
		return fail("FIONREAD %d after poll, want >= 1000", n);
	if (recv_exact(fd, buf, sizeof(buf), true))
		return -1;
	return bad_at(DOWN, 0, buf, sizeof(buf)) >= 0 ? fail("byte wrong") : 0;
}

static int s_two_halves(int fd)
{
	if (send_stream(fd, DOWN, 0, 500, 500))
		return -1;
	msleep(400);
	if (send_stream(fd, DOWN, 500, 500, 500))
		return -1;
	return serve_download(fd, 0, 1);
}

/* FIONREAD and SIOCINQ (Java's available(), Python's select loops): the queued byte count. */
static int c_fionread(int fd)
{
	int fion = -1, inq = -1;

	if (wait_for(fd, POLLIN, POLL_MS) != 1)
		return fail("poll");
	for (int i = 0; i < 200; i++) {
		if (ioctl(fd, FIONREAD, &fion) || ioctl(fd, SIOCINQ, &inq))
			return fail("ioctl: %s", en(errno));
		if (fion == 5000 && inq == 5000)
			break;
		msleep(10);
	}
	if (fion != 5000 || inq != 5000)
		return fail("FIONREAD %d, SIOCINQ %d with 5000 bytes queued", fion, inq);
	return expect_len(recv_stream(fd, DOWN, false, 65536, NULL), 5000);
}

static int s_download_5000(int fd)
{
	return serve_download(fd, 5000, 5000);
}

/* splice(2) socket -> pipe (HAProxy, nginx with splice): the bytes, then EOF. */
static int c_splice_read(int fd)
{
	static uint8_t buf[65536];
	int pipefd[2];
	uint64_t off = 0;

	if (pipe(pipefd))
		return fail("pipe");
	set_nonblock(fd, true);
	for (;;) {
		ssize_t n, r;

		if (wait_for(fd, POLLIN, POLL_MS) != 1)
			return fail("poll at %llu", (unsigned long long)off);
		n = splice(fd, NULL, pipefd[1], NULL, sizeof(buf), SPLICE_F_NONBLOCK);
		if (n == 0)
			break;
		if (n < 0) {
			if (errno == EAGAIN)
				continue;
			return fail("splice: %s", en(errno));
		}
		r = read(pipefd[0], buf, (size_t)n);
		if (r != n || bad_at(DOWN, off, buf, (size_t)n) >= 0)
			return fail("spliced bytes wrong at %llu", (unsigned long long)off);
		off += (uint64_t)n;
	}
	if (off != 1 << 20) {
		char c;
		ssize_t n = recv(fd, &c, 1, MSG_DONTWAIT);

		return fail("splice read %llu of %u bytes, then 0 (EOF); recv() then: %zd",
			    (unsigned long long)off, 1u << 20, n);
	}
	return 0;
}

/* splice(2) pipe -> socket (proxies' other direction). */
static int c_splice_write(int fd)
{
	static uint8_t buf[65536];
	const uint64_t len = 1 << 20;
	int pipefd[2];

	if (pipe(pipefd))
		return fail("pipe");
	for (uint64_t off = 0; off < len; off += sizeof(buf)) {
		size_t left = sizeof(buf);

		gen(UP, off, buf, sizeof(buf));
		if (write(pipefd[1], buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return fail("pipe write");
		while (left) {
			ssize_t n = splice(pipefd[0], NULL, fd, NULL, left, SPLICE_F_MOVE);

			if (n <= 0)
				return fail("splice to socket: %zd %s", n, en(errno));
			left -= (size_t)n;
		}
	}
	if (shutdown(fd, SHUT_WR))
		return fail("shutdown");
	return check_answer(fd, len, false);
}

/* sendfile(2) (nginx, Go's io.Copy from a file). */
static int c_sendfile(int fd)
{
	static uint8_t buf[65536];
	const uint64_t len = (1 << 20) + 7;
	int file = memfd_create("velotest-battery", MFD_CLOEXEC);
	off_t off = 0;

	if (file < 0)
		return fail("memfd");
	for (uint64_t o = 0; o < len; o += sizeof(buf)) {
		size_t n = len - o < sizeof(buf) ? (size_t)(len - o) : sizeof(buf);

		gen(UP, o, buf, n);
		if (write(file, buf, n) != (ssize_t)n)
			return fail("file write");
	}
	while ((uint64_t)off < len) {
		ssize_t n = sendfile(fd, file, &off, len - (uint64_t)off);

		if (n <= 0)
			return fail("sendfile: %zd %s", n, en(errno));
	}
	close(file);
	if (shutdown(fd, SHUT_WR))
		return fail("shutdown");
	return check_answer(fd, len, false);
}

/* epoll, edge- or level-triggered (nginx, Go's netpoller, Java NIO, asyncio). */
static int epoll_read(int fd, bool edge, size_t chunk)
{
	static uint8_t buf[65536];
	struct epoll_event ev = { .events = EPOLLIN | EPOLLRDHUP | (edge ? EPOLLET : 0) };
	int ep = epoll_create1(EPOLL_CLOEXEC);
	uint64_t off = 0;
	bool eof = false;

	set_nonblock(fd, true);
	if (ep < 0 || epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev))
		return fail("epoll");
	while (!eof) {
		if (epoll_wait(ep, &ev, 1, POLL_MS) != 1)
			return fail("epoll_wait: no event in %d ms at %llu", POLL_MS,
				    (unsigned long long)off);
		/* Edge-triggered: drain until EAGAIN, or the next edge may never come. */
		do {
			ssize_t n = recv(fd, buf, chunk, 0);

			if (n == 0) {
				eof = true;
				break;
			}
			if (n < 0) {
				if (errno == EAGAIN)
					break;
				return fail("recv: %s", en(errno));
			}
			if (bad_at(DOWN, off, buf, (size_t)n) >= 0)
				return fail("byte wrong at %llu", (unsigned long long)off);
			off += (uint64_t)n;
		} while (edge);
	}
	close(ep);
	return expect_len((int64_t)off, 4 * 65536);
}

static int c_epoll_et(int fd)
{
	return epoll_read(fd, true, 65536);
}

static int c_epoll_lt(int fd)
{
	return epoll_read(fd, false, 1000);
}

static int s_bursts(int fd)
{
	for (int i = 0; i < 4; i++) {
		if (send_stream(fd, DOWN, (uint64_t)i * 65536, 65536, 65536))
			return -1;
		msleep(20);
	}
	return serve_download(fd, 0, 1);
}

/* poll() wakes a sleeping reader when data arrives later. */
static int c_poll_wakeup(int fd)
{
	struct timespec a, b;
	uint8_t c;

	clock_gettime(CLOCK_MONOTONIC, &a);
	if (wait_for(fd, POLLIN, POLL_MS) != 1)
		return fail("poll: no wakeup in %d ms", POLL_MS);
	clock_gettime(CLOCK_MONOTONIC, &b);
	if (recv(fd, &c, 1, MSG_DONTWAIT) != 1 || c != byte_at(DOWN, 0))
		return fail("woken, but no byte: %s", en(errno));
	(void)a;
	(void)b;
	return 0;
}

static int s_late_byte(int fd)
{
	msleep(200);
	if (send_stream(fd, DOWN, 0, 1, 1))
		return -1;
	return serve_download(fd, 0, 1);
}

/*
 * Request/response framing (HTTP/1.1 keep-alive, RPC): a length prefix and the
 * body in one write, as servers and clients buffer them; exact blocking reads.
 */
static int c_rr(int fd)
{
	static uint8_t buf[4 + 20000];
	uint64_t up = 0, down = 0;

	for (uint32_t i = 0; i < 300; i++) {
		uint32_t len = 1 + (i * 7919) % 20000;

		memcpy(buf, &len, sizeof(len));
		gen(UP, up, buf + 4, len);
		if (send(fd, buf, 4 + len, MSG_NOSIGNAL) != (ssize_t)(4 + len))
			return fail("request %u: %s", i, en(errno));
		up += len;
		if (recv_exact(fd, buf, len, true))
			return fail("response %u: %s", i, why);
		if (bad_at(DOWN, down, buf, len) >= 0)
			return fail("response %u wrong", i);
		down += len;
	}
	return 0;
}

static int s_rr(int fd)
{
	static uint8_t buf[4 + 20000];
	uint64_t up = 0, down = 0;
	uint32_t len;

	for (uint32_t i = 0; i < 300; i++) {
		if (recv_exact(fd, &len, sizeof(len), true) || len > sizeof(buf) - 4 ||
		    recv_exact(fd, buf, len, true))
			return fail("request %u: %s", i, why);
		if (bad_at(UP, up, buf, len) >= 0)
			return fail("request %u wrong", i);
		up += len;
		if (send_stream(fd, DOWN, down, len, len))
			return -1;
		down += len;
	}
	return 0;
}

/* Full duplex: both ends write and read 4 MiB at once (poll loop, non-blocking). */
static int duplex(int fd, uint64_t out_seed, uint64_t in_seed)
{
	static uint8_t obuf[65536], ibuf[65536];
	const uint64_t len = 4 << 20;
	uint64_t sent = 0, got = 0;
	bool shut = false;

	set_nonblock(fd, true);
	while (got < len || !shut) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN | (shut ? 0 : POLLOUT) };
		ssize_t n;

		if (poll(&pfd, 1, POLL_MS) != 1)
			return fail("duplex stalled: sent %llu, got %llu", (unsigned long long)sent,
				    (unsigned long long)got);
		if (!shut && (pfd.revents & POLLOUT)) {
			size_t w = len - sent < sizeof(obuf) ? (size_t)(len - sent) : sizeof(obuf);

			gen(out_seed, sent, obuf, w);
			n = send(fd, obuf, w, MSG_NOSIGNAL);
			if (n > 0)
				sent += (uint64_t)n;
			else if (n < 0 && errno != EAGAIN)
				return fail("send: %s", en(errno));
			if (sent == len) {
				shutdown(fd, SHUT_WR);
				shut = true;
			}
		}
		if (pfd.revents & (POLLIN | POLLHUP | POLLERR)) {
			n = recv(fd, ibuf, sizeof(ibuf), 0);
			if (n == 0 && got < len)
				return fail("EOF at %llu", (unsigned long long)got);
			if (n < 0 && errno != EAGAIN)
				return fail("recv: %s", en(errno));
			if (n > 0) {
				if (bad_at(in_seed, got, ibuf, (size_t)n) >= 0)
					return fail("byte wrong at %llu", (unsigned long long)got);
				got += (uint64_t)n;
			}
		}
	}
	return 0;
}

static int c_duplex(int fd)
{
	return duplex(fd, UP, DOWN);
}

static int s_duplex(int fd)
{
	return duplex(fd, DOWN, UP);
}

/* SO_LINGER {1, 0}: the client resets; the server reads what came, then ECONNRESET or EOF. */
static int c_linger0(int fd)
{
	struct linger lin = { 1, 0 };

	if (send_stream(fd, UP, 0, 100, 100))
		return -1;
	msleep(100);
	setsockopt(fd, SOL_SOCKET, SO_LINGER, &lin, sizeof(lin));
	return 0;
}

static int s_linger0(int fd)
{
	uint8_t buf[4096];
	uint64_t off = 0;

	for (;;) {
		ssize_t n;

		if (wait_for(fd, POLLIN, POLL_MS) != 1)
			return fail("no RST or EOF after %d ms", POLL_MS);
		n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		if (n < 0 && errno != EAGAIN)
			return fail("recv: %s (want ECONNRESET or EOF)", en(errno));
		if (n > 0 && bad_at(UP, off, buf, (size_t)n) >= 0)
			return fail("byte wrong");
		if (n > 0)
			off += (uint64_t)n;
	}
	return off <= 100 ? 0 : fail("read %llu bytes, 100 were sent", (unsigned long long)off);
}

/* The peer closes with our data unread: our writes fail (EPIPE/ECONNRESET), never hang. */
static int c_peer_close_unread(int fd)
{
	static uint8_t buf[65536];

	for (uint64_t sent = 0; sent < (1ull << 30);) {
		ssize_t n = send(fd, buf, sizeof(buf), MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EPIPE || errno == ECONNRESET)
				return 0;
			return fail("send: %s (want EPIPE or ECONNRESET)", en(errno));
		}
		sent += (uint64_t)n;
	}
	return fail("1 GiB sent to a closed peer without an error");
}

static int s_close_unread(int fd)
{
	if (wait_for(fd, POLLIN, POLL_MS) != 1)
		return fail("nothing came");
	msleep(50);
	return 0; /* the caller closes with the data unread: RST */
}

static int s_upload(int fd)
{
	return answer_upload(fd);
}

struct kase {
	const char *name;
	int (*client)(int fd);
	int (*server)(int fd);
};

static const struct kase cases[] = {
	{ "fin-read-blocking", c_fin_blocking, s_download_1m },
	{ "fin-read-poll", c_fin_poll, s_download_1m },
	{ "halfclose-blocking", c_halfclose_blocking, s_upload },
	{ "halfclose-small-blocking", c_halfclose_small, s_upload },
	{ "halfclose-poll", c_halfclose_poll, s_upload },
	{ "msg-peek", c_peek, s_download_4000 },
	{ "msg-waitall", c_waitall, s_trickle_64k },
	{ "so-rcvlowat", c_rcvlowat, s_two_halves },
	{ "fionread-siocinq", c_fionread, s_download_5000 },
	{ "splice-read", c_splice_read, s_download_1m },
	{ "splice-write", c_splice_write, s_upload },
	{ "sendfile", c_sendfile, s_upload },
	{ "epoll-et", c_epoll_et, s_bursts },
	{ "epoll-lt", c_epoll_lt, s_bursts },
	{ "poll-wakeup", c_poll_wakeup, s_late_byte },
	{ "small-writes", c_small_writes, s_upload },
	{ "small-writes-nodelay", c_small_writes_nodelay, s_upload },
	{ "large-writes-nodelay", c_large_writes, s_upload },
	{ "request-response", c_rr, s_rr },
	{ "full-duplex", c_duplex, s_duplex },
	{ "linger0-rst", c_linger0, s_linger0 },
	{ "peer-close-unread", c_peer_close_unread, s_close_unread },
};
#define N_CASES (sizeof(cases) / sizeof(cases[0]))

static int resolve(const char *addr, const char *port, struct addrinfo **res, bool passive)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = AI_NUMERICHOST | (passive ? AI_PASSIVE : 0) };

	return getaddrinfo(addr, port, &hints, res);
}

/* Runs fn in a child with a deadline; 0 when it said ok, else why holds the reason. */
static int bounded(int (*fn)(const struct kase *, const char *, const char *), const struct kase *k,
		   const char *addr, const char *port)
{
	int pipefd[2], status;
	ssize_t n;
	pid_t pid;

	if (pipe(pipefd))
		return fail("pipe");
	pid = fork();
	if (pid == 0) {
		close(pipefd[0]);
		alarm(case_seconds);
		why[0] = '\0';
		if (fn(k, addr, port)) {
			(void)!write(pipefd[1], why, strlen(why));
			_exit(1);
		}
		_exit(0);
	}
	close(pipefd[1]);
	n = read(pipefd[0], why, sizeof(why) - 1);
	why[n > 0 ? n : 0] = '\0';
	close(pipefd[0]);
	waitpid(pid, &status, 0);
	if (WIFSIGNALED(status))
		return fail("hung: killed after %u s%s%s", case_seconds, why[0] ? ", " : "", why);
	return WEXITSTATUS(status) ? -1 : 0;
}

static int client_case(const struct kase *k, const char *addr, const char *port)
{
	char name[NAME_LEN] = { 0 };
	struct addrinfo *ai;
	int fd, ret;

	if (resolve(addr, port, &ai, false))
		return fail("resolve");
	fd = socket(ai->ai_family, SOCK_STREAM, 0);
	if (fd < 0 || connect(fd, ai->ai_addr, ai->ai_addrlen))
		return fail("connect: %s", en(errno));
	freeaddrinfo(ai);
	snprintf(name, sizeof(name), "%s", k->name);
	/* Let both ends enter the sockhash before the first send (see docs/sockmap.md). */
	msleep(20);
	if (send(fd, name, sizeof(name), MSG_NOSIGNAL) != sizeof(name))
		return fail("header: %s", en(errno));
	ret = k->client(fd);
	close(fd);
	return ret;
}

static int server_case(const struct kase *k, const char *addr, const char *port)
{
	int fd = atoi(addr), ret;

	(void)port;
	ret = k->server(fd);
	close(fd);
	return ret;
}

static int run_server(const char *addr, const char *port)
{
	struct addrinfo *ai;
	int listener, one = 1;

	if (resolve(addr, port, &ai, true))
		return 2;
	listener = socket(ai->ai_family, SOCK_STREAM, 0);
	setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (listener < 0 || bind(listener, ai->ai_addr, ai->ai_addrlen) || listen(listener, 64)) {
		perror("listen");
		return 2;
	}
	freeaddrinfo(ai);
	printf("listening\n");
	fflush(stdout);
	signal(SIGCHLD, SIG_IGN);
	for (;;) {
		char name[NAME_LEN + 1] = { 0 }, fdstr[16];
		int fd = accept(listener, NULL, NULL);

		if (fd < 0)
			continue;
		if (fork()) {
			close(fd);
			continue;
		}
		close(listener);
		signal(SIGCHLD, SIG_DFL);
		role = "server";
		if (recv_exact(fd, name, NAME_LEN, false)) {
			printf("FAIL header (server): %s\n", why);
			_exit(1);
		}
		for (unsigned i = 0; i < N_CASES; i++) {
			if (strcmp(cases[i].name, name))
				continue;
			snprintf(fdstr, sizeof(fdstr), "%d", fd);
			if (bounded(server_case, &cases[i], fdstr, port))
				printf("FAIL %s (server): %s\n", name, why);
			fflush(stdout);
			_exit(0);
		}
		printf("FAIL %s (server): unknown case\n", name);
		_exit(1);
	}
}

int main(int argc, char **argv)
{
	int failed = 0, ran = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (getenv("SOCK_BATTERY_CASE_SECONDS") && atoi(getenv("SOCK_BATTERY_CASE_SECONDS")) > 0)
		case_seconds = (unsigned)atoi(getenv("SOCK_BATTERY_CASE_SECONDS"));
	signal(SIGPIPE, SIG_IGN);
	if (argc == 2 && !strcmp(argv[1], "list")) {
		for (unsigned i = 0; i < N_CASES; i++)
			printf("%s\n", cases[i].name);
		return 0;
	}
	if (argc == 4 && !strcmp(argv[1], "server"))
		return run_server(argv[2], argv[3]);
	if (argc < 4 || strcmp(argv[1], "client")) {
		fprintf(stderr, "usage: %s server|client ADDR PORT [CASE...] | list\n", argv[0]);
		return 2;
	}
	for (unsigned i = 0; i < N_CASES; i++) {
		bool wanted = argc == 4;

		for (int a = 4; a < argc; a++)
			wanted |= !strcmp(argv[a], cases[i].name);
		if (!wanted)
			continue;
		ran++;
		if (bounded(client_case, &cases[i], argv[2], argv[3])) {
			printf("FAIL %s: %s\n", cases[i].name, why);
			failed++;
		} else {
			printf("ok %s\n", cases[i].name);
		}
	}
	(void)role;
	return ran ? failed != 0 : 2;
}
