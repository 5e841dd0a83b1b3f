// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: RoCEv2 packets: the UDP tunnel socket of a network namespace,
 * building and parsing the IBA transport headers, the ICRC, sending a
 * packet and the device's receive worker that hands each packet to the
 * requester (wire_req.c: acknowledgments, READ and atomic responses)
 * or the responder (wire_resp.c: requests) of the QP it names.
 *
 * Packets arrive in softirq context on the namespace's socket; they are
 * checked for a device, made linear and queued on that device.  The
 * device's receive worker (one work item: packets of one device are
 * taken in order, one at a time) parses them and runs the transport in
 * process context, where copies to user pages may sleep.
 *
 * IPv4 between IPv4-mapped GIDs, IPv6 between others; one of each
 * cannot reach the other (EHOSTUNREACH, a lost packet for the
 * requester).
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#include "wire.h"

/* Packets a device holds for its receive worker, at most. */
#define SXRC_WIRE_RXQ_MAX	4096

#define A(x)	(SXRC_PA_VALID | (x))
#define SND	(SXRC_PA_REQ | SXRC_PA_SEND | SXRC_PA_PAYLOAD)
#define WRT	(SXRC_PA_REQ | SXRC_PA_WRITE | SXRC_PA_PAYLOAD)
#define FIRST	SXRC_PA_FIRST
#define LAST	SXRC_PA_LAST
#define ONLY	(SXRC_PA_FIRST | SXRC_PA_LAST)
#define RRESP	(SXRC_PA_READ | SXRC_PA_PAYLOAD)

const u16 sxrc_op_attr[SXRC_OP_NUM] = {
	[SXRC_OP_SEND_FIRST]	   = A(SND | FIRST),
	[SXRC_OP_SEND_MIDDLE]	   = A(SND),
	[SXRC_OP_SEND_LAST]	   = A(SND | LAST),
	[SXRC_OP_SEND_LAST_IMM]	   = A(SND | LAST | SXRC_PA_IMM),
	[SXRC_OP_SEND_ONLY]	   = A(SND | ONLY),
	[SXRC_OP_SEND_ONLY_IMM]	   = A(SND | ONLY | SXRC_PA_IMM),
	[SXRC_OP_WRITE_FIRST]	   = A(WRT | FIRST | SXRC_PA_RETH),
	[SXRC_OP_WRITE_MIDDLE]	   = A(WRT),
	[SXRC_OP_WRITE_LAST]	   = A(WRT | LAST),
	[SXRC_OP_WRITE_LAST_IMM]   = A(WRT | LAST | SXRC_PA_IMM),
	[SXRC_OP_WRITE_ONLY]	   = A(WRT | ONLY | SXRC_PA_RETH),
	[SXRC_OP_WRITE_ONLY_IMM]   = A(WRT | ONLY | SXRC_PA_RETH |
				       SXRC_PA_IMM),
	[SXRC_OP_READ_REQ]	   = A(SXRC_PA_REQ | SXRC_PA_READ | ONLY |
				       SXRC_PA_RETH),
	[SXRC_OP_READ_RESP_FIRST]  = A(RRESP | FIRST | SXRC_PA_AETH),
	[SXRC_OP_READ_RESP_MIDDLE] = A(RRESP),
	[SXRC_OP_READ_RESP_LAST]   = A(RRESP | LAST | SXRC_PA_AETH),
	[SXRC_OP_READ_RESP_ONLY]   = A(RRESP | ONLY | SXRC_PA_AETH),
	[SXRC_OP_ACK]		   = A(ONLY | SXRC_PA_AETH),
	[SXRC_OP_ATOMIC_ACK]	   = A(ONLY | SXRC_PA_AETH |
				       SXRC_PA_ATOMIC_ACK),
	[SXRC_OP_CMP_SWAP]	   = A(SXRC_PA_REQ | SXRC_PA_ATOMIC | ONLY |
				       SXRC_PA_ATOMICETH),
	[SXRC_OP_FETCH_ADD]	   = A(SXRC_PA_REQ | SXRC_PA_ATOMIC | ONLY |
				       SXRC_PA_ATOMICETH),
	[SXRC_OP_SEND_LAST_INV]	   = A(SND | LAST | SXRC_PA_IETH),
	[SXRC_OP_SEND_ONLY_INV]	   = A(SND | ONLY | SXRC_PA_IETH),
};

#undef A
#undef SND
#undef WRT
#undef FIRST
#undef LAST
#undef ONLY
#undef RRESP

/* The opcode's transport bits for a QP of @qp_type. */
u8 sxrc_wire_transport(u32 qp_type)
{
	switch (qp_type) {
	case SXRC_QPT_UC:
		return SXRC_TP_UC;
	case SXRC_QPT_UD:
		return SXRC_TP_UD;
	case SXRC_QPT_XRC_SEND:
	case SXRC_QPT_XRC_RECV:
		return SXRC_TP_XRC;
	default:
		return SXRC_TP_RC;
	}
}

/* May a packet of transport @tp carry operation @op? */
static bool sxrc_wire_op_ok(u8 tp, u8 op)
{
	if (op >= SXRC_OP_NUM || !sxrc_op_attr[op])
		return false;
	switch (tp) {
	case SXRC_TP_RC:
	case SXRC_TP_XRC:
		return true;
	case SXRC_TP_UC:
		return op <= SXRC_OP_WRITE_ONLY_IMM;
	case SXRC_TP_UD:
		return op == SXRC_OP_SEND_ONLY || op == SXRC_OP_SEND_ONLY_IMM;
	default:
		return false;
	}
}

/*
 * Write the headers of @p (opcode, flags, QPN, PSN and what its
 * operation carries) to @hdr; returns their length.  The pad count is
 * filled in by the sender, which knows the payload.
 */
u32 sxrc_wire_build(u8 *hdr, const struct sxrc_pkt *p)
{
	u8 op = p->opcode & ~SXRC_TP_MASK, tp = p->opcode & SXRC_TP_MASK;
	u16 attr = sxrc_op_attr[op];
	u32 off = SXRC_BTH_LEN;

	hdr[0] = p->opcode;
	hdr[1] = p->se ? SXRC_BTH_SE : 0;
	put_unaligned_be16(SXRC_PKEY_DEFAULT, hdr + 2);
	put_unaligned_be32(p->dqpn & SXRC_PSN_MASK, hdr + 4);
	put_unaligned_be32((p->ackreq ? SXRC_BTH_ACKREQ : 0) |
			   (p->psn & SXRC_PSN_MASK), hdr + 8);
	if (tp == SXRC_TP_UD) {
		put_unaligned_be32(p->qkey, hdr + off);
		put_unaligned_be32(p->sqpn & SXRC_PSN_MASK, hdr + off + 4);
		off += SXRC_DETH_LEN;
	}
	if (tp == SXRC_TP_XRC && (attr & SXRC_PA_REQ)) {
		put_unaligned_be32(p->srqn & SXRC_PSN_MASK, hdr + off);
		off += SXRC_XRCETH_LEN;
	}
	if (attr & SXRC_PA_RETH) {
		put_unaligned_be64(p->va, hdr + off);
		put_unaligned_be32(p->rkey, hdr + off + 8);
		put_unaligned_be32(p->dmalen, hdr + off + 12);
		off += SXRC_RETH_LEN;
	}
	if (attr & SXRC_PA_ATOMICETH) {
		put_unaligned_be64(p->va, hdr + off);
		put_unaligned_be32(p->rkey, hdr + off + 8);
		put_unaligned_be64(p->swap, hdr + off + 12);
		put_unaligned_be64(p->cmp, hdr + off + 20);
		off += SXRC_ATOMIC_LEN;
	}
	if (attr & SXRC_PA_IMM) {
		/* Immediate data is kept in network order throughout. */
		memcpy(hdr + off, &p->imm, SXRC_IMM_LEN);
		off += SXRC_IMM_LEN;
	}
	if (attr & SXRC_PA_IETH) {
		put_unaligned_be32(p->imm, hdr + off);
		off += SXRC_IMM_LEN;
	}
	if (attr & SXRC_PA_AETH) {
		put_unaligned_be32((u32)p->syndrome << 24 |
				   (p->msn & SXRC_PSN_MASK), hdr + off);
		off += SXRC_AETH_LEN;
	}
	if (attr & SXRC_PA_ATOMIC_ACK) {
		put_unaligned_be64(p->orig, hdr + off);
		off += SXRC_ATOMIC_ACK_LEN;
	}
	return off;
}

/*
 * The UDP tunnel sockets, one per network namespace that has a link,
 * shared by its links.  Under sxrc_devs_mutex.
 */
struct sxrc_wire_sock {
	struct list_head entry;
	struct net *net;
	struct socket *sock;
	struct socket *sock6;
	u32 users;
};

/*
 * The ICRC of a RoCEv2 packet: a CRC-32 of the IP header (@nh, IPv4 or
 * IPv6) and the UDP header with the fields routers change masked to
 * ones (IPv4: TOS, TTL, checksum; IPv6: traffic class, flow label, hop
 * limit; the UDP checksum), the BTH with its reserved byte masked, then
 * everything up to the ICRC.  The seed covers the 8 bytes of ones that
 * stand for the LRH RoCEv2 does not have.
 */
static u32 sxrc_icrc(const void *nh, bool v4, const struct udphdr *uh,
		     const u8 *bth, u32 len)
{
	u8 ph[sizeof(struct ipv6hdr) + sizeof(struct udphdr) + SXRC_BTH_LEN];
	u32 nlen = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct udphdr *mu = (struct udphdr *)(ph + nlen);
	u8 *mb = (u8 *)(mu + 1);
	u32 crc;

	memcpy(ph, nh, nlen);
	if (v4) {
		struct iphdr *mi = (struct iphdr *)ph;

		mi->tos = 0xff;
		mi->ttl = 0xff;
		mi->check = CSUM_MANGLED_0;
	} else {
		struct ipv6hdr *m6 = (struct ipv6hdr *)ph;

		m6->priority = 0xf;
		memset(m6->flow_lbl, 0xff, sizeof(m6->flow_lbl));
		m6->hop_limit = 0xff;
	}
	memcpy(mu, uh, sizeof(*mu));
	mu->check = CSUM_MANGLED_0;
	memcpy(mb, bth, SXRC_BTH_LEN);
	mb[4] = 0xff;
	crc = crc32_le(0xdebb20e3, ph, nlen + sizeof(*mu) + SXRC_BTH_LEN);
	crc = crc32_le(crc, bth + SXRC_BTH_LEN, len - SXRC_BTH_LEN);
	return ~crc;
}

int sxrc_wire_route_init(struct sxrc_wire_route *r)
{
	spin_lock_init(&r->lock);
	return dst_cache_init(&r->dst, GFP_KERNEL_ACCOUNT);
}

void sxrc_wire_route_destroy(struct sxrc_wire_route *r)
{
	dst_cache_destroy(&r->dst);
}

/* A route looked up from @sgid to @dgid out of @ndev, or an ERR_PTR. */
static struct dst_entry *sxrc_wire_lookup(struct sxrc_dev *dev,
					  struct net_device *ndev,
					  const u8 *sgid, const u8 *dgid,
					  bool v4)
{
	struct dst_entry *dst;

	if (v4) {
		struct flowi4 fl4 = {
			.flowi4_oif = ndev->ifindex,
			.flowi4_proto = IPPROTO_UDP,
		};
		struct rtable *rt;

		memcpy(&fl4.saddr, sgid + 12, 4);
		memcpy(&fl4.daddr, dgid + 12, 4);
		rt = ip_route_output_key(dev_net(ndev), &fl4);
		return IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		/* The socket lives while the interface is the device's. */
		struct sock *sk = dev->wire_sock->sock6->sk;
		struct flowi6 fl6 = {
			.flowi6_oif = ndev->ifindex,
			.flowi6_proto = IPPROTO_UDP,
		};

		memcpy(&fl6.saddr, sgid, 16);
		memcpy(&fl6.daddr, dgid, 16);
		dst = ipv6_stub->ipv6_dst_lookup_flow(dev_net(ndev), sk, &fl6,
						      NULL);
		if (!IS_ERR(dst) && dst->error) {
			dst_release(dst);
			dst = ERR_PTR(-EHOSTUNREACH);
		}
		return dst;
	}
#else
	return ERR_PTR(-EAFNOSUPPORT);
#endif
}

/* The route @r holds for @sgid to @dgid (a reference), or NULL. */
static struct dst_entry *sxrc_wire_cached(struct sxrc_wire_route *r,
					  const u8 *sgid, const u8 *dgid,
					  bool v4)
{
	if (memcmp(r->sgid, sgid, 16) || memcmp(r->dgid, dgid, 16)) {
		dst_cache_reset(&r->dst);
		memcpy(r->sgid, sgid, 16);
		memcpy(r->dgid, dgid, 16);
		return NULL;
	}
	if (v4) {
		__be32 saddr;
		struct rtable *rt = dst_cache_get_ip4(&r->dst, &saddr);

		return rt ? &rt->dst : NULL;
	}
#if IS_ENABLED(CONFIG_IPV6)
	{
		struct in6_addr saddr;

		return dst_cache_get_ip6(&r->dst, &saddr);
	}
#else
	return NULL;
#endif
}

/*
 * A route from @sgid to @dgid out of @dev's interface, and the interface
 * (a reference), or an ERR_PTR.  IPv4 when both are IPv4-mapped, IPv6
 * when neither is.  Taken from @r when it still holds one for the pair,
 * else looked up and kept there.
 */
static struct dst_entry *sxrc_wire_route(struct sxrc_dev *dev,
					 struct sxrc_wire_route *r,
					 const u8 *sgid, const u8 *dgid,
					 bool v4, struct net_device **ndevp)
{
	struct net_device *ndev;
	struct dst_entry *dst;

	rcu_read_lock();
	ndev = rcu_dereference(dev->ndev);
	if (!ndev) {
		rcu_read_unlock();
		return ERR_PTR(-ENODEV);
	}
	spin_lock_bh(&r->lock);
	dst = sxrc_wire_cached(r, sgid, dgid, v4);
	if (!dst) {
		__be32 saddr;

		memcpy(&saddr, sgid + 12, sizeof(saddr));
		dst = sxrc_wire_lookup(dev, ndev, sgid, dgid, v4);
		if (!IS_ERR(dst) && v4)
			dst_cache_set_ip4(&r->dst, dst, saddr);
#if IS_ENABLED(CONFIG_IPV6)
		else if (!IS_ERR(dst))
			dst_cache_set_ip6(&r->dst, dst,
					  (const struct in6_addr *)sgid);
#endif
	}
	spin_unlock_bh(&r->lock);
	if (!IS_ERR(dst)) {
		dev_hold(ndev);
		*ndevp = ndev;
	}
	rcu_read_unlock();
	return dst;
}

static void sxrc_wire_count(struct sxrc_dev *dev, enum sxrc_wire_stat stat)
{
	atomic64_inc(&dev->wire_stats[stat]);
}

/* Put the IPv4 header in front of @skb (its UDP header at the front). */
static void sxrc_wire_push_ip4(struct sk_buff *skb, struct net *net,
			       const struct sxrc_ah_attr *ah, const u8 *sgid)
{
	struct iphdr *iph;

	skb_push(skb, sizeof(*iph));
	skb_reset_network_header(skb);
	iph = ip_hdr(skb);
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = ah->traffic_class;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = ah->hop_limit > 1 ? ah->hop_limit : 64;
	iph->protocol = IPPROTO_UDP;
	memcpy(&iph->saddr, sgid + 12, 4);
	memcpy(&iph->daddr, ah->dgid + 12, 4);
	iph->check = 0;
	__ip_select_ident(net, iph, 1);
	skb->protocol = htons(ETH_P_IP);
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
}

/* Put the IPv6 header in front of @skb (its UDP header at the front). */
static void sxrc_wire_push_ip6(struct sk_buff *skb,
			       const struct sxrc_ah_attr *ah, const u8 *sgid)
{
	struct ipv6hdr *ip6h;

	skb_push(skb, sizeof(*ip6h));
	skb_reset_network_header(skb);
	ip6h = ipv6_hdr(skb);
	ip6_flow_hdr(ip6h, ah->traffic_class,
		     htonl(ah->flow_label) & IPV6_FLOWLABEL_MASK);
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = ah->hop_limit > 1 ? ah->hop_limit : 64;
	memcpy(&ip6h->saddr, sgid, 16);
	memcpy(&ip6h->daddr, ah->dgid, 16);
	skb->protocol = htons(ETH_P_IPV6);
	memset(IP6CB(skb), 0, sizeof(*IP6CB(skb)));
}

/*
 * Send one packet of @dev to @ah for the QP whose wire state is @w:
 * headers @hdr, then @len bytes of payload from @src at @off (or from
 * @buf), padded, then the ICRC.
 * Called in process context; @qp (or NULL) is the QP whose death stops
 * a copy.  Returns 0 or a negative errno; a packet the network drops is
 * not an error here.  The UDP checksum is 0, as rdma_rxe sends it (the
 * ICRC covers the packet).
 */
static int sxrc_wire_send(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
			  struct sxrc_wire_qp *w, const u8 *hdr, u32 hlen,
			  struct sxrc_sgl *src, u64 off, void *buf, u32 len,
			  struct sxrc_qp *qp)
{
	u32 pad = -len & 3, tlen = hlen + len + pad + SXRC_ICRC_LEN;
	u32 room = sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	struct net_device *ndev;
	struct dst_entry *dst;
	struct sk_buff *skb;
	struct udphdr *uh;
	u8 sgid[16], *bth, *icrc;
	bool v4;
	int ret;

	if (sxrc_link_gid(dev, ah->sgid_index, sgid))
		return -EHOSTUNREACH;
	v4 = ipv6_addr_v4mapped((struct in6_addr *)sgid);
	if (v4 != ipv6_addr_v4mapped((struct in6_addr *)ah->dgid))
		return -EHOSTUNREACH;
	dst = sxrc_wire_route(dev, &w->route, sgid, ah->dgid, v4, &ndev);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + room + tlen, GFP_KERNEL);
	if (!skb) {
		ret = -ENOMEM;
		goto err;
	}
	skb_reserve(skb, LL_RESERVED_SPACE(ndev) + room);
	bth = skb_put_data(skb, hdr, hlen);
	bth[1] |= pad << 4;
	if (len) {
		void *data = skb_put(skb, len);

		if (buf) {
			memcpy(data, buf, len);
		} else {
			struct sxrc_sgl dst_sgl = { .n = 0 };

			sxrc_sgl_add_kbuf(&dst_sgl, data, len);
			ret = sxrc_copy_range(&dst_sgl, 0, src, off, len, qp);
			if (ret) {
				kfree_skb(skb);
				goto err;
			}
		}
	}
	skb_put_zero(skb, pad);
	/* Its place now: the IP header's length counts it. */
	icrc = skb_put(skb, SXRC_ICRC_LEN);

	skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(w->sport);
	uh->dest = htons(SXRC_ROCE_PORT);
	uh->len = htons(sizeof(*uh) + tlen);
	uh->check = 0;

	if (v4)
		sxrc_wire_push_ip4(skb, dev_net(ndev), ah, sgid);
	else
		sxrc_wire_push_ip6(skb, ah, sgid);
	put_unaligned_le32(sxrc_icrc(skb_network_header(skb), v4, uh, bth,
				     hlen + len + pad), icrc);
	skb->dev = ndev;
	skb_dst_set(skb, dst);
	if (v4)
		ret = ip_local_out(dev_net(ndev), NULL, skb);
	else
		ret = ip6_local_out(dev_net(ndev), NULL, skb);
	ret = net_xmit_eval(ret) ? -ENOBUFS : 0;
	sxrc_wire_count(dev, SXRC_WIRE_TX);
	dev_put(ndev);
	return ret;

err:
	dst_release(dst);
	dev_put(ndev);
	return ret;
}

int sxrc_wire_xmit(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
		   struct sxrc_wire_qp *w, const u8 *hdr, u32 hlen,
		   struct sxrc_sgl *src, u64 off, u32 len, struct sxrc_qp *qp)
{
	return sxrc_wire_send(dev, ah, w, hdr, hlen, src, off, NULL, len, qp);
}

int sxrc_wire_xmit_buf(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
		       struct sxrc_wire_qp *w, const u8 *hdr, u32 hlen,
		       void *buf, u32 len)
{
	return sxrc_wire_send(dev, ah, w, hdr, hlen, NULL, 0, buf, len, NULL);
}

/*
 * Parse the RoCEv2 packet in @skb (linear, its UDP header at the
 * transport header) into @p: false if it is malformed or its ICRC is
 * wrong.
 */
static bool sxrc_wire_parse(struct sk_buff *skb, struct sxrc_pkt *p)
{
	struct udphdr *uh = udp_hdr(skb);
	u8 *h = (u8 *)(uh + 1), tp, op;
	u32 n, off = SXRC_BTH_LEN;
	bool v4;
	u16 attr;

	/* The ICRC takes the IP header right before the UDP header. */
	v4 = skb->protocol == htons(ETH_P_IP);
	if (v4 ? ip_hdr(skb)->ihl != 5 || skb_transport_offset(skb) !=
		 skb_network_offset(skb) + sizeof(struct iphdr) :
	    skb->protocol != htons(ETH_P_IPV6) ||
	    ipv6_hdr(skb)->nexthdr != IPPROTO_UDP)
		return false;
	n = ntohs(uh->len);
	if (n < sizeof(*uh) + SXRC_BTH_LEN + SXRC_ICRC_LEN ||
	    h + n - sizeof(*uh) > skb_tail_pointer(skb))
		return false;
	n -= sizeof(*uh);
	memset(p, 0, sizeof(*p));
	p->opcode = h[0];
	tp = p->opcode & SXRC_TP_MASK;
	op = p->opcode & ~SXRC_TP_MASK;
	if (!sxrc_wire_op_ok(tp, op))
		return false;
	attr = sxrc_op_attr[op];
	p->attr = attr;
	p->se = h[1] & SXRC_BTH_SE;
	p->pad = (h[1] >> 4) & 3;
	/* Transport header version 0; the default partition, any member. */
	if ((h[1] & 0xf) ||
	    (get_unaligned_be16(h + 2) & 0x7fff) != (SXRC_PKEY_DEFAULT & 0x7fff))
		return false;
	p->dqpn = get_unaligned_be32(h + 4) & SXRC_PSN_MASK;
	p->ackreq = get_unaligned_be32(h + 8) & SXRC_BTH_ACKREQ;
	p->psn = get_unaligned_be32(h + 8) & SXRC_PSN_MASK;

	if (tp == SXRC_TP_UD) {
		if (n < off + SXRC_DETH_LEN)
			return false;
		p->qkey = get_unaligned_be32(h + off);
		p->sqpn = get_unaligned_be32(h + off + 4) & SXRC_PSN_MASK;
		off += SXRC_DETH_LEN;
	}
	if (tp == SXRC_TP_XRC && (attr & SXRC_PA_REQ)) {
		if (n < off + SXRC_XRCETH_LEN)
			return false;
		p->srqn = get_unaligned_be32(h + off) & SXRC_PSN_MASK;
		off += SXRC_XRCETH_LEN;
	}
	if (attr & SXRC_PA_RETH) {
		if (n < off + SXRC_RETH_LEN)
			return false;
		p->va = get_unaligned_be64(h + off);
		p->rkey = get_unaligned_be32(h + off + 8);
		p->dmalen = get_unaligned_be32(h + off + 12);
		off += SXRC_RETH_LEN;
	}
	if (attr & SXRC_PA_ATOMICETH) {
		if (n < off + SXRC_ATOMIC_LEN)
			return false;
		p->va = get_unaligned_be64(h + off);
		p->rkey = get_unaligned_be32(h + off + 8);
		p->swap = get_unaligned_be64(h + off + 12);
		p->cmp = get_unaligned_be64(h + off + 20);
		off += SXRC_ATOMIC_LEN;
	}
	if (attr & (SXRC_PA_IMM | SXRC_PA_IETH)) {
		if (n < off + SXRC_IMM_LEN)
			return false;
		if (attr & SXRC_PA_IMM)
			memcpy(&p->imm, h + off, SXRC_IMM_LEN);
		else
			p->imm = get_unaligned_be32(h + off);
		off += SXRC_IMM_LEN;
	}
	if (attr & SXRC_PA_AETH) {
		if (n < off + SXRC_AETH_LEN)
			return false;
		p->syndrome = h[off];
		p->msn = get_unaligned_be32(h + off) & SXRC_PSN_MASK;
		off += SXRC_AETH_LEN;
	}
	if (attr & SXRC_PA_ATOMIC_ACK) {
		if (n < off + SXRC_ATOMIC_ACK_LEN)
			return false;
		p->orig = get_unaligned_be64(h + off);
		off += SXRC_ATOMIC_ACK_LEN;
	}
	if (n < off + p->pad + SXRC_ICRC_LEN)
		return false;
	p->payload = h + off;
	p->paylen = n - off - p->pad - SXRC_ICRC_LEN;
	if (p->paylen && !(attr & SXRC_PA_PAYLOAD))
		return false;
	if (sxrc_icrc(skb_network_header(skb), v4, uh, h, n - SXRC_ICRC_LEN) !=
	    get_unaligned_le32(h + n - SXRC_ICRC_LEN))
		return false;

	p->ipv4 = v4;
	p->nethdr = skb_network_header(skb);
	if (v4) {
		ipv6_addr_set_v4mapped(ip_hdr(skb)->saddr,
				       (struct in6_addr *)p->sgid);
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)p->dgid);
	} else {
		memcpy(p->sgid, &ipv6_hdr(skb)->saddr, 16);
		memcpy(p->dgid, &ipv6_hdr(skb)->daddr, 16);
	}
	return true;
}

/* Does a packet of transport @tp to @qp fit its type? */
static bool sxrc_wire_type_ok(struct sxrc_qp *qp, u8 tp, bool req)
{
	if (tp == SXRC_TP_XRC)
		return qp->type == (req ? SXRC_QPT_XRC_RECV : SXRC_QPT_XRC_SEND);
	return sxrc_wire_transport(qp->type) == tp;
}

/* One packet for @dev: to the QP it names, or dropped and counted. */
static void sxrc_wire_dispatch(struct sxrc_dev *dev, struct sk_buff *skb)
{
	struct sxrc_pkt p;
	struct sxrc_qp *qp;
	bool req;

	if (!sxrc_wire_parse(skb, &p))
		goto drop;
	req = p.attr & SXRC_PA_REQ;
	if ((p.opcode & SXRC_TP_MASK) == SXRC_TP_UD) {
		sxrc_wire_datagram(dev, &p);
		return;
	}
	qp = sxrc_qp_lookup(dev, p.dqpn);
	if (!qp)
		goto drop;
	if (!sxrc_wire_type_ok(qp, p.opcode & SXRC_TP_MASK, req)) {
		sxrc_obj_drop(&qp->obj);
		goto drop;
	}
	if (req)
		sxrc_wire_request(dev, qp, &p);
	else
		sxrc_wire_response(qp, &p);
	sxrc_obj_drop(&qp->obj);
	return;
drop:
	sxrc_wire_drop(dev);
}

static void sxrc_wire_rx_work(struct work_struct *work)
{
	struct sxrc_dev *dev = container_of(work, struct sxrc_dev, wire_rx);
	struct sk_buff *skb;
	u32 budget = 256;

	while (budget-- && (skb = skb_dequeue(&dev->wire_rxq))) {
		sxrc_wire_count(dev, SXRC_WIRE_RX);
		sxrc_wire_dispatch(dev, skb);
		kfree_skb(skb);
		cond_resched();
	}
	if (!skb_queue_empty(&dev->wire_rxq))
		queue_work(sxrc_rx_wq, &dev->wire_rx);
}

/* A RoCEv2 packet in softirq context: to its device's queue. */
static int sxrc_wire_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct sxrc_dev *dev;

	rcu_read_lock();
	dev = sxrc_dev_by_ndev(skb->dev);
	if (!dev || skb_linearize(skb) ||
	    skb_queue_len(&dev->wire_rxq) >= SXRC_WIRE_RXQ_MAX) {
		if (dev)
			sxrc_wire_drop(dev);
		rcu_read_unlock();
		kfree_skb(skb);
		return 0;
	}
	skb_queue_tail(&dev->wire_rxq, skb);
	queue_work(sxrc_rx_wq, &dev->wire_rx);
	rcu_read_unlock();
	return 0;
}

static LIST_HEAD(sxrc_wire_socks);

static struct socket *sxrc_wire_sock_create(struct net *net, bool v6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = sxrc_wire_encap_rcv,
	};
	struct udp_port_cfg ucfg = {
		.family = v6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = v6,
		.local_udp_port = htons(SXRC_ROCE_PORT),
	};
	struct socket *sock;
	int ret;

	ret = udp_sock_create(net, &ucfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	return sock;
}

static struct sxrc_wire_sock *sxrc_wire_sock_get(struct net *net)
{
	struct sxrc_wire_sock *ws;
	int ret;

	list_for_each_entry(ws, &sxrc_wire_socks, entry) {
		if (net_eq(ws->net, net)) {
			ws->users++;
			return ws;
		}
	}
	ws = kzalloc(sizeof(*ws), GFP_KERNEL);
	if (!ws)
		return ERR_PTR(-ENOMEM);
	ws->sock = sxrc_wire_sock_create(net, false);
	if (IS_ERR(ws->sock)) {
		ret = PTR_ERR(ws->sock);
		goto err_free;
	}
#if IS_ENABLED(CONFIG_IPV6)
	ws->sock6 = sxrc_wire_sock_create(net, true);
	if (IS_ERR(ws->sock6)) {
		ret = PTR_ERR(ws->sock6);
		udp_tunnel_sock_release(ws->sock);
		goto err_free;
	}
#endif
	ws->net = net;
	ws->users = 1;
	list_add(&ws->entry, &sxrc_wire_socks);
	return ws;

err_free:
	kfree(ws);
	return ERR_PTR(ret);
}

static void sxrc_wire_sock_put(struct sxrc_wire_sock *ws)
{
	if (--ws->users)
		return;
	list_del(&ws->entry);
	if (ws->sock6)
		udp_tunnel_sock_release(ws->sock6);
	udp_tunnel_sock_release(ws->sock);
	kfree(ws);
}

/**
 * sxrc_wire_start - let a link send and receive packets
 * @dev: a link being added (its network device set)
 *
 * Caller holds RTNL and sxrc_devs_mutex.
 *
 * Return: 0; -EADDRINUSE when UDP port 4791 of the namespace is taken
 * (by rdma_rxe, say); -ENOMEM.
 */
int sxrc_wire_start(struct sxrc_dev *dev)
{
	struct net_device *ndev = rtnl_dereference(dev->ndev);
	struct sxrc_wire_sock *ws;

	ASSERT_RTNL();
	skb_queue_head_init(&dev->wire_rxq);
	INIT_WORK(&dev->wire_rx, sxrc_wire_rx_work);
	dev->wire_rs = kzalloc(sizeof(*dev->wire_rs), GFP_KERNEL);
	if (!dev->wire_rs)
		return -ENOMEM;
	ws = sxrc_wire_sock_get(dev_net(ndev));
	if (IS_ERR(ws)) {
		kfree(dev->wire_rs);
		dev->wire_rs = NULL;
		return PTR_ERR(ws);
	}
	dev->wire_sock = ws;
	return 0;
}

/*
 * A link goes: after sxrc_link_release() (no packet finds it any more),
 * its queue is emptied and its socket let go.  Caller holds
 * sxrc_devs_mutex.
 */
void sxrc_wire_stop(struct sxrc_dev *dev)
{
	if (!dev->wire_sock)
		return;
	cancel_work_sync(&dev->wire_rx);
	skb_queue_purge(&dev->wire_rxq);
	sxrc_wire_sock_put(dev->wire_sock);
	dev->wire_sock = NULL;
	kfree(dev->wire_rs);
	dev->wire_rs = NULL;
}
