// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: what librdmacm exports and softxrc does
 * not do.  Each fails with EOPNOTSUPP, so that programs load and learn
 * it at run time.  (Multicast and ECE, which only the host's other
 * devices do, are in sys.c.)
 *
 * rsockets: no rsocket can exist here, so every descriptor a program
 * passes is an ordinary one.  rpoll() and rselect() therefore are poll()
 * and select() (rdma-core's treat ordinary descriptors the same way;
 * rping and ucmatose call rpoll()), and the calls on rsockets fail.
 */
#include <errno.h>
#include <poll.h>
#include <sys/select.h>

#include <rdma/rsocket.h>

#include "sxcm.h"

#define NOTSUP(ret)	do { errno = EOPNOTSUPP; return ret; } while (0)

SXCM_EXPORT int rpoll(struct pollfd *fds, nfds_t nfds, int timeout)
{
	return poll(fds, nfds, timeout);
}

SXCM_EXPORT int rselect(int nfds, fd_set *readfds, fd_set *writefds,
			fd_set *exceptfds, struct timeval *timeout)
{
	return select(nfds, readfds, writefds, exceptfds, timeout);
}

SXCM_EXPORT int rsocket(int domain, int type, int protocol)
{
	(void)domain; (void)type; (void)protocol;
	NOTSUP(-1);
}

SXCM_EXPORT int rbind(int socket, const struct sockaddr *addr, socklen_t addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	NOTSUP(-1);
}

SXCM_EXPORT int rlisten(int socket, int backlog)
{
	(void)socket; (void)backlog;
	NOTSUP(-1);
}

SXCM_EXPORT int raccept(int socket, struct sockaddr *addr, socklen_t *addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	NOTSUP(-1);
}

SXCM_EXPORT int rconnect(int socket, const struct sockaddr *addr,
			 socklen_t addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	NOTSUP(-1);
}

SXCM_EXPORT int rshutdown(int socket, int how)
{
	(void)socket; (void)how;
	NOTSUP(-1);
}

SXCM_EXPORT int rclose(int socket)
{
	(void)socket;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rrecv(int socket, void *buf, size_t len, int flags)
{
	(void)socket; (void)buf; (void)len; (void)flags;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rrecvfrom(int socket, void *buf, size_t len, int flags,
			      struct sockaddr *src_addr, socklen_t *addrlen)
{
	(void)socket; (void)buf; (void)len; (void)flags;
	(void)src_addr; (void)addrlen;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rrecvmsg(int socket, struct msghdr *msg, int flags)
{
	(void)socket; (void)msg; (void)flags;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rsend(int socket, const void *buf, size_t len, int flags)
{
	(void)socket; (void)buf; (void)len; (void)flags;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rsendto(int socket, const void *buf, size_t len, int flags,
			    const struct sockaddr *dest_addr, socklen_t addrlen)
{
	(void)socket; (void)buf; (void)len; (void)flags;
	(void)dest_addr; (void)addrlen;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rsendmsg(int socket, const struct msghdr *msg, int flags)
{
	(void)socket; (void)msg; (void)flags;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rread(int socket, void *buf, size_t count)
{
	(void)socket; (void)buf; (void)count;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rreadv(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket; (void)iov; (void)iovcnt;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rwrite(int socket, const void *buf, size_t count)
{
	(void)socket; (void)buf; (void)count;
	NOTSUP(-1);
}

SXCM_EXPORT ssize_t rwritev(int socket, const struct iovec *iov, int iovcnt)
{
	(void)socket; (void)iov; (void)iovcnt;
	NOTSUP(-1);
}

SXCM_EXPORT int rgetpeername(int socket, struct sockaddr *addr,
			     socklen_t *addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	NOTSUP(-1);
}

SXCM_EXPORT int rgetsockname(int socket, struct sockaddr *addr,
			     socklen_t *addrlen)
{
	(void)socket; (void)addr; (void)addrlen;
	NOTSUP(-1);
}

SXCM_EXPORT int rsetsockopt(int socket, int level, int optname,
			    const void *optval, socklen_t optlen)
{
	(void)socket; (void)level; (void)optname; (void)optval; (void)optlen;
	NOTSUP(-1);
}

SXCM_EXPORT int rgetsockopt(int socket, int level, int optname,
			    void *optval, socklen_t *optlen)
{
	(void)socket; (void)level; (void)optname; (void)optval; (void)optlen;
	NOTSUP(-1);
}

SXCM_EXPORT int rfcntl(int socket, int cmd, ...)
{
	(void)socket; (void)cmd;
	NOTSUP(-1);
}

SXCM_EXPORT off_t riomap(int socket, void *buf, size_t len, int prot,
			 int flags, off_t offset)
{
	(void)socket; (void)buf; (void)len; (void)prot; (void)flags;
	(void)offset;
	NOTSUP(-1);
}

SXCM_EXPORT int riounmap(int socket, void *buf, size_t len)
{
	(void)socket; (void)buf; (void)len;
	NOTSUP(-1);
}

SXCM_EXPORT size_t riowrite(int socket, const void *buf, size_t count,
			    off_t offset, int flags)
{
	(void)socket; (void)buf; (void)count; (void)offset; (void)flags;
	NOTSUP((size_t)-1);
}
