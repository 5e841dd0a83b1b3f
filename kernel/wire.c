// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: receiving RoCEv2 packets.  The UDP tunnel socket of a network
 * namespace, and the device's receive worker that hands each packet to
 * the requester (wire_req.c: acknowledgments, READ and atomic responses)
 * or the responder (wire_resp.c: requests) of the QP it names.
 * Headers are parsed in wire_hdr.c, packets sent in wire_tx.c.
 *
 * Packets arrive in softirq context on the namespace's socket; they are
 * checked for a device and made linear.  A device's packets are taken
 * in order, one at a time (@wire_rx_owned).  SEND and WRITE requests to
 * RC and UC QPs, and ACKs to RC QPs, are handled right there in softirq
 * when no other packet of the device waits or is being handled, as rxe
 * handles all of its packets.  The others go on the device's queue for
 * its receive worker (one work item), which runs the transport in
 * process context, where copies to user pages may sleep (ODP) and READ
 * responses and resends may take their time.  A packet softirq cannot
 * finish without sleeping goes to the head of the queue untouched
 * (wire_resp.c, wire_ack.c).
 *
 * Handling a packet in softirq spares its QP the wake-up of the worker
 * and the switch to it: with ACKs and requests both handled there,
 * softxrc's ping-pong went from behind rxe's to ahead of it
 * (Documentation/wire.rst).
 */
#include <linux/udp.h>
#include <net/udp.h>
#include <net/udp_tunnel.h>

#include "wire.h"

/*
 * Packets a device holds for its receive worker, at most, and the memory
 * they may take: a flood from the network waits in neither more than
 * that, whatever the size of its packets.
 */
#define SXRC_WIRE_RXQ_MAX	4096
#define SXRC_WIRE_RXQ_BYTES	(8U << 20)

/*
 * The largest RoCEv2 packet, from its UDP header on: headers, a 4096-byte
 * MTU of payload, its padding and the ICRC.  Anything larger is dropped
 * before it is made linear or queued.
 */
#define SXRC_WIRE_PKT_MAX	(sizeof(struct udphdr) + SXRC_HDR_MAX + \
				 SXRC_DETH_LEN + 4096 + 3 + SXRC_ICRC_LEN)

static struct sk_buff *sxrc_wire_rxq_pop(struct sxrc_dev *dev)
{
	struct sk_buff *skb = __skb_dequeue(&dev->wire_rxq);

	if (skb)
		dev->wire_rxq_bytes -= skb->truesize;
	return skb;
}

static void sxrc_wire_rx_work(struct work_struct *work);

/* Does a packet of transport @tp to @qp fit its type? */
static bool sxrc_wire_type_ok(struct sxrc_qp *qp, u8 tp, bool req)
{
	if (tp == SXRC_TP_XRC)
		return qp->type == (req ? SXRC_QPT_XRC_RECV : SXRC_QPT_XRC_SEND);
	return sxrc_wire_transport(qp->type) == tp;
}

/* What became of a packet handed to sxrc_wire_dispatch(). */
enum sxrc_rx {
	SXRC_RX_DONE,		/* handled or dropped: the caller frees it */
	SXRC_RX_AGAIN,		/* softirq: to the receive worker, untouched */
	SXRC_RX_KEPT,		/* on its QP's backlog: not the caller's now */
};

/* A packet for @qp, parsed: to its requester or responder. */
static bool sxrc_wire_deliver_pkt(struct sxrc_dev *dev, struct sxrc_qp *qp,
				  struct sxrc_pkt *p)
{
	if ((p->opcode & SXRC_TP_MASK) == SXRC_TP_UD)
		return sxrc_wire_datagram(dev, qp, p);
	if (p->attr & SXRC_PA_REQ)
		return sxrc_wire_request(dev, qp, p);
	return sxrc_wire_response(qp, p);
}

/*
 * One packet for @dev, in softirq or the receive worker: to the QP it
 * names, or dropped and counted.  Neither waits: what cannot be done
 * without waiting goes back to the worker (softirq) or to the QP's own
 * backlog (the worker), and so does every later packet of a QP whose
 * backlog is not empty, to keep them in order.
 */
static enum sxrc_rx sxrc_wire_dispatch(struct sxrc_dev *dev,
				       struct sk_buff *skb)
{
	enum sxrc_rx ret = SXRC_RX_DONE;
	struct sxrc_wire_qp *w;
	struct sxrc_pkt p;
	struct sxrc_qp *qp;

	if (!sxrc_wire_parse(skb, &p))
		goto drop;
	if (p.dqpn == SXRC_CM_QPN) {
		/* UD: never taken in softirq (sxrc_wire_softirq_ok()). */
		sxrc_cm_mad_rcv(dev, &p);
		return SXRC_RX_DONE;
	}
	qp = sxrc_qp_lookup(dev, p.dqpn);
	if (!qp)
		goto drop;
	if (!sxrc_wire_type_ok(qp, p.opcode & SXRC_TP_MASK,
			       p.attr & SXRC_PA_REQ)) {
		sxrc_obj_drop(&qp->obj);
		goto drop;
	}
	w = READ_ONCE(qp->wire);
	if (w && in_task())
		sxrc_wresp_reask_seen(qp, w, &p);
	if (w && READ_ONCE(w->bl_pending)) {
		if (!in_task())
			ret = SXRC_RX_AGAIN;
		else if (sxrc_wire_backlog_add(w, skb, false))
			ret = SXRC_RX_KEPT;
	}
	if (ret == SXRC_RX_DONE && !sxrc_wire_deliver_pkt(dev, qp, &p)) {
		ret = SXRC_RX_AGAIN;
		if (in_task() && w && sxrc_wire_backlog_add(w, skb, true))
			ret = SXRC_RX_KEPT;
	}
	sxrc_obj_drop(&qp->obj);
	return ret;
drop:
	sxrc_wire_drop(dev);
	return SXRC_RX_DONE;
}

/*
 * Is this the receive worker of a link, which serves every QP of its
 * device and so must not wait for any one of them?
 */
bool sxrc_wire_in_rx_worker(void)
{
	struct work_struct *work = current_work();

	return work && work->func == sxrc_wire_rx_work;
}

/* Packets a QP's backlog holds, at most: the peer resends the rest. */
#define SXRC_WIRE_BACKLOG_MAX	256

/**
 * sxrc_wire_backlog_add - put a packet on its QP's backlog
 * @w: the QP's wire state
 * @skb: the packet
 * @force: start a backlog; else only join one (packets wait there)
 *
 * Return: whether @skb is the backlog's now (when full, it is freed and
 * counted as dropped: the peer sends it again).
 */
bool sxrc_wire_backlog_add(struct sxrc_wire_qp *w, struct sk_buff *skb,
			   bool force)
{
	bool kept = false, queued = false;

	spin_lock_bh(&w->backlog.lock);
	if ((force || w->bl_pending) && !w->bl_dead) {
		kept = true;
		if (skb_queue_len(&w->backlog) < SXRC_WIRE_BACKLOG_MAX) {
			__skb_queue_tail(&w->backlog, skb);
			w->bl_pending = true;
			queued = true;
		}
	}
	spin_unlock_bh(&w->backlog.lock);
	if (queued) {
		queue_work(sxrc_wq, &w->bl_work);
	} else if (kept) {
		sxrc_wire_drop(w->qp->obj.ctx->dev);
		kfree_skb(skb);
	}
	return kept;
}

/*
 * A QP's backlog, in its own work item: its packets in order, with all
 * the waiting they need, a bounded number per run.
 */
void sxrc_wire_backlog_work(struct work_struct *work)
{
	struct sxrc_wire_qp *w = container_of(work, struct sxrc_wire_qp,
					      bl_work);
	struct sxrc_qp *qp = w->qp;
	struct sxrc_dev *dev = qp->obj.ctx->dev;
	u32 budget = 64;

	for (;;) {
		struct sk_buff *skb;
		struct sxrc_pkt p;

		spin_lock_bh(&w->backlog.lock);
		skb = __skb_dequeue(&w->backlog);
		if (!skb)
			w->bl_pending = false;
		spin_unlock_bh(&w->backlog.lock);
		if (!skb)
			return;
		/* Checked before: parsed again for its pointers. */
		if (sxrc_wire_parse(skb, &p))
			sxrc_wire_deliver_pkt(dev, qp, &p);
		else
			sxrc_wire_drop(dev);
		kfree_skb(skb);
		if (!--budget) {
			queue_work(sxrc_wq, &w->bl_work);
			return;
		}
		cond_resched();
	}
}

/*
 * May softirq handle @skb?  SEND and WRITE requests to RC and UC QPs,
 * the packets that complete receives, whose responses are headers only;
 * and ACKs to RC QPs, which complete sends.  The rest (READ and atomic
 * requests and responses, UD, XRC) goes to the worker, as do the
 * packets softirq gives back (wire_req.c, wire_resp.c).
 */
static bool sxrc_wire_softirq_ok(struct sk_buff *skb)
{
	u8 *bth = (u8 *)(udp_hdr(skb) + 1);
	u8 tp, op;

	if (bth >= skb_tail_pointer(skb))
		return false;
	tp = bth[0] & SXRC_TP_MASK;
	op = bth[0] & ~SXRC_TP_MASK;
	return (tp == SXRC_TP_RC || tp == SXRC_TP_UC) &&
	       (op <= SXRC_OP_WRITE_ONLY_IMM ||
		(tp == SXRC_TP_RC && op == SXRC_OP_ACK));
}

static void sxrc_wire_rx_work(struct work_struct *work)
{
	struct sxrc_dev *dev = container_of(work, struct sxrc_dev, wire_rx);
	struct sk_buff_head *q = &dev->wire_rxq;
	struct sk_buff *skb;
	u32 budget = 256;
	bool more;

	spin_lock_bh(&q->lock);
	/* Softirq has one: it queues this work again when done. */
	if (dev->wire_rx_owned) {
		spin_unlock_bh(&q->lock);
		return;
	}
	dev->wire_rx_owned = true;
	while (budget-- && (skb = sxrc_wire_rxq_pop(dev))) {
		spin_unlock_bh(&q->lock);
		sxrc_wire_count(dev, SXRC_WIRE_RX);
		if (sxrc_wire_dispatch(dev, skb) != SXRC_RX_KEPT)
			kfree_skb(skb);
		cond_resched();
		spin_lock_bh(&q->lock);
	}
	dev->wire_rx_owned = false;
	more = !skb_queue_empty(q);
	spin_unlock_bh(&q->lock);
	if (more)
		queue_work(sxrc_rx_wq, &dev->wire_rx);
}

/* Whether @dev's receive queue takes @skb; its lock held. */
static bool sxrc_wire_rxq_room(struct sxrc_dev *dev, struct sk_buff *skb)
{
	return skb_queue_len(&dev->wire_rxq) < SXRC_WIRE_RXQ_MAX &&
	       dev->wire_rxq_bytes + skb->truesize <= SXRC_WIRE_RXQ_BYTES;
}

/**
 * sxrc_wire_loopback - a packet of this host to one of its own links
 * @net: the namespace of the link that sends it
 * @skb: the packet, its IP and UDP headers in place, no route attached
 *
 * Delivered as rxe loops such a packet back: into the receive queue of
 * the link that holds the destination address, as if its netdev had
 * received it.  Through the IP stack it would arrive on the loopback
 * interface, which is no link's, and be dropped (sxrc_wire_encap_rcv()).
 * Only the CM sends such packets: the data path copies between QPs of
 * this host itself (sxrc_local_path).  Never waits; consumes @skb.
 *
 * Return: 0, or -ENOBUFS when no link holds the address or its queue
 * is full (the packet is then dropped, as the network would).
 */
int sxrc_wire_loopback(struct net *net, struct sk_buff *skb)
{
	struct sk_buff_head *q;
	struct net_device *ndev;
	struct sxrc_dev *dev;
	u8 dgid[16];

	if (skb->protocol == htons(ETH_P_IP))
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid);
	else
		memcpy(dgid, &ipv6_hdr(skb)->daddr, sizeof(dgid));
	rcu_read_lock();
	dev = sxrc_dev_by_gid(dgid, net);
	ndev = dev ? rcu_dereference(dev->ndev) : NULL;
	if (!ndev || skb_linearize(skb))
		goto drop;
	skb->dev = ndev;
	q = &dev->wire_rxq;
	spin_lock_bh(&q->lock);
	if (!sxrc_wire_rxq_room(dev, skb)) {
		spin_unlock_bh(&q->lock);
		goto drop;
	}
	__skb_queue_tail(q, skb);
	dev->wire_rxq_bytes += skb->truesize;
	spin_unlock_bh(&q->lock);
	queue_work(sxrc_rx_wq, &dev->wire_rx);
	rcu_read_unlock();
	return 0;

drop:
	if (ndev)
		sxrc_wire_drop(dev);
	rcu_read_unlock();
	kfree_skb(skb);
	return -ENOBUFS;
}

/*
 * A RoCEv2 packet in softirq context: handled here if it may be and no
 * other packet of its device waits or is being handled, else to the
 * device's queue.
 */
static int sxrc_wire_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct sk_buff_head *q;
	struct sxrc_dev *dev;
	bool here = false;

	rcu_read_lock();
	dev = sxrc_dev_by_ndev(skb->dev);
	if (!dev || skb->len > SXRC_WIRE_PKT_MAX || skb_linearize(skb))
		goto drop;
	q = &dev->wire_rxq;
	spin_lock(&q->lock);
	if (!sxrc_wire_rxq_room(dev, skb)) {
		spin_unlock(&q->lock);
		goto drop;
	}
	if (!dev->wire_rx_owned && skb_queue_empty(q) &&
	    sxrc_wire_softirq_ok(skb)) {
		dev->wire_rx_owned = true;
		here = true;
	} else {
		__skb_queue_tail(q, skb);
		dev->wire_rxq_bytes += skb->truesize;
	}
	spin_unlock(&q->lock);

	if (here) {
		if (sxrc_wire_dispatch(dev, skb) == SXRC_RX_DONE) {
			sxrc_wire_count(dev, SXRC_WIRE_RX);
			sxrc_wire_count(dev, SXRC_WIRE_RX_SOFTIRQ);
			kfree_skb(skb);
			skb = NULL;
		}
		spin_lock(&q->lock);
		dev->wire_rx_owned = false;
		/* Ahead of those that came meanwhile. */
		if (skb) {
			__skb_queue_head(q, skb);
			dev->wire_rxq_bytes += skb->truesize;
		}
		here = !skb_queue_empty(q);
		spin_unlock(&q->lock);
		if (!here)
			goto out;
	}
	queue_work(sxrc_rx_wq, &dev->wire_rx);
out:
	rcu_read_unlock();
	return 0;
drop:
	if (dev)
		sxrc_wire_drop(dev);
	rcu_read_unlock();
	kfree_skb(skb);
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
	int ret;

	ASSERT_RTNL();
	skb_queue_head_init(&dev->wire_rxq);
	dev->wire_rxq_bytes = 0;
	INIT_WORK(&dev->wire_rx, sxrc_wire_rx_work);
	dev->wire_rs = kzalloc(sizeof(*dev->wire_rs), GFP_KERNEL);
	if (!dev->wire_rs)
		return -ENOMEM;
	ret = sxrc_cm_start(dev);
	if (ret)
		goto err_rs;
	ws = sxrc_wire_sock_get(dev_net(ndev));
	if (IS_ERR(ws)) {
		ret = PTR_ERR(ws);
		goto err_cm;
	}
	dev->wire_sock = ws;
	return 0;

err_cm:
	sxrc_cm_stop(dev);
	sxrc_cm_free(dev);
err_rs:
	kfree(dev->wire_rs);
	dev->wire_rs = NULL;
	return ret;
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
	dev->wire_rxq_bytes = 0;
	sxrc_wire_sock_put(dev->wire_sock);
	dev->wire_sock = NULL;
	sxrc_cm_stop(dev);
	kfree(dev->wire_rs);
	dev->wire_rs = NULL;
}
