// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc selftests: a peer host on the wire (sxrc_wire_inj.h): RoCEv2
 * frames built whole, their ICRC, the peer's namespace with its veth
 * end, the raw sockets that inject and the UDP socket that captures;
 * and the link on this end.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sxrc_util.h"
#include "sxrc_wire_inj.h"

#define SND	(A_VALID | A_REQ | A_PAY | A_SEND)
#define WRT	(A_VALID | A_REQ | A_PAY | A_WRITE)
#define ONLY	(A_FIRST | A_LAST)
static const uint16_t wf_attr[32] = {
	[SEND_FIRST]	   = SND | A_FIRST,
	[SEND_MIDDLE]	   = SND,
	[SEND_LAST]	   = SND | A_LAST,
	[SEND_LAST_IMM]	   = SND | A_LAST | A_IMM,
	[SEND_ONLY]	   = SND | ONLY,
	[SEND_ONLY_IMM]	   = SND | ONLY | A_IMM,
	[WRITE_FIRST]	   = WRT | A_FIRST | A_RETH,
	[WRITE_MIDDLE]	   = WRT,
	[WRITE_LAST]	   = WRT | A_LAST,
	[WRITE_LAST_IMM]   = WRT | A_LAST | A_IMM,
	[WRITE_ONLY]	   = WRT | ONLY | A_RETH,
	[WRITE_ONLY_IMM]   = WRT | ONLY | A_RETH | A_IMM,
	[READ_REQ]	   = A_VALID | A_REQ | A_RETH | ONLY,
	[READ_RESP_FIRST]  = A_VALID | A_PAY | A_AETH | A_FIRST,
	[READ_RESP_MIDDLE] = A_VALID | A_PAY,
	[READ_RESP_LAST]   = A_VALID | A_PAY | A_AETH | A_LAST,
	[READ_RESP_ONLY]   = A_VALID | A_PAY | A_AETH | ONLY,
	[ACK]		   = A_VALID | A_AETH | ONLY,
	[ATOMIC_ACK]	   = A_VALID | A_AETH | A_AACK | ONLY,
	[CMP_SWAP]	   = A_VALID | A_REQ | A_ATOM | ONLY,
	[FETCH_ADD]	   = A_VALID | A_REQ | A_ATOM | ONLY,
	[SEND_LAST_INV]	   = SND | A_LAST | A_IETH,
	[SEND_ONLY_INV]	   = SND | ONLY | A_IETH,
};
#undef SND
#undef WRT
#undef ONLY

uint16_t op_attr(uint8_t opcode)
{
	return wf_attr[opcode & 0x1f];
}

/* ------------------------------------------------------------------
 * Frames
 */

/* crc32_le() of the kernel: reflected 0xedb88320, no inversion. */
static uint32_t crc_table[256];

static uint32_t wf_crc32(uint32_t crc, const uint8_t *p, size_t n)
{
	unsigned int i, k;

	if (!crc_table[1]) {
		for (i = 0; i < 256; i++) {
			uint32_t c = i;

			for (k = 0; k < 8; k++)
				c = (c >> 1) ^ (0xedb88320U & -(c & 1));
			crc_table[i] = c;
		}
	}
	while (n--)
		crc = (crc >> 8) ^ crc_table[(crc ^ *p++) & 0xff];
	return crc;
}

static bool wf_is6(const struct wf_frame *f)
{
	return (f->b[0] >> 4) == 6;
}

/*
 * The RoCEv2 ICRC of the packet in @f as it stands (its UDP length says
 * where the ICRC goes): the IP and UDP headers with the fields routers
 * change and the checksums masked to ones (IPv4: TOS, TTL; IPv6:
 * traffic class, flow label, hop limit), the BTH with byte 4 masked,
 * the rest.
 */
static uint32_t wf_icrc(const struct wf_frame *f)
{
	const uint8_t *udp = f->b + f->udpo;
	uint32_t ulen = udp[4] << 8 | udp[5], nlen = wf_is6(f) ? 40 : 20;
	uint8_t ph[40 + 8 + 12], *u = ph + nlen;
	uint32_t crc;

	memcpy(ph, f->b, nlen);
	memcpy(u, udp, 8 + 12);
	if (nlen == 40) {
		ph[0] |= 0x0f;
		ph[1] = ph[2] = ph[3] = 0xff;
		ph[7] = 0xff;
	} else {
		ph[1] = 0xff;
		ph[8] = 0xff;
		ph[10] = ph[11] = 0xff;
	}
	u[6] = u[7] = 0xff;
	u[12] = 0xff;
	crc = wf_crc32(0xdebb20e3, ph, nlen + 8 + 12);
	crc = wf_crc32(crc, udp + 8 + 12, ulen - 8 - 12 - 4);
	return ~crc;
}

void wf_fix_icrc(struct wf_frame *f)
{
	const uint8_t *udp = f->b + f->udpo;
	uint8_t *e = f->b + f->udpo + (udp[4] << 8 | udp[5]) - 4;
	uint32_t c = wf_icrc(f);

	e[0] = c;
	e[1] = c >> 8;
	e[2] = c >> 16;
	e[3] = c >> 24;
}

bool wf_icrc_ok(const struct wf_frame *f)
{
	const uint8_t *e = f->b + f->len - 4;
	uint32_t c;

	if (f->len < f->udpo + 8 + 16)
		return false;
	c = wf_icrc(f);
	return e[0] == (uint8_t)c && e[1] == (uint8_t)(c >> 8) &&
	       e[2] == (uint8_t)(c >> 16) && e[3] == (uint8_t)(c >> 24);
}

void wf_set_len(struct wf_frame *f, uint32_t len)
{
	f->len = len;
	if (wf_is6(f))
		put16(f->b + 4, len - 40);
	else
		put16(f->b + 2, len);
	put16(f->b + f->udpo + 4, len - f->udpo);
}

/* The transport headers of @p and its payload at @h: their length. */
static uint32_t wf_build_bth(const struct wf_pkt *p, struct wf_frame *f,
			     uint8_t *h)
{
	uint8_t tp = p->opcode & 0xe0;
	uint16_t a = op_attr(p->opcode);
	uint32_t off = 12, pad = -p->len & 3;

	memset(h, 0, 128);
	h[0] = p->opcode;
	h[1] = (p->se ? 0x80 : 0) | (p->pad ? p->pad : pad) << 4 |
	       (p->tver & 0xf);
	put16(h + 2, p->pkey);
	put32(h + 4, p->dqpn & 0xffffff);
	h[4] = p->bth_rsvd;
	put32(h + 8, (p->ackreq ? 0x80000000U : 0) | (p->psn & 0xffffff));
	if (tp == TP_UD) {
		put32(h + off, p->qkey);
		put32(h + off + 4, p->sqpn & 0xffffff);
		off += 8;
	}
	if (tp == TP_XRC && (a & A_REQ)) {
		put32(h + off, p->srqn & 0xffffff);
		off += 4;
	}
	if (a & A_RETH) {
		put64(h + off, p->va);
		put32(h + off + 8, p->rkey);
		put32(h + off + 12, p->dmalen);
		off += 16;
	}
	if (a & A_ATOM) {
		put64(h + off, p->va);
		put32(h + off + 8, p->rkey);
		put64(h + off + 12, p->swap);
		put64(h + off + 20, p->cmp);
		off += 28;
	}
	if (a & (A_IMM | A_IETH)) {
		put32(h + off, p->imm);
		off += 4;
	}
	if (a & A_AETH) {
		put32(h + off, (uint32_t)p->syndrome << 24 |
		      (p->msn & 0xffffff));
		off += 4;
	}
	if (a & A_AACK) {
		put64(h + off, p->orig);
		off += 8;
	}
	f->hlen = off;
	if (p->len)
		memcpy(h + off, p->data, p->len);
	memset(h + off + p->len, 0, pad);
	return off + p->len + pad;
}

static uint16_t wf_ip_id = 0x8001;

void wf_build(const struct wf_pkt *p, struct wf_frame *f)
{
	uint32_t n;

	memset(f->b, 0, BTHO);
	f->udpo = UDPO;
	n = wf_build_bth(p, f, f->b + BTHO);

	f->b[0] = 0x45;
	f->b[1] = p->tos;
	put16(f->b + 4, wf_ip_id);
	wf_ip_id = (wf_ip_id + 0x1235) | 0x8001;
	put16(f->b + 6, 0x4000);	/* DF */
	f->b[8] = p->ttl ? p->ttl : 64;
	f->b[9] = IPPROTO_UDP;
	put32(f->b + 12, p->saddr ? p->saddr : wf_cfg.peer);
	put32(f->b + 16, wf_cfg.addr);
	put16(f->b + UDPO, 0xc000 | (p->dqpn & 0x3fff));
	put16(f->b + UDPO + 2, WF_PORT);
	wf_set_len(f, BTHO + n + 4);
	wf_fix_icrc(f);
}

/* The UDP checksum IPv6 asks for, over its pseudo-header. */
static void wf_udp6_csum(struct wf_frame *f)
{
	uint8_t *u = f->b + 40;
	uint32_t ulen = f->len - 40, sum = ulen + IPPROTO_UDP, i;

	put16(u + 6, 0);
	for (i = 8; i < 40; i += 2)
		sum += f->b[i] << 8 | f->b[i + 1];
	for (i = 0; i < ulen; i += 2)
		sum += u[i] << 8 | (i + 1 < ulen ? u[i + 1] : 0);
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	put16(u + 6, sum ? sum : 0xffff);
}

void wf_build6(const struct wf_pkt *p, const uint8_t *src,
	       const uint8_t *dst, struct wf_frame *f)
{
	uint32_t n;

	memset(f->b, 0, 48);
	f->udpo = 40;
	n = wf_build_bth(p, f, f->b + 48);

	f->b[0] = 0x60 | p->tos >> 4;
	f->b[1] = p->tos << 4;
	f->b[6] = IPPROTO_UDP;
	f->b[7] = p->ttl ? p->ttl : 64;
	memcpy(f->b + 8, src, 16);
	memcpy(f->b + 24, dst, 16);
	put16(f->b + 40, 0xc000 | (p->dqpn & 0x3fff));
	put16(f->b + 42, WF_PORT);
	wf_set_len(f, 48 + n + 4);
	wf_fix_icrc(f);
	wf_udp6_csum(f);
}

/* ------------------------------------------------------------------
 * The peer host
 */

void wf_net_down(void)
{
	sxrc_sh(WF_TOOL " link del %s 2>/dev/null; ip link del %s 2>/dev/null;"
		" ip netns del %s 2>/dev/null; true", wf_cfg.dev, wf_cfg.ifname,
		wf_cfg.ns);
}

static pid_t wf_main_pid;

static void __attribute__((constructor)) wf_main(void)
{
	wf_main_pid = getpid();
}

/*
 * The program's last act (its tests run in children that _exit(); a
 * child of theirs that exit()s leaves the network alone).
 */
static void __attribute__((destructor)) wf_net_cleanup(void)
{
	char path[128];

	snprintf(path, sizeof(path), "/run/netns/%s", wf_cfg.ns);
	if (getpid() == wf_main_pid && !access(path, F_OK))
		wf_net_down();
}

void wf_net_init(struct wf_net *n)
{
	memset(n, 0, sizeof(*n));
	n->orig_ns = n->peer_ns = n->raw = n->raw6 = n->cap = -1;
}

static int wf_net_make(void)
{
	char a[16], p[16];
	uint32_t x = wf_cfg.addr, y = wf_cfg.peer;

	snprintf(a, sizeof(a), "%u.%u.%u.%u", x >> 24, (x >> 16) & 0xff,
		 (x >> 8) & 0xff, x & 0xff);
	snprintf(p, sizeof(p), "%u.%u.%u.%u", y >> 24, (y >> 16) & 0xff,
		 (y >> 8) & 0xff, y & 0xff);
	wf_net_down();
	return sxrc_sh("ip netns add %s && ip link add %s type veth peer name"
		       " %s netns %s && ip addr add %s/24 dev %s && ip link"
		       " set %s up && ip -n %s link set lo up && ip -n %s"
		       " addr add %s/24 dev %s && ip -n %s link set %s up && "
		       WF_TOOL " link add %s netdev %s",
		       wf_cfg.ns, wf_cfg.ifname, wf_cfg.peer_if, wf_cfg.ns, a,
		       wf_cfg.ifname, wf_cfg.ifname, wf_cfg.ns, wf_cfg.ns, p,
		       wf_cfg.peer_if, wf_cfg.ns, wf_cfg.peer_if, wf_cfg.dev,
		       wf_cfg.ifname);
}

int wf_net_up(struct wf_net *n)
{
	struct sockaddr_in any = {
		.sin_family = AF_INET, .sin_port = htons(WF_PORT),
		.sin_addr.s_addr = htonl(wf_cfg.peer),
	};
	char ns[128], sys[128];
	int one = 1;

	snprintf(ns, sizeof(ns), "/run/netns/%s", wf_cfg.ns);
	snprintf(sys, sizeof(sys), "/sys/class/misc/%s", wf_cfg.dev);
	if (access(ns, F_OK)) {
		if (wf_net_make())
			return -1;
	} else if (access(sys, F_OK) &&
		   sxrc_sh(WF_TOOL " link add %s netdev %s", wf_cfg.dev,
			   wf_cfg.ifname) && wf_net_make()) {
		return -1;
	}
	n->caps = calloc(WF_NCAPS, sizeof(*n->caps));
	n->orig_ns = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	n->peer_ns = open(ns, O_RDONLY | O_CLOEXEC);
	if (!n->caps || n->orig_ns < 0 || n->peer_ns < 0 ||
	    setns(n->peer_ns, CLONE_NEWNET))
		return -1;
	n->raw = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
	n->cap = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (n->cap >= 0 &&
	    (setsockopt(n->cap, SOL_SOCKET, SO_REUSEADDR, &one,
			sizeof(one)) ||
	     bind(n->cap, (struct sockaddr *)&any, sizeof(any)))) {
		fprintf(stderr, "# bind the peer's port %d: %s\n", WF_PORT,
			strerror(errno));
		close(n->cap);
		n->cap = -1;
	}
	if (setns(n->orig_ns, CLONE_NEWNET) || n->raw < 0 || n->cap < 0)
		return -1;
	n->rx0 = wf_rx();
	return n->rx0 < 0 ? -1 : 0;
}

void wf_net_close(struct wf_net *n)
{
	int *fds[] = { &n->raw, &n->raw6, &n->cap, &n->peer_ns, &n->orig_ns };
	unsigned int i;

	for (i = 0; i < sizeof(fds) / sizeof(fds[0]); i++) {
		if (*fds[i] >= 0)
			close(*fds[i]);
		*fds[i] = -1;
	}
	free(n->caps);
	n->caps = NULL;
}

int wf_pin(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;

	if (cpu < 0)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

long wf_counter(const char *name)
{
	char path[160];

	snprintf(path, sizeof(path), "/sys/class/misc/%s/counters/%s",
		 wf_cfg.dev, name);
	return sxrc_read_long(path, 0);
}

bool wf_counter_reaches(const char *name, long n, int ms)
{
	double end = sxrc_now_ms() + ms;

	while (wf_counter(name) < n)
		if (sxrc_now_ms() > end || usleep(1000))
			return false;
	return true;
}

long wf_rx(void)
{
	return wf_counter("wire_rx_packets");
}

long wf_dropped(void)
{
	return wf_counter("wire_rx_dropped");
}

/* Keep at most 128 packets ahead of the link's receive worker. */
static void wf_pace(struct wf_net *n)
{
	double end;

	n->sent++;
	if (n->sent % 32)
		return;
	end = sxrc_now_ms() + 5000;
	while (wf_rx() - n->rx0 + 128 < (long)n->sent &&
	       sxrc_now_ms() < end)
		usleep(100);
}

int wf_inject(struct wf_net *n, const struct wf_frame *f, bool reaches)
{
	struct sockaddr_in to = {
		.sin_family = AF_INET,
		.sin_addr.s_addr = htonl(wf_cfg.addr),
	};

	if (sendto(n->raw, f->b, f->len, 0, (struct sockaddr *)&to,
		   sizeof(to)) != (ssize_t)f->len)
		return -errno;
	if (reaches)
		wf_pace(n);
	return 0;
}

int wf_inject6(struct wf_net *n, const struct wf_frame *f, bool reaches)
{
	struct sockaddr_in6 to = { .sin6_family = AF_INET6 };

	if (n->raw6 < 0) {
		if (setns(n->peer_ns, CLONE_NEWNET))
			return -errno;
		n->raw6 = socket(AF_INET6, SOCK_RAW | SOCK_CLOEXEC,
				 IPPROTO_RAW);
		if (setns(n->orig_ns, CLONE_NEWNET) || n->raw6 < 0)
			return -errno;
	}
	memcpy(&to.sin6_addr, f->b + 24, 16);
	if (sendto(n->raw6, f->b, f->len, 0, (struct sockaddr *)&to,
		   sizeof(to)) != (ssize_t)f->len)
		return -errno;
	if (reaches)
		wf_pace(n);
	return 0;
}

int wf_send(struct wf_net *n, const struct wf_pkt *p)
{
	struct wf_frame f;

	wf_build(p, &f);
	return wf_inject(n, &f, true);
}

void wf_capture(struct wf_net *n, int ms)
{
	struct pollfd pfd = { .fd = n->cap, .events = POLLIN };
	uint8_t b[2048];

	while (poll(&pfd, 1, ms) == 1) {
		ssize_t len = recv(n->cap, b, sizeof(b), 0);
		struct wf_cap *c;
		uint32_t off = 12, pad;
		uint16_t a;

		ms = 0;
		if (len < 16)
			continue;
		c = &n->caps[n->ncap++ % WF_NCAPS];
		memset(c, 0, offsetof(struct wf_cap, data));
		c->opcode = b[0];
		c->dqpn = get32(b + 4) & 0xffffff;
		c->psn = get32(b + 8) & 0xffffff;
		a = op_attr(b[0]);
		if (a & A_AETH) {
			c->syndrome = b[off];
			c->msn = get32(b + off) & 0xffffff;
			off += 4;
		}
		if (a & A_AACK) {
			c->orig = get64(b + off);
			off += 8;
		}
		pad = (b[1] >> 4) & 3;
		if (len >= off + pad + 4) {
			c->paylen = len - off - pad - 4;
			memcpy(c->data, b + off, c->paylen < WF_CAP_DATA ?
			       c->paylen : WF_CAP_DATA);
		}
	}
}

unsigned int wf_caps_to(struct wf_net *n, unsigned int from, uint32_t peer)
{
	unsigned int i, k = 0;

	for (i = from; i < n->ncap; i++)
		k += n->caps[i % WF_NCAPS].dqpn == peer;
	return k;
}

struct wf_cap *wf_cap_find(struct wf_net *n, unsigned int from,
			   uint32_t peer, uint8_t opcode)
{
	unsigned int i;

	for (i = from; i < n->ncap; i++) {
		struct wf_cap *c = &n->caps[i % WF_NCAPS];

		if (c->dqpn == peer && (opcode == 0xff || c->opcode == opcode))
			return c;
	}
	return NULL;
}

struct wf_cap *wf_wait_cap(struct wf_net *n, unsigned int from,
			   uint32_t peer, uint8_t opcode)
{
	double end = sxrc_now_ms() + 10000;
	struct wf_cap *c;

	while (!(c = wf_cap_find(n, from, peer, opcode)) &&
	       sxrc_now_ms() < end)
		wf_capture(n, 50);
	return c;
}

bool wf_only(struct wf_net *n, unsigned int from, uint32_t peer,
	     uint8_t opcode)
{
	unsigned int i;

	for (i = from; i < n->ncap; i++) {
		struct wf_cap *c = &n->caps[i % WF_NCAPS];

		if (c->dqpn == peer && c->opcode != opcode)
			return false;
	}
	return true;
}

int wf_barrier(struct wf_net *n, uint32_t qpn, uint32_t peer, uint32_t psn,
	       int ms)
{
	struct wf_pkt p = {
		.opcode = TP_RC | SEND_ONLY, .pkey = 0xffff,
		.dqpn = qpn, .psn = psn, .ackreq = true,
	};
	double end = sxrc_now_ms() + ms;
	unsigned int i, from = n->ncap;

	if (wf_send(n, &p))
		return -1;
	while (sxrc_now_ms() < end) {
		wf_capture(n, 50);
		for (i = from; i < n->ncap; i++) {
			struct wf_cap *c = &n->caps[i % WF_NCAPS];

			if (c->opcode == (TP_RC | ACK) && c->dqpn == peer &&
			    c->psn == (psn & 0xffffff))
				return 0;
		}
		from = n->ncap;
	}
	return -1;
}

void wf_at(struct wf_net *n, struct wf_at *m)
{
	m->rx = wf_rx();
	m->dropped = wf_dropped();
	m->sent = n->sent;
	m->cap = n->ncap;
}

bool wf_since(struct wf_net *n, const struct wf_at *m, long dropped)
{
	long rx = wf_rx() - m->rx, d = wf_dropped() - m->dropped;

	if (rx == (long)(n->sent - m->sent) && d == dropped)
		return true;
	fprintf(stderr, "# %ld packets received of %llu sent, %ld dropped of %ld expected\n",
		rx, (unsigned long long)(n->sent - m->sent), d, dropped);
	return false;
}

/* ------------------------------------------------------------------
 * The link
 */

struct ibv_context *wf_open_dev(void)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;
	int i;

	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), wf_cfg.dev))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

double wf_link_del(int ms)
{
	double t0 = sxrc_now_ms();
	int status;
	pid_t pid;

	pid = fork();
	if (!pid) {
		execl(WF_TOOL, WF_TOOL, "link", "del", wf_cfg.dev,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0)
		return -2;
	while (sxrc_now_ms() - t0 < ms) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) && !WEXITSTATUS(status) ?
			       sxrc_now_ms() - t0 : -2;
		usleep(5000);
	}
	return -1;
}

const char *const wf_obj_names[WF_NOBJ] = {
	"contexts", "pd", "mr", "cq", "qp", "srq", "mr_pages", "mr_runs",
};

void wf_obj_counts(long *v)
{
	char path[160];
	unsigned int i;

	for (i = 0; i < WF_NOBJ; i++) {
		snprintf(path, sizeof(path), "/sys/class/misc/%s/objects/%s",
			 wf_cfg.dev, wf_obj_names[i]);
		v[i] = sxrc_read_long(path, 0);
	}
}

bool wf_obj_back(const long *base, int ms)
{
	double end = sxrc_now_ms() + ms;
	long v[WF_NOBJ];
	unsigned int i;

	do {
		wf_obj_counts(v);
		if (!memcmp(v, base, sizeof(v)))
			return true;
		usleep(10000);
	} while (sxrc_now_ms() < end);
	for (i = 0; i < WF_NOBJ; i++)
		if (v[i] != base[i])
			fprintf(stderr, "# objects/%s: %ld, was %ld\n",
				wf_obj_names[i], v[i], base[i]);
	return false;
}

long wf_obj_wait(const char *name, long want, int ms)
{
	double end = sxrc_now_ms() + ms;
	char path[160];
	long v;

	snprintf(path, sizeof(path), "/sys/class/misc/%s/objects/%s",
		 wf_cfg.dev, name);
	while ((v = sxrc_read_long(path, 0)) != want && sxrc_now_ms() < end)
		usleep(10000);
	return v;
}

/* ------------------------------------------------------------------
 * Verbs
 */

struct ibv_qp *wf_new_qp(struct ibv_pd *pd, struct ibv_cq *cq,
			 enum ibv_qp_type type)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .qp_type = type,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};

	return ibv_create_qp(pd, &ia);
}

int wf_connect(struct ibv_qp *qp, const union ibv_gid *dgid, int sgid,
	       uint32_t dqpn, uint32_t psn, uint8_t rd_atomic,
	       enum ibv_qp_state upto)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   (qp->qp_type == IBV_QPT_UC ? 0 :
				    IBV_ACCESS_REMOTE_READ |
				    IBV_ACCESS_REMOTE_ATOMIC),
	};

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return -1;
	if (upto == IBV_QPS_INIT)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = psn;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = sgid;
	a.ah_attr.grh.hop_limit = 64;
	a.max_dest_rd_atomic = rd_atomic;
	a.min_rnr_timer = 1;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return -2;
	if (upto == IBV_QPS_RTR)
		return 0;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = (psn + 0x100) & 0xffffff;
	a.retry_cnt = 7;
	a.max_rd_atomic = 4;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			  IBV_QP_MAX_QP_RD_ATOMIC))
		return -3;
	return 0;
}

int wf_post_recv(struct ibv_qp *qp, void *buf, uint32_t len, uint32_t lkey,
		 uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = lkey,
	};
	struct ibv_recv_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
	}, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

int wf_post_wr(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	wr->send_flags |= IBV_SEND_SIGNALED;
	return ibv_post_send(qp, wr, &bad);
}

int wf_post_sge(struct ibv_qp *qp, enum ibv_wr_opcode op, void *buf,
		uint32_t len, uint32_t lkey, uint64_t wr_id)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)buf, .length = len, .lkey = lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1, .opcode = op,
	};

	return wf_post_wr(qp, &wr);
}

int wf_bind_mw(struct ibv_qp *qp, struct ibv_cq *cq, struct ibv_mw *mw,
	       struct ibv_mr *mr, void *addr, size_t len, unsigned int access)
{
	struct ibv_send_wr wr = { .wr_id = 0xb1d, .opcode = IBV_WR_BIND_MW };
	struct ibv_wc wc;

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info.mr = mr;
	wr.bind_mw.bind_info.addr = (uintptr_t)addr;
	wr.bind_mw.bind_info.length = len;
	wr.bind_mw.bind_info.mw_access_flags = access;
	if (wf_post_wr(qp, &wr) || sxrc_poll_n(cq, &wc, 1, 5000) != 1)
		return -1;
	if (wc.status != IBV_WC_SUCCESS || wc.opcode != IBV_WC_BIND_MW) {
		fprintf(stderr, "# bind: status %d (%s) opcode %d\n",
			wc.status, ibv_wc_status_str(wc.status), wc.opcode);
		return -1;
	}
	mw->rkey = wr.bind_mw.rkey;
	return 0;
}

struct ibv_mr *wf_zero_mr(struct ibv_pd *pd, size_t len, void **mem)
{
	struct ibv_mr *mr = NULL;
	size_t n;

	*mem = mmap(NULL, len, PROT_READ,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (*mem == MAP_FAILED)
		return NULL;
	for (n = len; n >= (16UL << 20) && !mr; n /= 2)
		mr = ibv_reg_mr(pd, *mem, n, IBV_ACCESS_REMOTE_READ);
	return mr;
}

int wf_gid_index(struct ibv_context *ctx, const uint8_t *gid)
{
	union ibv_gid g;
	int i, k;

	for (i = 0; i < 100; i++) {
		for (k = 0; k < 16; k++)
			if (!ibv_query_gid(ctx, 1, k, &g) &&
			    !memcmp(g.raw, gid, 16))
				return k;
		usleep(50000);
	}
	return -1;
}

/* ------------------------------------------------------------------
 * Odds and ends
 */

uint64_t wf_env(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

bool wf_chosen(const char *env, const char *name)
{
	const char *list = getenv(env);
	char *l, *tok, *save;
	bool found = false;

	if (!list || !*list)
		return true;
	l = strdup(list);
	for (tok = strtok_r(l, " ,", &save); tok && !found;
	     tok = strtok_r(NULL, " ,", &save))
		found = !strcmp(tok, name);
	free(l);
	return found;
}

long wf_mem_avail_kib(void)
{
	char buf[4096], *s;

	if (sxrc_read_str("/proc/meminfo", buf, sizeof(buf)))
		return -1;
	s = strstr(buf, "MemAvailable:");
	return s ? strtol(s + 13, NULL, 10) : -1;
}

static void *wf_call_run(void *p)
{
	struct wf_call *c = p;

	c->ret = c->fn(c->arg);
	c->took = sxrc_now_ms() - c->t0;
	c->done = true;
	return NULL;
}

int wf_call_start(struct wf_call *c, int (*fn)(void *), void *arg)
{
	memset(c, 0, sizeof(*c));
	c->fn = fn;
	c->arg = arg;
	c->t0 = sxrc_now_ms();
	return pthread_create(&c->th, NULL, wf_call_run, c);
}

bool wf_call_wait(struct wf_call *c, int ms)
{
	while (!c->done && sxrc_now_ms() - c->t0 < ms)
		usleep(1000);
	if (c->done && !c->joined)
		c->joined = !pthread_join(c->th, NULL);
	return c->done;
}
