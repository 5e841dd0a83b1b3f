// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sxrc_wire_xfer: RC between two hosts, every byte exactly once and in
 * order.  Not a kselftest: a standalone program over the public verbs
 * API alone, so that one binary runs on rdma_rxe (Debian's libibverbs)
 * and on softxrc (LD_LIBRARY_PATH=build/lib, the drop-in library).
 * tools/guest/check-wire runs it as the case stream_netem, with netem
 * spoiling the link between two tools/vm-pair guests.  A program of the
 * test ground, not a selftest: tools/Makefile builds it in build/wire/.
 *
 *   sxrc_wire_xfer -d DEV -g GIDINDEX -p TCPPORT [-M MIB] [-t EXP]
 *                                      the server: the RECEIVER
 *   sxrc_wire_xfer -d DEV -g GIDINDEX -p TCPPORT [-M MIB] [-t EXP] SERVER
 *                                      the client: the SENDER
 *
 *   -d DEV       device (default: the first one)
 *   -g GIDINDEX  local GID index (needed on RoCE; default: none, LIDs)
 *   -p TCPPORT   the TCP port of the address exchange (default 18515)
 *   -M MIB       MiB to transfer (default 64; both sides must agree)
 *   -t EXP       the QPs' ACK timeout, 4.096 us * 2^EXP (default 14)
 *
 * As ibv_rc_pingpong does, the two exchange LID, QP number, PSN and GID
 * over TCP and connect one RC QP each: path MTU 1024, retry_cnt 7,
 * rnr_retry 7.  The sender then sends MIB MiB as SEND with immediate,
 * messages of 1 byte to 64 KiB whose lengths follow a fixed seed (a
 * quarter of them 64 KiB), the immediate the message's number, its
 * bytes a function of their offset in the stream; it never has more
 * than XF_WINDOW messages unacknowledged, the receiver's number of
 * receive WQEs (which it reposts as it consumes them; a message that
 * finds none yet is RNR NAKed and resent).  The receiver checks every
 * completion: status, order, opcode, immediate, length, every byte;
 * after the last message nothing more may arrive for a second.  Then
 * each tells the other "done <messages> <bytes>" over TCP and checks
 * the other's line.
 *
 * Output: one line, "sxrc_wire_xfer: sender|receiver: B bytes, N
 * messages, S s, R MB/s".  Exit status 0 only when everything checked
 * out; else 1, with what differed.  No progress for XF_STALL_SECS (a
 * server without a client, a silent peer, a transfer that stalls) is a
 * failure too.
 */
#include <arpa/inet.h>
#include <endian.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netdb.h>
#include <poll.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "sxrc_stream.h"

#define XF_MSG_MAX	65536		/* the longest message */
#define XF_WINDOW	64		/* receive WQEs; unacknowledged sends */
#define XF_STALL_SECS	60		/* no progress for this long: failure */
#define XF_QUIET_MS	1000		/* after the last message */
#define XF_LEN_SEED	0x5eed0f1e5ULL	/* the messages' lengths */
#define XF_DATA_SEED	0xb17e5b17e5ULL	/* their bytes */
#define XF_MAGIC	"sxrc_wire_xfer/1"

static const char *role = "sxrc_wire_xfer";

static void __attribute__((format(printf, 1, 2), noreturn))
xf_die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "sxrc_wire_xfer: %s: ", role);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double xf_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ------------------------------------------------------------------
 * The stream: message lengths and bytes, the same on both sides
 */

/* The stream's bytes: sxrc_stream.h, as the wire selftests make them. */

/*
 * The messages' lengths: 1 byte to 64 KiB, a quarter of them 64 KiB,
 * adding up to @total.  Returns how many, the lengths in *@lens.
 */
static uint64_t xf_plan(uint64_t total, uint32_t **lens)
{
	uint64_t n = 0, cap = 1024, left = total, s = XF_LEN_SEED;
	uint32_t *l = malloc(cap * sizeof(*l));

	while (l && left) {
		uint64_t r = sxrc_mix64(s += 0x9e3779b97f4a7c15ULL);
		uint64_t len = r & 3 ? 1 + (r >> 2) % XF_MSG_MAX : XF_MSG_MAX;

		if (len > left)
			len = left;
		if (n == cap) {
			uint32_t *m = realloc(l, 2 * cap * sizeof(*l));

			if (!m)
				break;
			l = m;
			cap *= 2;
		}
		l[n++] = len;
		left -= len;
	}
	if (!l || left)
		xf_die("out of memory");
	*lens = l;
	return n;
}

/* ------------------------------------------------------------------
 * The TCP connection: lines, read with a deadline
 */

struct xf_tcp {
	int fd;
	size_t len;
	char buf[512];
};

static int xf_tcp_listen(int port)
{
	struct addrinfo hints = {
		.ai_flags = AI_PASSIVE, .ai_family = AF_UNSPEC,
		.ai_socktype = SOCK_STREAM,
	}, *res, *a;
	struct pollfd pfd = { .events = POLLIN };
	char service[16];
	int fd = -1, one = 1, conn, err;

	snprintf(service, sizeof(service), "%d", port);
	err = getaddrinfo(NULL, service, &hints, &res);
	if (err)
		xf_die("getaddrinfo: %s", gai_strerror(err));
	for (a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd < 0)
			continue;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (!bind(fd, a->ai_addr, a->ai_addrlen) && !listen(fd, 1))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		xf_die("cannot listen on TCP port %d", port);
	pfd.fd = fd;
	if (poll(&pfd, 1, XF_STALL_SECS * 1000) != 1)
		xf_die("no client in %d s", XF_STALL_SECS);
	conn = accept(fd, NULL, NULL);
	if (conn < 0)
		xf_die("accept: %s", strerror(errno));
	close(fd);
	return conn;
}

static int xf_tcp_connect(const char *host, int port)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
	}, *res, *a;
	char service[16];
	int fd = -1, err;

	snprintf(service, sizeof(service), "%d", port);
	err = getaddrinfo(host, service, &hints, &res);
	if (err)
		xf_die("%s: %s", host, gai_strerror(err));
	for (a = res; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype, a->ai_protocol);
		if (fd < 0)
			continue;
		if (!connect(fd, a->ai_addr, a->ai_addrlen))
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0)
		xf_die("cannot connect to %s port %d", host, port);
	return fd;
}

/* Take what the peer sent into the buffer; dies when it closed. */
static void xf_tcp_take(struct xf_tcp *t)
{
	ssize_t n;

	if (t->len == sizeof(t->buf))
		xf_die("the peer sends too much over TCP");
	n = recv(t->fd, t->buf + t->len, sizeof(t->buf) - t->len,
		 MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n < 0)
		xf_die("TCP: %s", strerror(errno));
	if (!n)
		xf_die("the peer closed the TCP connection (see its output)");
	t->len += n;
}

/* The next line from the peer (without its newline) within @secs. */
static void xf_tcp_line(struct xf_tcp *t, char *line, size_t size,
			const char *what, int secs)
{
	double end = xf_now() + secs;
	char *nl;
	size_t n;

	while (!(nl = memchr(t->buf, '\n', t->len))) {
		struct pollfd pfd = { .fd = t->fd, .events = POLLIN };
		int left = (end - xf_now()) * 1000;

		if (left <= 0)
			xf_die("no %s from the peer in %d s", what, secs);
		if (poll(&pfd, 1, left) < 0 && errno != EINTR)
			xf_die("poll: %s", strerror(errno));
		if (pfd.revents)
			xf_tcp_take(t);
	}
	n = nl - t->buf;
	if (n >= size)
		xf_die("the peer's %s is too long", what);
	memcpy(line, t->buf, n);
	line[n] = '\0';
	t->len -= n + 1;
	memmove(t->buf, nl + 1, t->len);
}

static void __attribute__((format(printf, 2, 3)))
xf_tcp_say(struct xf_tcp *t, const char *fmt, ...)
{
	char line[256];
	size_t done = 0;
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(line))
		xf_die("line too long");
	while (done < (size_t)len) {
		ssize_t n = send(t->fd, line + done, len - done, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			xf_die("TCP send: %s", strerror(errno));
		done += n;
	}
}

/* ------------------------------------------------------------------
 * Verbs
 */

struct xf_dest {
	unsigned int lid, qpn, psn;
	union ibv_gid gid;
};

struct xf_ctx {
	struct ibv_context *ctx;
	struct ibv_comp_channel *chan;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *ring;		/* XF_WINDOW slots of XF_MSG_MAX bytes */
	bool armed;		/* the CQ asked for an event */
	int gidx;
	struct xf_dest me;
};

static struct ibv_context *xf_open(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, n;

	list = ibv_get_device_list(&n);
	if (!list || !n)
		xf_die("no RDMA device");
	for (i = 0; i < n; i++) {
		if (name && strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx)
			xf_die("cannot open %s", ibv_get_device_name(list[i]));
		break;
	}
	ibv_free_device_list(list);
	if (!ctx)
		xf_die("no device %s", name);
	return ctx;
}

static void xf_setup(struct xf_ctx *c, const char *dev, int gidx)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = {
			.max_send_wr = XF_WINDOW, .max_recv_wr = XF_WINDOW,
			.max_send_sge = 1, .max_recv_sge = 1,
		},
	};
	struct ibv_qp_attr qa = {
		.qp_state = IBV_QPS_INIT, .pkey_index = 0, .port_num = 1,
	};
	struct ibv_port_attr pa;
	size_t len = (size_t)XF_WINDOW * XF_MSG_MAX;

	c->ctx = xf_open(dev);
	if (ibv_query_port(c->ctx, 1, &pa))
		xf_die("cannot query port 1");
	if (pa.state != IBV_PORT_ACTIVE)
		xf_die("port 1 is not active");
	if (pa.active_mtu < IBV_MTU_1024)
		xf_die("port 1's MTU is below 1024");
	if (pa.link_layer == IBV_LINK_LAYER_ETHERNET && gidx < 0)
		xf_die("an Ethernet port needs a GID index (-g)");
	c->gidx = gidx;
	c->me.lid = pa.lid;
	if (gidx >= 0 && ibv_query_gid(c->ctx, 1, gidx, &c->me.gid))
		xf_die("no GID %d", gidx);
	c->chan = ibv_create_comp_channel(c->ctx);
	c->pd = ibv_alloc_pd(c->ctx);
	if (!c->chan || !c->pd)
		xf_die("cannot allocate a completion channel and PD");
	c->cq = ibv_create_cq(c->ctx, 2 * XF_WINDOW, NULL, c->chan, 0);
	if (!c->cq)
		xf_die("cannot create a CQ");
	ia.send_cq = c->cq;
	ia.recv_cq = c->cq;
	c->qp = ibv_create_qp(c->pd, &ia);
	if (!c->qp)
		xf_die("cannot create an RC QP");
	c->ring = aligned_alloc(4096, len);
	if (!c->ring)
		xf_die("out of memory");
	memset(c->ring, 0, len);
	c->mr = ibv_reg_mr(c->pd, c->ring, len, IBV_ACCESS_LOCAL_WRITE);
	if (!c->mr)
		xf_die("cannot register %zu bytes", len);
	/* In INIT: the receiver can post its receives. */
	if (ibv_modify_qp(c->qp, &qa, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		xf_die("cannot move the QP to INIT");
	c->me.qpn = c->qp->qp_num;
	srand48(getpid() ^ (long)(xf_now() * 1e6));
	c->me.psn = lrand48() & 0xffffff;
}

/* RTR towards @peer, RTS; ACK timeout 2^@timeout * 4.096 us. */
static void xf_connect(struct xf_ctx *c, const struct xf_dest *peer,
		       unsigned int timeout)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR };

	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer->qpn;
	a.rq_psn = peer->psn;
	a.max_dest_rd_atomic = 1;
	/* 0.64 ms before a send that found no receive WQE is resent. */
	a.min_rnr_timer = 12;
	a.ah_attr.dlid = peer->lid;
	a.ah_attr.port_num = 1;
	if (c->gidx >= 0) {
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = peer->gid;
		a.ah_attr.grh.sgid_index = c->gidx;
		a.ah_attr.grh.hop_limit = 64;
	}
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		xf_die("cannot move the QP to RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = c->me.psn;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(c->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		xf_die("cannot move the QP to RTS");
}

static void xf_gid_hex(const union ibv_gid *gid, char *out)
{
	int i;

	for (i = 0; i < 16; i++)
		sprintf(out + 2 * i, "%02x", gid->raw[i]);
}

static int xf_hex_gid(const char *s, union ibv_gid *gid)
{
	unsigned int b;
	int i;

	if (strlen(s) != 32)
		return -1;
	for (i = 0; i < 16; i++) {
		if (sscanf(s + 2 * i, "%2x", &b) != 1)
			return -1;
		gid->raw[i] = b;
	}
	return 0;
}

/* Swap addresses over TCP: @mib must be the peer's too. */
static void xf_exchange(struct xf_tcp *t, const struct xf_dest *me,
			struct xf_dest *peer, unsigned int mib)
{
	char line[256], magic[32], gid[40];
	unsigned int peer_mib;

	xf_gid_hex(&me->gid, gid);
	xf_tcp_say(t, "%s %u %u %u %u %s\n", XF_MAGIC, mib, me->lid, me->qpn,
		   me->psn, gid);
	xf_tcp_line(t, line, sizeof(line), "address", XF_STALL_SECS);
	if (sscanf(line, "%31s %u %u %u %u %39s", magic, &peer_mib,
		   &peer->lid, &peer->qpn, &peer->psn, gid) != 6 ||
	    strcmp(magic, XF_MAGIC) || xf_hex_gid(gid, &peer->gid))
		xf_die("the peer's address is garbled: \"%s\"", line);
	if (peer_mib != mib)
		xf_die("the peer transfers %u MiB, this side %u (-M)",
		       peer_mib, mib);
}

/* Both QPs are in RTS (the receiver's receives posted) before any send. */
static void xf_sync(struct xf_tcp *t, const char *word)
{
	char line[64];

	xf_tcp_say(t, "%s\n", word);
	xf_tcp_line(t, line, sizeof(line), word, XF_STALL_SECS);
	if (strcmp(line, word))
		xf_die("expected \"%s\" from the peer, got \"%s\"", word, line);
}

static const char *xf_qp_state(struct ibv_qp *qp)
{
	static const char *const names[] = {
		[IBV_QPS_RESET] = "RESET", [IBV_QPS_INIT] = "INIT",
		[IBV_QPS_RTR] = "RTR", [IBV_QPS_RTS] = "RTS",
		[IBV_QPS_SQD] = "SQD", [IBV_QPS_SQE] = "SQE",
		[IBV_QPS_ERR] = "ERR",
	};
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return "unknown";
	if ((unsigned int)a.qp_state >= sizeof(names) / sizeof(names[0]) ||
	    !names[a.qp_state])
		return "unknown";
	return names[a.qp_state];
}

/*
 * Wait up to @ms for the CQ (arming it first, then looking again, so that
 * no completion is missed) or the TCP connection; the latter's bytes are
 * taken into its buffer (its EOF is fatal).  0 when the CQ may have
 * something, -1 when @ms passed.
 */
static int xf_wait(struct xf_ctx *c, struct xf_tcp *t, int ms)
{
	struct pollfd pfd[2] = {
		{ .fd = c->chan->fd, .events = POLLIN },
		{ .fd = t->fd, .events = POLLIN },
	};
	struct ibv_cq *cq;
	void *cq_ctx;
	int n;

	if (!c->armed) {
		if (ibv_req_notify_cq(c->cq, 0))
			xf_die("cannot arm the CQ");
		c->armed = true;
		return 0;
	}
	n = poll(pfd, 2, ms);
	if (n < 0 && errno != EINTR)
		xf_die("poll: %s", strerror(errno));
	if (n <= 0)
		return -1;
	if (pfd[1].revents)
		xf_tcp_take(t);
	if (pfd[0].revents) {
		if (ibv_get_cq_event(c->chan, &cq, &cq_ctx))
			xf_die("ibv_get_cq_event failed");
		ibv_ack_cq_events(cq, 1);
		c->armed = false;
	}
	return 0;
}

/*
 * Completion @k of @what (a "message" received, a "send") must be a
 * success of @opcode, the k-th WQE posted; else the program dies.
 */
static void xf_wc_expect(struct xf_ctx *c, const struct ibv_wc *wc,
			 const char *what, uint64_t k, enum ibv_wc_opcode opcode)
{
	if (wc->status != IBV_WC_SUCCESS)
		xf_die("%s %" PRIu64 ": %s (vendor error 0x%x), QP %s", what,
		       k, ibv_wc_status_str(wc->status), wc->vendor_err,
		       xf_qp_state(c->qp));
	if (wc->wr_id != k)
		xf_die("%s %" PRIu64 " completed WQE %" PRIu64, what, k,
		       (uint64_t)wc->wr_id);
	if (wc->opcode != opcode)
		xf_die("%s %" PRIu64 ": opcode %d, not %d", what, k,
		       wc->opcode, opcode);
}

static double xf_secs(double t0, double t1)
{
	return t1 > t0 ? t1 - t0 : 1e-9;
}

/* ------------------------------------------------------------------
 * The two roles
 */

static void xf_post_recv(struct xf_ctx *c, uint64_t k)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)c->ring + (k % XF_WINDOW) * XF_MSG_MAX,
		.length = XF_MSG_MAX, .lkey = c->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = k, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	if (ibv_post_recv(c->qp, &wr, &bad))
		xf_die("cannot post receive %" PRIu64, k);
}

/* Receive and check all @nmsg messages; returns the seconds they took. */
static double xf_receive(struct xf_ctx *c, struct xf_tcp *t,
			 const uint32_t *lens, uint64_t nmsg, uint64_t *bytes)
{
	uint64_t recvd = 0, posted = XF_WINDOW, off = 0;
	double t0 = xf_now(), last = t0, t1, quiet;
	struct ibv_wc wc[16];
	int i, n;

	while (recvd < nmsg) {
		n = ibv_poll_cq(c->cq, 16, wc);
		if (n < 0)
			xf_die("ibv_poll_cq failed");
		for (i = 0; i < n; i++, recvd++) {
			uint8_t *p = c->ring + (recvd % XF_WINDOW) * XF_MSG_MAX;
			long bad;

			xf_wc_expect(c, &wc[i], "message", recvd, IBV_WC_RECV);
			if (!(wc[i].wc_flags & IBV_WC_WITH_IMM))
				xf_die("message %" PRIu64 ": no immediate", recvd);
			if (ntohl(wc[i].imm_data) != (uint32_t)recvd)
				xf_die("message %" PRIu64 ": immediate %u",
				       recvd, ntohl(wc[i].imm_data));
			if (wc[i].byte_len != lens[recvd])
				xf_die("message %" PRIu64 ": %u bytes, not %u",
				       recvd, wc[i].byte_len, lens[recvd]);
			bad = sxrc_stream_check(p, off, lens[recvd], XF_DATA_SEED);
			if (bad >= 0)
				xf_die("message %" PRIu64 " (stream offset %" PRIu64 "): byte %ld of %u is 0x%02x, not 0x%02x",
				       recvd, off, bad, lens[recvd], p[bad],
				       sxrc_stream_byte(off + bad, XF_DATA_SEED));
			off += lens[recvd];
			xf_post_recv(c, posted++);
		}
		if (n) {
			last = xf_now();
			continue;
		}
		if (xf_wait(c, t, 1000) && xf_now() - last > XF_STALL_SECS)
			xf_die("no progress for %d s: %" PRIu64 " of %" PRIu64 " messages received, QP %s",
			       XF_STALL_SECS, recvd, nmsg, xf_qp_state(c->qp));
	}
	t1 = xf_now();
	*bytes = off;

	/* Nothing more: no duplicate, no message of anyone else. */
	quiet = t1 + XF_QUIET_MS / 1000.0;
	while (xf_now() < quiet) {
		n = ibv_poll_cq(c->cq, 1, wc);
		if (n < 0)
			xf_die("ibv_poll_cq failed");
		if (n)
			xf_die("a completion after the last message: receive WQE %" PRIu64 ", %s, %u bytes, immediate %u",
			       (uint64_t)wc[0].wr_id,
			       ibv_wc_status_str(wc[0].status),
			       wc[0].byte_len, ntohl(wc[0].imm_data));
		xf_wait(c, t, (quiet - xf_now()) * 1000 + 1);
	}
	return xf_secs(t0, t1);
}

/* Send all @nmsg messages; returns the seconds they took. */
static double xf_send(struct xf_ctx *c, struct xf_tcp *t,
		      const uint32_t *lens, uint64_t nmsg, uint64_t *bytes)
{
	uint64_t sent = 0, done = 0, off = 0;
	double t0 = xf_now(), last = t0;
	struct ibv_wc wc[16];
	int i, n;

	while (done < nmsg) {
		while (sent < nmsg && sent - done < XF_WINDOW) {
			uint8_t *p = c->ring + (sent % XF_WINDOW) * XF_MSG_MAX;
			struct ibv_sge sge = {
				.addr = (uintptr_t)p, .length = lens[sent],
				.lkey = c->mr->lkey,
			};
			struct ibv_send_wr wr = {
				.wr_id = sent, .sg_list = &sge, .num_sge = 1,
				.opcode = IBV_WR_SEND_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htonl((uint32_t)sent),
			}, *bad;

			sxrc_stream_fill(p, off, lens[sent], XF_DATA_SEED);
			if (ibv_post_send(c->qp, &wr, &bad))
				xf_die("cannot post send %" PRIu64, sent);
			off += lens[sent++];
		}
		n = ibv_poll_cq(c->cq, 16, wc);
		if (n < 0)
			xf_die("ibv_poll_cq failed");
		for (i = 0; i < n; i++, done++) {
			xf_wc_expect(c, &wc[i], "send", done, IBV_WC_SEND);
		}
		if (n) {
			last = xf_now();
			continue;
		}
		if (xf_wait(c, t, 1000) && xf_now() - last > XF_STALL_SECS)
			xf_die("no progress for %d s: %" PRIu64 " of %" PRIu64 " messages sent, %" PRIu64 " acknowledged, QP %s",
			       XF_STALL_SECS, sent, nmsg, done,
			       xf_qp_state(c->qp));
	}
	*bytes = off;
	return xf_secs(t0, xf_now());
}

static void __attribute__((noreturn)) xf_usage(void)
{
	fprintf(stderr,
		"usage: sxrc_wire_xfer -d DEV -g GIDINDEX -p TCPPORT [-M MIB] [-t ACK_TIMEOUT_EXP] [SERVERADDR]\n"
		"  without SERVERADDR: the server, which receives; with it: the client, which sends\n");
	exit(2);
}

static long xf_num(const char *s, long min, long max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 0);
	if (errno || end == s || *end || v < min || v > max)
		xf_usage();
	return v;
}

int main(int argc, char **argv)
{
	const char *dev = NULL, *server = NULL;
	int gidx = -1, port = 18515, opt;
	unsigned int mib = 64, timeout = 14;
	struct xf_tcp t = { .fd = -1 };
	struct xf_ctx c = { 0 };
	struct xf_dest peer;
	uint64_t nmsg, bytes, k;
	uint64_t peer_msgs, peer_bytes;
	uint32_t *lens;
	char line[128];
	double secs;

	while ((opt = getopt(argc, argv, "d:g:p:M:t:h")) != -1) {
		switch (opt) {
		case 'd':
			dev = optarg;
			break;
		case 'g':
			gidx = xf_num(optarg, 0, 65535);
			break;
		case 'p':
			port = xf_num(optarg, 1, 65535);
			break;
		case 'M':
			mib = xf_num(optarg, 1, 1 << 20);
			break;
		case 't':
			timeout = xf_num(optarg, 1, 31);
			break;
		default:
			xf_usage();
		}
	}
	if (optind + 1 == argc)
		server = argv[optind];
	else if (optind != argc)
		xf_usage();
	role = server ? "sender" : "receiver";
	setvbuf(stdout, NULL, _IOLBF, 0);

	nmsg = xf_plan((uint64_t)mib << 20, &lens);
	xf_setup(&c, dev, gidx);
	if (!server)
		for (k = 0; k < XF_WINDOW; k++)
			xf_post_recv(&c, k);

	t.fd = server ? xf_tcp_connect(server, port) : xf_tcp_listen(port);
	xf_exchange(&t, &c.me, &peer, mib);
	xf_connect(&c, &peer, timeout);
	xf_sync(&t, "ready");

	if (server)
		secs = xf_send(&c, &t, lens, nmsg, &bytes);
	else
		secs = xf_receive(&c, &t, lens, nmsg, &bytes);
	if (bytes != (uint64_t)mib << 20)
		xf_die("%" PRIu64 " bytes, not %" PRIu64, bytes,
		       (uint64_t)mib << 20);

	/* The receiver answers once its quiet second is over. */
	xf_tcp_say(&t, "done %" PRIu64 " %" PRIu64 "\n", nmsg, bytes);
	xf_tcp_line(&t, line, sizeof(line), "done line", XF_STALL_SECS);
	if (sscanf(line, "done %" SCNu64 " %" SCNu64, &peer_msgs,
		   &peer_bytes) != 2)
		xf_die("the peer's last line is \"%s\", not \"done N BYTES\"",
		       line);
	if (peer_msgs != nmsg || peer_bytes != bytes)
		xf_die("the peer says %" PRIu64 " messages, %" PRIu64 " bytes; this side %" PRIu64 ", %" PRIu64,
		       peer_msgs, peer_bytes, nmsg, bytes);

	printf("sxrc_wire_xfer: %s: %" PRIu64 " bytes, %" PRIu64 " messages, %.2f s, %.2f MB/s\n",
	       role, bytes, nmsg, secs, bytes / secs / 1e6);
	close(t.fd);
	ibv_destroy_qp(c.qp);
	ibv_dereg_mr(c.mr);
	ibv_destroy_cq(c.cq);
	ibv_destroy_comp_channel(c.chan);
	ibv_dealloc_pd(c.pd);
	ibv_close_device(c.ctx);
	free(c.ring);
	free(lens);
	return 0;
}
