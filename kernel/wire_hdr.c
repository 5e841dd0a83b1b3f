// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: the IBA transport headers of RoCEv2 packets.  What each
 * opcode carries (sxrc_op_attr[]), writing the headers of a packet to
 * send, parsing and checking a received one, and the ICRC that covers
 * both.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/udp.h>
#include <net/ipv6.h>

#include "compat.h"
#include "wire.h"

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
 * The ICRC of a RoCEv2 packet: a CRC-32 of the IP header (@nh, IPv4 or
 * IPv6) and the UDP header with the fields routers change masked to
 * ones (IPv4: TOS, TTL, checksum; IPv6: traffic class, flow label, hop
 * limit; the UDP checksum), the BTH with its reserved byte masked, then
 * everything up to the ICRC, and inverted.  The seed covers the 8 bytes
 * of ones that stand for the LRH RoCEv2 does not have.
 *
 * sxrc_wire_icrc_hdr() returns the CRC so far over the headers up to the
 * end of the BTH (@bth): the caller goes on with crc32_le() over the
 * bytes that follow, wherever they are, and inverts the result.
 */
u32 sxrc_wire_icrc_hdr(const void *nh, bool v4, const struct udphdr *uh,
		       const u8 *bth)
{
	u8 ph[sizeof(struct ipv6hdr) + sizeof(struct udphdr) + SXRC_BTH_LEN];
	u32 nlen = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct udphdr *mu = (struct udphdr *)(ph + nlen);
	u8 *mb = (u8 *)(mu + 1);

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
	return crc32_le(0xdebb20e3, ph, nlen + sizeof(*mu) + SXRC_BTH_LEN);
}

/*
 * Parse the RoCEv2 packet in @skb (linear, its UDP header at the
 * transport header) into @p: false if it is malformed or its ICRC is
 * wrong.
 */
bool sxrc_wire_parse(struct sk_buff *skb, struct sxrc_pkt *p)
{
	struct udphdr *uh = udp_hdr(skb);
	u8 *h = (u8 *)(uh + 1), tp, op;
	u32 n, crc, off = SXRC_BTH_LEN;
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
	crc = sxrc_wire_icrc_hdr(skb_network_header(skb), v4, uh, h);
	crc = ~crc32_le(crc, h + SXRC_BTH_LEN,
			n - SXRC_BTH_LEN - SXRC_ICRC_LEN);
	if (crc != get_unaligned_le32(h + n - SXRC_ICRC_LEN))
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
