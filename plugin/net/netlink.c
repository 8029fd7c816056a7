// SPDX-License-Identifier: Apache-2.0
/* The NETLINK_ROUTE socket and the one place that maps libnl errors to -errno. */
#include <errno.h>
#include <stdlib.h>

#include <sys/socket.h>
#include <netlink/errno.h>
#include <netlink/msg.h>
#include <netlink/socket.h>

#include "net/netlink.h"

/* Read buffer per recvmsg(): twice the most the kernel puts in one read. */
#define VELO_NL_RECV_BYTES 65536
/* Room for each message velo sends; a larger one fails to build (-ENOMEM), never truncated. */
#define VELO_NL_MSG_BYTES 1024

/*
 * libnl folds the kernel's errno into fewer NLE_* codes (ENETUNREACH and
 * ENETDOWN both become NLE_FAILURE), so the error callback keeps the
 * original. velo is single-threaded: one slot is enough.
 */
static int kernel_errno;

static int save_kernel_errno(struct sockaddr_nl *nla, struct nlmsgerr *err, void *arg)
{
	(void)nla;
	(void)arg;
	kernel_errno = abs(err->error);
	return NL_STOP; /* libnl then returns -nl_syserr2nlerr(err->error) */
}

int velo_nl_errno(int nlerr)
{
	int saved = kernel_errno;

	kernel_errno = 0;
	if (nlerr >= 0)
		return 0;
	nlerr = -nlerr;
	/* Only trust the saved errno when it is the one this error came from. */
	if (saved && nl_syserr2nlerr(saved) == nlerr)
		return -saved;
	switch (nlerr) {
	case NLE_INTR:
		return -EINTR;
	case NLE_BAD_SOCK:
		return -EBADF;
	case NLE_AGAIN:
	case NLE_DUMP_INTR: /* the kernel's tables changed during a dump */
		return -EAGAIN;
	case NLE_NOMEM:
		return -ENOMEM;
	case NLE_EXIST:
		return -EEXIST;
	case NLE_INVAL:
	case NLE_MISSING_ATTR:
	case NLE_AF_MISMATCH:
	case NLE_OBJ_MISMATCH:
	case NLE_PARSE_ERR:
		return -EINVAL;
	case NLE_RANGE:
		return -ERANGE;
	case NLE_MSGSIZE:
	case NLE_ATTRSIZE:
		return -EMSGSIZE;
	case NLE_OPNOTSUPP:
	case NLE_MSGTYPE_NOSUPPORT:
	case NLE_SRCRT_NOSUPPORT:
		return -EOPNOTSUPP;
	case NLE_AF_NOSUPPORT:
		return -EAFNOSUPPORT;
	case NLE_OBJ_NOTFOUND:
	case NLE_NOATTR:
		return -ENOENT;
	case NLE_NOADDR:
		return -EADDRNOTAVAIL;
	case NLE_SEQ_MISMATCH:
	case NLE_MSG_OVERFLOW:
	case NLE_MSG_TRUNC:
	case NLE_MSG_TOOSHORT:
		return -EBADMSG;
	case NLE_NOCACHE:
		return -ENOENT;
	case NLE_BUSY:
		return -EBUSY;
	case NLE_PROTO_MISMATCH:
		return -EPROTONOSUPPORT;
	case NLE_NOACCESS:
		return -EACCES;
	case NLE_PERM:
		return -EPERM;
	case NLE_NODEV:
		return -ENODEV;
	case NLE_IMMUTABLE:
		return -EROFS;
	default:
		return -EIO;
	}
}

struct nl_sock *velo_nl_open(void)
{
	struct nl_sock *sk;
	int ret;

	/*
	 * libnl callocs a page for every message it builds; velo's are a few
	 * hundred bytes (the veth with its peer, the largest, is ~140).
	 */
	nlmsg_set_default_size(VELO_NL_MSG_BYTES);
	sk = nl_socket_alloc();
	if (!sk) {
		errno = ENOMEM;
		return NULL;
	}
	ret = nl_connect(sk, NETLINK_ROUTE);
	if (ret < 0) {
		ret = velo_nl_errno(ret);
		nl_socket_free(sk);
		errno = -ret;
		return NULL;
	}
	nl_socket_modify_err_cb(sk, NL_CB_CUSTOM, save_kernel_errno, NULL);
	/*
	 * With no buffer size set, libnl peeks at each message for its size and
	 * then reads it again: two recvmsg() per reply. The kernel sends at most
	 * 32 KiB per read (a dump's skb grows to the reader's buffer, capped there).
	 */
	nl_socket_set_msg_buf_size(sk, VELO_NL_RECV_BYTES);
	return sk;
}

void velo_nl_closep(struct nl_sock **sk)
{
	if (*sk) {
		nl_socket_free(*sk);
		*sk = NULL;
	}
}

unsigned velo_nl_addr_len(int family)
{
	return family == AF_INET ? 4 : family == AF_INET6 ? 16 : 0;
}
