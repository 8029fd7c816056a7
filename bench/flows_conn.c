// SPDX-License-Identifier: Apache-2.0
/*
 * bench/flows.sh's traffic: short TCP connections and a drop flood.
 *   flows_conn server PORT             accepts, reads 1 byte, answers 1 byte, closes; forever
 *   flows_conn client ADDR PORT COUNT  COUNT connections one after another: "conns_per_s"
 *   flows_conn flood ADDR PORT SECONDS UDP sendto as fast as it goes (a deny list refuses
 *                                      each one): "sends_per_s"
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static void die(const char *what)
{
	fprintf(stderr, "flows_conn: %s: %s\n", what, strerror(errno));
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct sockaddr_in address(const char *ip, const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };

	if (inet_pton(AF_INET, ip, &sin.sin_addr) != 1) {
		errno = EINVAL;
		die("address");
	}
	return sin;
}

static void __attribute__((noreturn)) serve(const char *port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(port)) };
	int one = 1, fd = socket(AF_INET, SOCK_STREAM, 0);
	char byte;

	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&sin, sizeof(sin)) || listen(fd, 1024))
		die("listen");
	for (;;) {
		int conn = accept(fd, NULL, NULL);

		if (conn < 0)
			continue;
		if (read(conn, &byte, 1) == 1 && write(conn, &byte, 1) != 1) {
			/* The client went: next. */
		}
		close(conn);
	}
}

static int client(const char *ip, const char *port, long count)
{
	struct sockaddr_in sin = address(ip, port);
	double start = now_s();
	char byte = 'x';

	for (long i = 0; i < count; i++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);

		if (fd < 0 || connect(fd, (struct sockaddr *)&sin, sizeof(sin)))
			die("connect");
		if (write(fd, &byte, 1) != 1 || read(fd, &byte, 1) != 1)
			die("exchange");
		close(fd);
	}
	printf("%.0f\n", (double)count / (now_s() - start));
	return 0;
}

static int flood(const char *ip, const char *port, double seconds)
{
	struct sockaddr_in sin = address(ip, port);
	int fd = socket(AF_INET, SOCK_DGRAM, 0);
	double start = now_s(), end = start + seconds;
	long sends = 0;

	if (fd < 0)
		die("socket");
	while (now_s() < end) {
		for (int i = 0; i < 256; i++, sends++)
			if (sendto(fd, "x", 1, 0, (struct sockaddr *)&sin, sizeof(sin)) < 0 &&
			    errno != EPERM)
				die("sendto");
	}
	printf("%.0f\n", (double)sends / (now_s() - start));
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "server"))
		serve(argv[2]);
	if (argc == 5 && !strcmp(argv[1], "client"))
		return client(argv[2], argv[3], atol(argv[4]));
	if (argc == 5 && !strcmp(argv[1], "flood"))
		return flood(argv[2], argv[3], atof(argv[4]));
	fprintf(stderr, "usage: flows_conn server PORT | client ADDR PORT COUNT |"
			" flood ADDR PORT SECONDS\n");
	return 2;
}
