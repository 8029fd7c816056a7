// SPDX-License-Identifier: Apache-2.0
/*
 * Edge cases of the socket short-circuit, for tests/node/sockmap_edge.bats.
 * Every byte of a stream is a function of its offset, so each receiver checks
 * content, order and length exactly and names the first bad offset. Every
 * wait is a poll() with a timeout: a stall is a failure, never a hang.
 *
 *   server CASE ADDR PORT [key=value...]
 *   client CASE ADDR PORT [key=value...]
 *
 * CASE stream: the client writes `size` bytes (send=write|sendfile|splice, in
 *   `wsize` steps), shuts down its write side and reads `reply` bytes to EOF;
 *   the server reads to EOF (`chunk` bytes per read, `sleep_us` between reads,
 *   peek=1: each read is MSG_PEEK first and must return the peeked bytes;
 *   recv=splice: through a pipe), then writes `reply` bytes and closes.
 * CASE rst: abort=reader: the server reads `size` bytes and closes with
 *   SO_LINGER {1, 0} (RST) while the client keeps writing; the client must get
 *   ECONNRESET or EPIPE. abort=close: the same with a plain close(); wait_eof=1:
 *   the client writes `size` bytes, reads the EOF, then writes on. abort=writer:
 *   the client writes `size` bytes, waits, and resets; the server must read
 *   them all, then ECONNRESET or EOF.
 * CASE rounds: `rounds` exchanges of `size` bytes each way on one connection;
 *   before each round after the first the client waits for the file `gate`.
 *
 * Common keys: conns (connections, one after another), rcvbuf (SO_RCVBUF set
 * before listen/connect), settle_ms (the client's pause after connect, so its
 * first send comes after both ends entered the sockhash), timeout_ms (poll).
 * Exit 0: every check held; 1: a check failed; 2: a usage or setup error.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sendfile.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define SEED_UP 0x6a09e667f3bcc908ull /* client -> server */
#define SEED_DOWN 0xbb67ae8584caa73bull /* server -> client */
#define BUF_MAX (1u << 20)

struct opts {
	const char *kase, *addr, *port, *send, *recv, *abort, *gate;
	uint64_t size, reply;
	unsigned long conns, wsize, chunk, sleep_us, rounds, rcvbuf, settle_ms;
	int timeout_ms;
	bool peek, wait_eof;
};

static const char *who = "sockmap_edge";

#define U(x) ((unsigned long long)(x))

static const char *errname(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "unknown errno";
}

static uint8_t byte_at(uint64_t seed, uint64_t offset)
{
	uint64_t x = seed ^ ((offset / 8) * 0xff51afd7ed558ccdull);

	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 29;
	return (uint8_t)(x >> (8 * (offset % 8)));
}

static void fill(uint64_t seed, uint64_t offset, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = byte_at(seed, offset + i);
}

static __attribute__((noreturn)) void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", who, what, strerror(errno));
	exit(2);
}

static __attribute__((format(printf, 1, 2))) int fail(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", who);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static void *xmalloc(size_t len)
{
	void *p = malloc(len ? len : 1);

	if (!p)
		die("malloc");
	return p;
}

/* Waits for `events` on fd; 0 when ready, 1 (reported) on timeout. */
static int wait_for(int fd, short events, const struct opts *o, const char *doing, uint64_t at)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	int n;

	do
		n = poll(&pfd, 1, o->timeout_ms);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		die("poll");
	if (!n)
		return fail("%s stalled at byte %llu", doing, (unsigned long long)at);
	return 0;
}

/* Checks got bytes at offset `done` of the stream `seed` of `total` bytes. */
static int check(const uint8_t *buf, size_t got, uint64_t seed, uint64_t done, uint64_t total)
{
	for (size_t i = 0; i < got; i++)
		if (done + i >= total || buf[i] != byte_at(seed, done + i))
			return fail("stream differs at offset %llu (of %llu)", U(done + i),
				    U(total));
	return 0;
}

/* ---------------------------------------------------------------- sending */

static int send_write(int fd, uint64_t seed, uint64_t off, uint64_t len, const struct opts *o)
{
	uint8_t *buf = xmalloc(o->wsize);
	uint64_t done = 0;
	int ret = 0;

	while (done < len && !ret) {
		size_t n = len - done < o->wsize ? (size_t)(len - done) : o->wsize;
		ssize_t sent;

		fill(seed, off + done, buf, n);
		sent = send(fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent > 0)
			done += (uint64_t)sent; /* a short write resumes where it stopped */
		else if (sent < 0 && errno == EAGAIN)
			ret = wait_for(fd, POLLOUT, o, "send", off + done);
		else
			ret = fail("send at %llu: %s", U(off + done), errname(errno));
	}
	free(buf);
	return ret;
}

/* A temp file holding the stream; unlinked at once, so nothing is left behind. */
static int stream_file(uint64_t seed, uint64_t len)
{
	char path[] = "/tmp/velotest-edge-XXXXXX";
	uint8_t *buf = xmalloc(BUF_MAX);
	int fd = mkstemp(path);

	if (fd < 0)
		die("mkstemp");
	unlink(path);
	for (uint64_t off = 0; off < len;) {
		size_t n = len - off < BUF_MAX ? (size_t)(len - off) : BUF_MAX;

		fill(seed, off, buf, n);
		if (write(fd, buf, n) != (ssize_t)n)
			die("write temp file");
		off += n;
	}
	free(buf);
	return fd;
}

static int send_sendfile(int fd, uint64_t seed, uint64_t len, const struct opts *o)
{
	int file = stream_file(seed, len), ret = 0;
	off_t off = 0;

	while ((uint64_t)off < len && !ret) {
		size_t n =
			len - (uint64_t)off < o->wsize ? (size_t)(len - (uint64_t)off) : o->wsize;
		ssize_t sent = sendfile(fd, file, &off, n);

		if (sent < 0 && errno == EAGAIN)
			ret = wait_for(fd, POLLOUT, o, "sendfile", (uint64_t)off);
		else if (sent <= 0)
			ret = fail("sendfile at %llu: %s", U(off),
				   sent ? errname(errno) : "0 bytes");
	}
	close(file);
	return ret;
}

/* file -> pipe -> socket, both with splice(2). */
static int send_splice(int fd, uint64_t seed, uint64_t len, const struct opts *o)
{
	int file = stream_file(seed, len), pipefd[2], ret = 0;
	loff_t off = 0;
	uint64_t sent = 0;

	if (pipe(pipefd))
		die("pipe");
	while (sent < len && !ret) {
		size_t n =
			len - (uint64_t)off < o->wsize ? (size_t)(len - (uint64_t)off) : o->wsize;
		ssize_t in = n ? splice(file, &off, pipefd[1], NULL, n, SPLICE_F_MOVE) : 0;

		if (in < 0)
			die("splice file to pipe");
		while (in > 0 && !ret) {
			ssize_t out = splice(pipefd[0], NULL, fd, NULL, (size_t)in,
					     SPLICE_F_MOVE | SPLICE_F_NONBLOCK);

			if (out > 0) {
				in -= out;
				sent += (uint64_t)out;
			} else if (out < 0 && errno == EAGAIN) {
				ret = wait_for(fd, POLLOUT, o, "splice to socket", sent);
			} else {
				ret = fail("splice to socket at %llu: %s", U(sent),
					   out ? errname(errno) : "0 bytes");
			}
		}
	}
	close(pipefd[0]);
	close(pipefd[1]);
	close(file);
	return ret;
}

static int send_stream(int fd, uint64_t seed, uint64_t len, const struct opts *o)
{
	if (!strcmp(o->send, "sendfile"))
		return send_sendfile(fd, seed, len, o);
	if (!strcmp(o->send, "splice"))
		return send_splice(fd, seed, len, o);
	return send_write(fd, seed, 0, len, o);
}

/* ---------------------------------------------------------------- receiving */

/* One read of up to len bytes: >0 bytes, 0 EOF, -errno; -EAGAIN after a wait that timed out. */
static ssize_t read_some(int fd, uint8_t *buf, size_t len, const struct opts *o, uint64_t at)
{
	for (;;) {
		ssize_t got;

		if (o->peek) {
			uint8_t *again = xmalloc(len);

			got = recv(fd, buf, len, MSG_PEEK | MSG_DONTWAIT);
			if (got > 0) {
				/* What was peeked must be exactly what the read returns. */
				ssize_t taken = recv(fd, again, (size_t)got, MSG_DONTWAIT);

				if (taken != got || memcmp(again, buf, (size_t)got)) {
					fail("MSG_PEEK at %llu showed %zd bytes; the read then gave %zd%s",
					     U(at), got, taken,
					     taken == got ? ", other bytes" : "");
					free(again);
					return -EBADMSG;
				}
			}
			free(again);
		} else {
			got = recv(fd, buf, len, MSG_DONTWAIT);
		}
		if (got >= 0)
			return got;
		if (errno != EAGAIN)
			return -errno;
		if (wait_for(fd, POLLIN, o, "recv", at))
			return -ETIMEDOUT;
	}
}

/* socket -> pipe -> buffer. */
static ssize_t splice_some(int fd, int pipefd[2], uint8_t *buf, size_t len, const struct opts *o,
			   uint64_t at)
{
	for (;;) {
		ssize_t got = splice(fd, NULL, pipefd[1], NULL, len, SPLICE_F_NONBLOCK);

		if (got > 0) {
			if (read(pipefd[0], buf, (size_t)got) != got)
				die("read pipe");
			return got;
		}
		if (got == 0)
			return 0;
		if (errno != EAGAIN)
			return -errno;
		if (wait_for(fd, POLLIN, o, "splice from socket", at))
			return -ETIMEDOUT;
	}
}

/* Reads to EOF; the stream must be exactly `total` bytes of `seed` from offset `off`. */
static int recv_stream(int fd, uint64_t seed, uint64_t off, uint64_t total, bool to_eof,
		       const struct opts *o)
{
	size_t chunk = o->chunk < BUF_MAX ? o->chunk : BUF_MAX;
	uint8_t *buf = xmalloc(chunk);
	bool splicing = o->recv && !strcmp(o->recv, "splice");
	int pipefd[2] = { -1, -1 }, ret = 0;
	uint64_t done = off;

	if (splicing && (pipe(pipefd) || fcntl(pipefd[1], F_SETPIPE_SZ, (int)chunk) < 0))
		die("pipe");
	while (!ret && (to_eof || done < off + total)) {
		size_t want =
			to_eof ? chunk
			       : (size_t)(off + total - done < chunk ? off + total - done : chunk);
		ssize_t got = splicing ? splice_some(fd, pipefd, buf, want, o, done)
				       : read_some(fd, buf, want, o, done);

		if (got == 0)
			break;
		if (got < 0) {
			if (got != -ETIMEDOUT && got != -EBADMSG)
				fail("recv at %llu: %s", U(done), errname((int)-got));
			ret = 1;
			break;
		}
		ret = check(buf, (size_t)got, seed, done, off + total);
		done += (uint64_t)got;
		if (o->sleep_us)
			usleep((useconds_t)o->sleep_us);
	}
	if (!ret && done != off + total)
		ret = fail("stream ended at %llu of %llu bytes", U(done), U(off + total));
	if (splicing) {
		close(pipefd[0]);
		close(pipefd[1]);
	}
	free(buf);
	return ret;
}

/* ---------------------------------------------------------------- sockets */

static void resolve(const struct opts *o, struct sockaddr_storage *ss, socklen_t *len)
{
	struct addrinfo hints = { .ai_flags = AI_NUMERICHOST | AI_NUMERICSERV,
				  .ai_socktype = SOCK_STREAM };
	struct addrinfo *res;

	if (getaddrinfo(o->addr, o->port, &hints, &res)) {
		fprintf(stderr, "%s: bad address %s port %s\n", who, o->addr, o->port);
		exit(2);
	}
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	*len = res->ai_addrlen;
	freeaddrinfo(res);
}

static int new_socket(int family, const struct opts *o)
{
	int fd = socket(family, SOCK_STREAM, 0), size = (int)o->rcvbuf;

	if (fd < 0)
		die("socket");
	/* Before listen/connect: the window the handshake announces is then already small. */
	if (o->rcvbuf && setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)))
		die("SO_RCVBUF");
	return fd;
}

static int nonblock(int fd)
{
	int fl = fcntl(fd, F_GETFL);

	if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK))
		die("O_NONBLOCK");
	return fd;
}

static int listen_on(const struct opts *o)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int one = 1, fd;

	resolve(o, &ss, &len);
	fd = new_socket(ss.ss_family, o);
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, len) || listen(fd, 128))
		die("listen");
	return fd;
}

static int accept_one(int listener, const struct opts *o)
{
	int fd;

	if (wait_for(listener, POLLIN, o, "accept", 0))
		exit(1);
	fd = accept(listener, NULL, NULL);
	if (fd < 0)
		die("accept");
	return nonblock(fd);
}

static int connect_to(const struct opts *o)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;

	resolve(o, &ss, &len);
	fd = new_socket(ss.ss_family, o);
	if (connect(fd, (struct sockaddr *)&ss, len))
		die("connect");
	usleep((useconds_t)(o->settle_ms * 1000));
	return nonblock(fd);
}

static void abort_close(int fd)
{
	struct linger lg = { .l_onoff = 1, .l_linger = 0 };

	if (setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg)))
		die("SO_LINGER");
	close(fd); /* sends RST */
}

/* ---------------------------------------------------------------- cases */

static int server_stream(int fd, const struct opts *o)
{
	int ret = recv_stream(fd, SEED_UP, 0, o->size, true, o);
	struct opts plain = *o;

	plain.send = "write";
	if (!ret)
		ret = send_write(fd, SEED_DOWN, 0, o->reply, &plain);
	close(fd);
	return ret;
}

static int client_stream(int fd, const struct opts *o)
{
	struct opts plain = *o;
	int ret = send_stream(fd, SEED_UP, o->size, o);

	plain.peek = false;
	plain.recv = NULL;
	plain.sleep_us = 0;
	plain.chunk = BUF_MAX;
	if (!ret && shutdown(fd, SHUT_WR))
		die("shutdown");
	if (!ret)
		ret = recv_stream(fd, SEED_DOWN, 0, o->reply, true, &plain);
	close(fd);
	return ret;
}

/* The end that did not reset must learn it from an error or EOF, never by a stall. */
static int server_rst(int fd, const struct opts *o)
{
	uint8_t buf[4096];
	int ret;

	if (strcmp(o->abort, "writer")) {
		ret = recv_stream(fd, SEED_UP, 0, o->size, false, o);
		if (!strcmp(o->abort, "close"))
			close(fd);
		else
			abort_close(fd);
		return ret;
	}
	ret = recv_stream(fd, SEED_UP, 0, o->size, false, o);
	if (!ret) {
		ssize_t got = read_some(fd, buf, sizeof(buf), o, o->size);

		if (got > 0)
			ret = fail("%zd bytes after the stream's end (at %llu)", got, U(o->size));
		else if (got < 0 && got != -ECONNRESET)
			ret = got == -ETIMEDOUT ? 1
						: fail("after the reset: %s (at %llu)",
						       errname((int)-got), U(o->size));
		else
			printf("server: %s after the peer's reset\n", got ? "ECONNRESET" : "EOF");
	}
	close(fd);
	return ret;
}

static int client_rst(int fd, const struct opts *o)
{
	uint8_t *buf;
	uint64_t done = 0;

	if (!strcmp(o->abort, "writer")) {
		int ret = send_write(fd, SEED_UP, 0, o->size, o);

		usleep(100000); /* the server is now waiting in poll() */
		abort_close(fd);
		return ret;
	}
	/* wait_eof=1: the peer's close is seen first (FIN read), then we write on. */
	if (o->wait_eof) {
		uint8_t byte;
		int ret = send_write(fd, SEED_UP, 0, o->size, o);
		ssize_t got = ret ? -1 : read_some(fd, &byte, 1, o, 0);

		if (got) {
			close(fd);
			return ret ? ret : fail("expected EOF from the closed peer, got %zd", got);
		}
		done = o->size;
	}
	/* Write until the peer's reset stops us. */
	buf = xmalloc(o->wsize);
	for (;;) {
		ssize_t sent;

		fill(SEED_UP, done, buf, o->wsize);
		sent = send(fd, buf, o->wsize, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (sent > 0) {
			done += (uint64_t)sent;
			continue;
		}
		if (sent < 0 && errno == EAGAIN) {
			if (wait_for(fd, POLLOUT, o, "send before the reset", done))
				break;
			continue;
		}
		free(buf);
		close(fd);
		if (sent < 0 && (errno == ECONNRESET || errno == EPIPE)) {
			printf("client: %s after %llu bytes\n",
			       errno == EPIPE ? "EPIPE" : "ECONNRESET", (unsigned long long)done);
			return 0;
		}
		return fail("send after the peer's close: %s (after %llu bytes)",
			    sent < 0 ? errname(errno) : "0 bytes", U(done));
	}
	free(buf);
	close(fd);
	return 1;
}

static int server_rounds(int fd, const struct opts *o)
{
	int ret = 0;

	for (unsigned long r = 0; r < o->rounds && !ret; r++) {
		ret = recv_stream(fd, SEED_UP, r * o->size, o->size, false, o);
		if (!ret)
			ret = send_write(fd, SEED_DOWN, r * o->size, o->size, o);
	}
	if (!ret)
		ret = recv_stream(fd, SEED_UP, o->rounds * o->size, 0, true, o);
	close(fd);
	return ret;
}

static int client_rounds(int fd, const struct opts *o)
{
	int ret = 0;

	for (unsigned long r = 0; r < o->rounds && !ret; r++) {
		struct stat st;

		/* The test changes the node between rounds, then opens the gate. */
		for (int waited = 0; r && o->gate && stat(o->gate, &st); waited++) {
			if (waited * 10 > o->timeout_ms)
				return fail("gate not opened within %d ms (round %lu)",
					    o->timeout_ms, r);
			usleep(10000);
		}
		printf("client: round %lu\n", r);
		fflush(stdout);
		ret = send_write(fd, SEED_UP, r * o->size, o->size, o);
		if (!ret)
			ret = recv_stream(fd, SEED_DOWN, r * o->size, o->size, false, o);
	}
	if (!ret && shutdown(fd, SHUT_WR))
		die("shutdown");
	close(fd);
	return ret;
}

/* ---------------------------------------------------------------- main */

static int parse(int argc, char **argv, struct opts *o)
{
	*o = (struct opts){ .send = "write",
			    .abort = "reader",
			    .conns = 1,
			    .wsize = 65536,
			    .chunk = BUF_MAX,
			    .rounds = 2,
			    .settle_ms = 50,
			    .timeout_ms = 10000 };
	o->kase = argv[0];
	o->addr = argv[1];
	o->port = argv[2];
	for (int i = 3; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		const char *key = argv[i], *val = eq ? eq + 1 : "";
		unsigned long long num = strtoull(val, NULL, 0);

		if (!eq)
			return -EINVAL;
		*eq = '\0';
		if (!strcmp(key, "size"))
			o->size = num;
		else if (!strcmp(key, "reply"))
			o->reply = num;
		else if (!strcmp(key, "conns"))
			o->conns = num;
		else if (!strcmp(key, "wsize"))
			o->wsize = num ? num : 1;
		else if (!strcmp(key, "chunk"))
			o->chunk = num ? num : 1;
		else if (!strcmp(key, "sleep_us"))
			o->sleep_us = num;
		else if (!strcmp(key, "rounds"))
			o->rounds = num;
		else if (!strcmp(key, "rcvbuf"))
			o->rcvbuf = num;
		else if (!strcmp(key, "settle_ms"))
			o->settle_ms = num;
		else if (!strcmp(key, "timeout_ms"))
			o->timeout_ms = (int)num;
		else if (!strcmp(key, "peek"))
			o->peek = num;
		else if (!strcmp(key, "wait_eof"))
			o->wait_eof = num;
		else if (!strcmp(key, "send"))
			o->send = val;
		else if (!strcmp(key, "recv"))
			o->recv = val;
		else if (!strcmp(key, "abort"))
			o->abort = val;
		else if (!strcmp(key, "gate"))
			o->gate = val;
		else
			return -EINVAL;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int (*run)(int fd, const struct opts *o) = NULL;
	bool server = argc > 1 && !strcmp(argv[1], "server");
	unsigned long bad = 0;
	struct opts o;
	int listener = -1;

	signal(SIGPIPE, SIG_IGN);
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 5 || parse(argc - 2, argv + 2, &o)) {
		fprintf(stderr, "usage: see the comment at the top of tests/node/sockmap/sockmap_edge.c\n");
		return 2;
	}
	who = server ? "server" : "client";
	if (!strcmp(o.kase, "stream"))
		run = server ? server_stream : client_stream;
	else if (!strcmp(o.kase, "rst"))
		run = server ? server_rst : client_rst;
	else if (!strcmp(o.kase, "rounds"))
		run = server ? server_rounds : client_rounds;
	if (!run || (!server && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: see the comment at the top of tests/node/sockmap/sockmap_edge.c\n");
		return 2;
	}
	if (server) {
		listener = listen_on(&o);
		/* Ready: the test waits for this line before connecting. */
		printf("listening\n");
		fflush(stdout);
	}
	for (unsigned long i = 0; i < o.conns; i++)
		bad += (unsigned long)run(server ? accept_one(listener, &o) : connect_to(&o), &o);
	printf("%s: %lu of %lu connections correct\n", who, o.conns - bad, o.conns);
	return bad ? 1 : 0;
}
