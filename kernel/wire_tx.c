// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: sending RoCEv2 packets.  A QP keeps its route to the peer
 * (struct sxrc_wire_route, a dst_cache keyed by the two GIDs); a packet
 * is built in an skb from its headers (wire_hdr.c), its payload and the
 * ICRC, given UDP and IP headers and handed to the IP layer.
 *
 * IPv4 between IPv4-mapped GIDs, IPv6 between others; one of each
 * cannot reach the other (EHOSTUNREACH, a lost packet for the
 * requester).
 */
#include <linux/crc32.h>
#include <linux/highmem.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/dst_cache.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <net/route.h>
#include <net/udp.h>

#include "compat.h"
#include "wire.h"

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

/* Payloads from this size on go out from their pages, uncopied. */
#define SXRC_WIRE_ZC_MIN	512
/* Pages a payload may lend a packet, at most (one fragment is the ICRC's). */
#define SXRC_WIRE_FRAGS		16
static_assert(SXRC_WIRE_FRAGS < MAX_SKB_FRAGS);

/*
 * Lend @n pieces of pages to @skb as its fragments, each with a page
 * reference of its own: they are put when the network frees the skb,
 * which may be after the region they belong to is gone.  @tail bytes
 * (pad and ICRC) follow in a fragment of their own; returns where they
 * go, or NULL (nothing lent).
 */
static u8 *sxrc_wire_lend(struct sk_buff *skb,
			  const struct sxrc_page_piece *pp, u32 n, u32 tail)
{
	struct page *page;
	u32 i, len = tail;
	u8 *t;

	t = netdev_alloc_frag(tail);
	if (!t)
		return NULL;
	for (i = 0; i < n; i++) {
		get_page(pp[i].page);
		skb_fill_page_desc(skb, i, pp[i].page, pp[i].off, pp[i].len);
		len += pp[i].len;
	}
	page = virt_to_head_page(t);
	skb_fill_page_desc(skb, n, page, t - (u8 *)page_address(page), tail);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += len;
	/* The bytes are the user's, who may write them meanwhile. */
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	return t;
}

/*
 * Copy @len bytes of payload from @src at @off (or from @buf) to the end
 * of @skb's linear part.  Out of line: the list it copies to is large,
 * and the sender's stack holds the pieces it may lend instead.
 */
static noinline_for_stack int sxrc_wire_copy(struct sk_buff *skb,
					     struct sxrc_sgl *src, u64 off,
					     void *buf, u32 len,
					     struct sxrc_qp *qp)
{
	struct sxrc_sgl dst_sgl = { .n = 0 };
	void *data;

	if (!len)
		return 0;
	data = skb_put(skb, len);
	if (buf) {
		memcpy(data, buf, len);
		return 0;
	}
	sxrc_sgl_add_kbuf(&dst_sgl, data, len);
	return sxrc_copy_range(&dst_sgl, 0, src, off, len, qp);
}

/* @crc carried on over the bytes of @n pieces of pages. */
static u32 sxrc_wire_crc_pages(u32 crc, const struct sxrc_page_piece *pp,
			       u32 n)
{
	u32 i;

	for (i = 0; i < n; i++) {
		u8 *p = kmap_local_page(pp[i].page);

		crc = crc32_le(crc, p + pp[i].off, pp[i].len);
		kunmap_local(p);
	}
	return crc;
}

/*
 * Send one packet of @dev to @ah through @route (a QP's, or the CM's)
 * from UDP port @sport: headers @hdr, then @len bytes of payload from @src at @off (or from
 * @buf), padded, then the ICRC.  A payload of SXRC_WIRE_ZC_MIN bytes or
 * more in pinned regions, to an interface that does scatter-gather, goes
 * out from its pages (sxrc_wire_lend()); others are copied into the
 * packet.
 * Called in process context; @qp (or NULL) is the QP whose death stops
 * a copy.  Returns 0 or a negative errno; a packet the network drops is
 * not an error here.  The UDP checksum is 0, as rdma_rxe sends it (the
 * ICRC covers the packet).
 */
static int sxrc_wire_send(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
			  struct sxrc_wire_route *route, u16 sport,
			  const u8 *hdr, u32 hlen, struct sxrc_sgl *src,
			  u64 off, void *buf, u32 len, struct sxrc_qp *qp)
{
	u32 pad = -len & 3, tail = pad + SXRC_ICRC_LEN, tlen = hlen + len + tail;
	u32 room = sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	struct sxrc_page_piece pp[SXRC_WIRE_FRAGS];
	struct net_device *ndev;
	struct dst_entry *dst;
	struct sk_buff *skb;
	struct udphdr *uh;
	u8 sgid[16], *bth, *trailer;
	u32 lent = 0, crc;
	bool v4;
	int ret;

	if (sxrc_link_gid(dev, ah->sgid_index, sgid))
		return -EHOSTUNREACH;
	v4 = ipv6_addr_v4mapped((struct in6_addr *)sgid);
	if (v4 != ipv6_addr_v4mapped((struct in6_addr *)ah->dgid))
		return -EHOSTUNREACH;
	dst = sxrc_wire_route(dev, route, sgid, ah->dgid, v4, &ndev);
	if (IS_ERR(dst))
		return PTR_ERR(dst);
	/*
	 * Without scatter-gather the stack would copy them back together.
	 * The pages are looked up while the keys still grant them (a parked
	 * list is checked again); each lent page then has a reference of
	 * its own.
	 */
	if (!buf && len >= SXRC_WIRE_ZC_MIN &&
	    (dst->dev->features & NETIF_F_SG)) {
		bool parked = src->parked;

		ret = sxrc_sgl_unpark(src);
		if (ret)
			goto err;
		lent = sxrc_sgl_pages(src, off, len, pp, ARRAY_SIZE(pp));
		if (parked)
			sxrc_sgl_park(src);
	}
	/* Responses to packets handled in softirq are sent from there. */
	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + room + (lent ? hlen : tlen),
			in_task() ? GFP_KERNEL : GFP_ATOMIC);
	if (!skb) {
		ret = -ENOMEM;
		goto err;
	}
	skb_reserve(skb, LL_RESERVED_SPACE(ndev) + room);
	bth = skb_put_data(skb, hdr, hlen);
	bth[1] |= pad << 4;
	if (lent) {
		trailer = sxrc_wire_lend(skb, pp, lent, tail);
		if (!trailer) {
			kfree_skb(skb);
			ret = -ENOMEM;
			goto err;
		}
	} else {
		ret = sxrc_wire_copy(skb, src, off, buf, len, qp);
		if (ret) {
			kfree_skb(skb);
			goto err;
		}
		/* Its place now: the IP header's length counts it. */
		trailer = skb_put(skb, tail);
	}
	memset(trailer, 0, pad);

	skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh = udp_hdr(skb);
	uh->source = htons(sport);
	uh->dest = htons(SXRC_ROCE_PORT);
	uh->len = htons(sizeof(*uh) + tlen);
	uh->check = 0;

	if (v4)
		sxrc_wire_push_ip4(skb, dev_net(ndev), ah, sgid);
	else
		sxrc_wire_push_ip6(skb, ah, sgid);
	crc = sxrc_wire_icrc_hdr(skb_network_header(skb), v4, uh, bth);
	crc = crc32_le(crc, bth + SXRC_BTH_LEN, hlen - SXRC_BTH_LEN);
	if (lent)
		crc = sxrc_wire_crc_pages(crc, pp, lent);
	else
		crc = crc32_le(crc, bth + hlen, len);
	crc = crc32_le(crc, trailer, pad);
	put_unaligned_le32(~crc, trailer + pad);
	skb->dev = ndev;
	if (dst->dev->flags & IFF_LOOPBACK) {
		/* To an address of this host (a local route goes by lo). */
		dst_release(dst);
		ret = sxrc_wire_loopback(dev_net(ndev), skb);
		sxrc_wire_count(dev, SXRC_WIRE_TX_LOOPBACK);
	} else {
		skb_dst_set(skb, dst);
		if (v4)
			ret = ip_local_out(dev_net(ndev), NULL, skb);
		else
			ret = ip6_local_out(dev_net(ndev), NULL, skb);
		ret = net_xmit_eval(ret) ? -ENOBUFS : 0;
	}
	sxrc_wire_count(dev, SXRC_WIRE_TX);
	if (lent)
		sxrc_wire_count(dev, SXRC_WIRE_TX_LENT);
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
	return sxrc_wire_send(dev, ah, &w->route, w->sport, hdr, hlen, src,
			      off, NULL, len, qp);
}

int sxrc_wire_xmit_buf(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
		       struct sxrc_wire_qp *w, const u8 *hdr, u32 hlen,
		       void *buf, u32 len)
{
	return sxrc_wire_send(dev, ah, &w->route, w->sport, hdr, hlen, NULL,
			      0, buf, len, NULL);
}

/* A packet of no QP's (the CM's, from QP1) through @route. */
int sxrc_wire_xmit_route(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah,
			 struct sxrc_wire_route *route, u16 sport,
			 const u8 *hdr, u32 hlen, void *buf, u32 len)
{
	return sxrc_wire_send(dev, ah, route, sport, hdr, hlen, NULL, 0, buf,
			      len, NULL);
}
