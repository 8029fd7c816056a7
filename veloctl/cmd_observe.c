// SPDX-License-Identifier: Apache-2.0
/*
 * veloctl observe: reads velod's GET /flows (JSON lines) as a stream, keeps
 * the flows the filters match and prints them like `hubble observe`, or each
 * as velod's JSON object with -j. --follow keeps the stream open.
 */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cJSON.h>

#include "cmd_observe.h"
#include "flow_filter.h"
#include "http_get.h"

#define READ_TIMEOUT_MS 5000
#define LINE_MAX_BYTES 4096

/* veloctl runs one command: its options live here until it runs. */
static struct flow_filter filter;
static bool filter_ready;

int cmd_observe_option(const char *name, const char *arg)
{
	if (!filter_ready) {
		flow_filter_init(&filter);
		filter_ready = true;
	}
	return flow_filter_option(&filter, name, arg);
}

/* "2026-12-03T17:20:01.123456Z" as hubble shows times: "Dec  3 17:20:01.123". */
static void short_time(const char *iso, char *buf, size_t len)
{
	struct tm tm = {};
	const char *frac = strchr(iso, '.');

	if (!strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm)) {
		snprintf(buf, len, "%s", iso);
		return;
	}
	strftime(buf, len, "%b %e %H:%M:%S", &tm);
	if (frac)
		snprintf(buf + strlen(buf), len - strlen(buf), "%.4s", frac);
}

/* "ns/pod:port (ip)", or "ip:port" for an address no local pod has. */
static void end_text(const cJSON *end, char *buf, size_t len)
{
	const cJSON *pod = cJSON_GetObjectItemCaseSensitive(end, "pod");
	const cJSON *ip = cJSON_GetObjectItemCaseSensitive(end, "ip");
	const cJSON *port = cJSON_GetObjectItemCaseSensitive(end, "port");
	const char *ip_text = cJSON_IsString(ip) && ip->valuestring[0] ? ip->valuestring : "?";
	bool v6 = strchr(ip_text, ':') != NULL;
	char port_text[16] = "";

	if (cJSON_IsNumber(port) && port->valueint)
		snprintf(port_text, sizeof(port_text), ":%d", port->valueint);
	if (cJSON_IsString(pod) && pod->valuestring[0])
		snprintf(buf, len, "%s%s (%s)", pod->valuestring, port_text, ip_text);
	else
		snprintf(buf, len, "%s%s%s%s", v6 && port_text[0] ? "[" : "", ip_text,
			 v6 && port_text[0] ? "]" : "", port_text);
}

static const char *field(const cJSON *flow, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(flow, key);

	return cJSON_IsString(item) ? item->valuestring : "";
}

static double number(const cJSON *flow, const char *key)
{
	const cJSON *item = cJSON_GetObjectItemCaseSensitive(flow, key);

	return cJSON_IsNumber(item) ? item->valuedouble : 0;
}

/* " policies ns/a,ns/b" from a policy drop's "policies" array; "" without one. */
static void policies_text(const cJSON *flow, char *buf, size_t len)
{
	const cJSON *policies = cJSON_GetObjectItemCaseSensitive(flow, "policies"), *name;
	size_t used = 0;
	int n;

	buf[0] = '\0';
	if (!cJSON_IsArray(policies))
		return;
	cJSON_ArrayForEach (name, policies) {
		if (!cJSON_IsString(name) || used >= len)
			continue;
		n = snprintf(buf + used, len - used, "%s%s", used ? "," : " policies ",
			     name->valuestring);
		used = n < 0 ? len : used + (size_t)n;
	}
}

/* " service ns/name:port/proto (ip:port)" from a flow's "service" object; "" without one. */
static void service_text(const cJSON *flow, char *buf, size_t len)
{
	const cJSON *service = cJSON_GetObjectItemCaseSensitive(flow, "service");
	const char *ip;

	buf[0] = '\0';
	if (!cJSON_IsObject(service))
		return;
	ip = field(service, "ip");
	snprintf(buf, len, " service %s (%s%s%s:%.0f)",
		 field(service, "name")[0] ? field(service, "name") : "(unnamed)",
		 strchr(ip, ':') ? "[" : "", ip, strchr(ip, ':') ? "]" : "",
		 number(service, "port"));
}

static void print_text(const cJSON *flow)
{
	char when[64], src[384], dst[384], extra[160] = "", verdict[16], what[80], policies[700];
	char service[512];
	const char *kind = field(flow, "kind"), *reason = field(flow, "reason");
	size_t i;

	short_time(field(flow, "time"), when, sizeof(when));
	end_text(cJSON_GetObjectItemCaseSensitive(flow, "src"), src, sizeof(src));
	end_text(cJSON_GetObjectItemCaseSensitive(flow, "dst"), dst, sizeof(dst));
	snprintf(verdict, sizeof(verdict), "%s", field(flow, "verdict"));
	for (i = 0; verdict[i]; i++)
		verdict[i] = (char)toupper((unsigned char)verdict[i]);
	if (!strcmp(kind, "end"))
		snprintf(extra, sizeof(extra), " bytes %.0f/%.0f segs %.0f/%.0f",
			 number(flow, "bytes_out"), number(flow, "bytes_in"),
			 number(flow, "segs_out"), number(flow, "segs_in"));
	else if (number(flow, "identity"))
		snprintf(extra, sizeof(extra), " identity %.0f", number(flow, "identity"));
	if (number(flow, "weight") > 1) /* velod was behind: this drop stands for weight of them */
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), " sampled 1:%.0f",
			 number(flow, "weight"));
	/* DROPPED (reason), FORWARDED (reason) for a trace, FORWARDED start/end for connections. */
	if (reason[0])
		snprintf(what, sizeof(what), "%s (%s)", verdict, reason);
	else
		snprintf(what, sizeof(what), "%s %s", verdict, kind);
	policies_text(flow, policies, sizeof(policies));
	service_text(flow, service, sizeof(service));
	printf("%s: %s -> %s %s %s via %s%s%s%s\n", when, src, dst, field(flow, "proto"), what,
	       field(flow, "path"), service, extra, policies);
}

/* One JSON line: printed when the filters keep it. */
static void handle_line(const struct ctl *ctl, const char *line)
{
	cJSON *flow = cJSON_Parse(line);

	if (!cJSON_IsObject(flow)) {
		fprintf(stderr, "veloctl: velod sent a line that is not a flow: %.80s\n", line);
	} else if (flow_filter_match(&filter, flow)) {
		if (ctl->json)
			printf("%s\n", line);
		else
			print_text(flow);
		fflush(stdout);
	}
	cJSON_Delete(flow);
}

/* Reads the response: status line and headers, then lines until velod closes. */
static int read_stream(const struct ctl *ctl, int fd)
{
	static char buf[LINE_MAX_BYTES * 16];
	size_t used = 0;
	bool body = false;
	int status = 0;

	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char *newline;
		ssize_t n;
		int ready = poll(&pfd, 1, filter.follow ? -1 : READ_TIMEOUT_MS);

		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			return ready ? -errno : -ETIMEDOUT;
		n = recv(fd, buf + used, sizeof(buf) - 1 - used, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : (body ? 0 : -EPROTO);
		used += (size_t)n;
		buf[used] = '\0';
		if (!body) {
			char *end = strstr(buf, "\r\n\r\n");

			if (!end)
				continue;
			if (sscanf(buf, "HTTP/%*d.%*d %d", &status) != 1 || status != 200) {
				ctl_error(ctl, "velod answered /flows with %d: %.200s", status,
					  end + 4);
				return -EPROTO;
			}
			body = true;
			used -= (size_t)(end + 4 - buf);
			memmove(buf, end + 4, used + 1);
		}
		while ((newline = strchr(buf, '\n'))) {
			*newline = '\0';
			if (newline > buf)
				handle_line(ctl, buf);
			used -= (size_t)(newline + 1 - buf);
			memmove(buf, newline + 1, used + 1);
		}
		if (used == sizeof(buf) - 1)
			used = 0; /* a line longer than any flow: dropped */
	}
}

int cmd_ctl_observe(struct ctl *ctl)
{
	const char *agent = ctl_private_agent(ctl);
	char request[512];
	double since = 0;
	int fd, ret;

	if (!filter_ready)
		flow_filter_init(&filter);
	if (!agent[0]) {
		ctl_error(ctl, "observe needs velod: --socket \"\" and --agent \"\" leave nothing "
			       "to ask");
		return CTL_EXIT_USAGE;
	}
	if (filter.since_s > 0)
		since = (double)time(NULL) - filter.since_s;
	fd = ctl_http_connect(agent);
	if (fd < 0) {
		ctl_error(ctl, "velod at %s: %s", agent, strerror(-fd));
		return CTL_EXIT_FAILED;
	}
	snprintf(request, sizeof(request),
		 "GET /flows?since=%.3f&follow=%d HTTP/1.0\r\nHost: %s\r\n\r\n", since,
		 filter.follow ? 1 : 0, ctl_http_host(agent));
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0) {
		ret = -errno;
	} else {
		ret = read_stream(ctl, fd);
	}
	close(fd);
	if (ret && ret != -EPROTO)
		ctl_error(ctl, "reading flows from velod at %s: %s", agent, strerror(-ret));
	return ret ? CTL_EXIT_FAILED : CTL_EXIT_OK;
}
