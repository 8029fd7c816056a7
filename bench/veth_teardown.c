// SPDX-License-Identifier: Apache-2.0
/*
 * Times the ways a DEL could get a pod's host veth out of the node netns, one
 * rtnetlink request per step, as velo would send them (bench/veth_teardown.sh).
 *
 *   veth_teardown MODE IFNAME...   (in the node netns; prints "MODE IFNAME USEC" per link)
 *
 * delete: RTM_DELLINK. retire: down and into velo's retired group, one request.
 * rename: down, then a free name. netns-fresh: unshare a netns, keep only its fd,
 * move the link there (down in the same request), close the fd. netns-shared: one
 * graveyard netns for all, each link renamed on the move, the fd closed at the end.
 */
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RETIRED_GROUP 0x76656c6fu

struct link_req {
	struct nlmsghdr hdr;
	struct ifinfomsg ifi;
	char attrs[128];
};

static int nl_fd = -1;
static unsigned nl_seq;

static long long now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000ll + ts.tv_nsec / 1000;
}

static void req_init(struct link_req *req, int type, int ifindex)
{
	memset(req, 0, sizeof(*req));
	req->hdr.nlmsg_len = NLMSG_LENGTH(sizeof(req->ifi));
	req->hdr.nlmsg_type = type;
	req->hdr.nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
	req->ifi.ifi_family = AF_UNSPEC;
	req->ifi.ifi_index = ifindex;
}

static void req_attr(struct link_req *req, int type, const void *data, int len)
{
	struct rtattr *rta = (struct rtattr *)((char *)req + NLMSG_ALIGN(req->hdr.nlmsg_len));

	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	memcpy(RTA_DATA(rta), data, len);
	req->hdr.nlmsg_len = NLMSG_ALIGN(req->hdr.nlmsg_len) + RTA_ALIGN(rta->rta_len);
}

/* Sends and waits for the ACK: 0 or -errno. */
static int req_send(struct link_req *req)
{
	char buf[4096];
	struct nlmsghdr *hdr = (struct nlmsghdr *)buf;
	ssize_t n;

	req->hdr.nlmsg_seq = ++nl_seq;
	if (send(nl_fd, req, req->hdr.nlmsg_len, 0) < 0)
		return -errno;
	n = recv(nl_fd, buf, sizeof(buf), 0);
	if (n < 0)
		return -errno;
	if (hdr->nlmsg_type == NLMSG_ERROR)
		return ((struct nlmsgerr *)NLMSG_DATA(hdr))->error;
	return 0;
}

/* A fresh netns with no process in it: its fd, or -errno. The caller stays where it was. */
static int netns_fresh(void)
{
	int self = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC), fd = -1, ret = 0;

	if (self < 0)
		return -errno;
	if (unshare(CLONE_NEWNET)) {
		ret = -errno;
	} else {
		fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			ret = -errno;
		if (setns(self, CLONE_NEWNET))
			ret = -errno;
	}
	close(self);
	if (ret && fd >= 0)
		close(fd);
	return ret ? ret : fd;
}

static int down(int ifindex, const unsigned *group)
{
	struct link_req req;

	req_init(&req, RTM_NEWLINK, ifindex);
	req.ifi.ifi_change = IFF_UP;
	if (group)
		req_attr(&req, IFLA_GROUP, group, sizeof(*group));
	return req_send(&req);
}

static int move(int ifindex, int netns_fd, const char *new_name)
{
	struct link_req req;

	req_init(&req, RTM_NEWLINK, ifindex);
	req.ifi.ifi_change = IFF_UP;
	req_attr(&req, IFLA_NET_NS_FD, &netns_fd, sizeof(netns_fd));
	if (new_name)
		req_attr(&req, IFLA_IFNAME, new_name, strlen(new_name) + 1);
	return req_send(&req);
}

static int teardown(const char *mode, int ifindex, int graveyard_fd)
{
	const unsigned group = RETIRED_GROUP;
	struct link_req req;
	char name[IFNAMSIZ];
	int ret, fd;

	snprintf(name, sizeof(name), "vbgone%d", ifindex);
	if (!strcmp(mode, "delete")) {
		req_init(&req, RTM_DELLINK, ifindex);
		return req_send(&req);
	}
	if (!strcmp(mode, "retire"))
		return down(ifindex, &group);
	if (!strcmp(mode, "rename")) {
		ret = down(ifindex, NULL);
		if (ret)
			return ret;
		req_init(&req, RTM_NEWLINK, ifindex);
		req_attr(&req, IFLA_IFNAME, name, strlen(name) + 1);
		return req_send(&req);
	}
	if (!strcmp(mode, "netns-fresh")) {
		fd = netns_fresh();
		if (fd < 0)
			return fd;
		ret = move(ifindex, fd, NULL);
		close(fd); /* the last reference: the kernel tears the netns down */
		return ret;
	}
	if (!strcmp(mode, "netns-shared"))
		return move(ifindex, graveyard_fd, name);
	return -EINVAL;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int graveyard_fd = -1, status = 0;

	if (argc < 3) {
		fprintf(stderr,
			"usage: veth_teardown delete|retire|rename|netns-fresh|netns-shared "
			"IFNAME...\n");
		return 2;
	}
	nl_fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	if (nl_fd < 0) {
		perror("netlink socket");
		return 1;
	}
	if (!strcmp(mode, "netns-shared")) {
		graveyard_fd = netns_fresh();
		if (graveyard_fd < 0) {
			fprintf(stderr, "graveyard netns: %s\n", strerror(-graveyard_fd));
			return 1;
		}
	}
	for (int i = 2; i < argc; i++) {
		int ifindex = (int)if_nametoindex(argv[i]), ret;
		long long start = now_us();

		ret = ifindex ? teardown(mode, ifindex, graveyard_fd) : -ENODEV;
		if (ret) {
			fprintf(stderr, "%s %s: %s\n", mode, argv[i], strerror(-ret));
			status = 1;
			continue;
		}
		printf("%s %s %lld\n", mode, argv[i], now_us() - start);
	}
	if (graveyard_fd >= 0)
		close(graveyard_fd);
	return status;
}
