/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: a device, its object classes and counters, and the records of
 * the users holding objects on it.
 */
#ifndef SXRC_DEV_H
#define SXRC_DEV_H

#include <linux/atomic.h>
#include <linux/hashtable.h>
#include <linux/kref.h>
#include <linux/miscdevice.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "sxrc_param.h"

/* Object classes with a per-device limit and a live count. */
enum sxrc_obj_type {
	SXRC_TYPE_PD,
	SXRC_TYPE_MR,
	SXRC_TYPE_CQ,
	SXRC_TYPE_QP,
	SXRC_TYPE_SRQ,
	SXRC_TYPE_AH,
	SXRC_TYPE_XRCD,		/* a context's open of an XRC domain */
	SXRC_TYPE_XRC_REG,	/* a context's registration with an XRC_RECV QP */
	SXRC_TYPE_MW,
	SXRC_TYPE_CM_ID,	/* a CM id of a link (cm.c) */
	SXRC_NUM_TYPES,
};

/**
 * struct sxrc_type_info - the facts of one object class (sxrc_types[])
 * @name: as the module parameters and the resource view spell it
 * @destroy_rank: a closing context destroys lower ranks first
 * @limit: the per-device limit's module parameter; NULL: none
 * @cap: the most the class's number space holds
 * @user_limit: the per-user limit's module parameter; NULL: none
 */
struct sxrc_type_info {
	const char *name;
	u8 destroy_rank;
	const unsigned int *limit;
	u32 cap;
	const unsigned int *user_limit;
};

/**
 * enum sxrc_stat - data path counters, kept per QP and per device
 * @SXRC_STAT_SEND_WQES: send WQEs completed successfully
 * @SXRC_STAT_SEND_BYTES: bytes they moved
 * @SXRC_STAT_RECV_WQES: receive WQEs completed successfully
 * @SXRC_STAT_RECV_BYTES: bytes they received
 * @SXRC_STAT_RNR_RETRIES: RNR NAKs waited out
 * @SXRC_STAT_RETRIES: lost messages (peer absent or not ready) waited out
 * @SXRC_STAT_ERRORS: transitions to the error state
 * @SXRC_STAT_RECV_SHARED: receive WQEs of an XRC SRQ completed through an
 *	XRC receive QP that another context created: the sharing XRC is for
 * @SXRC_NUM_STATS: how many
 */
enum sxrc_stat {
	SXRC_STAT_SEND_WQES,
	SXRC_STAT_SEND_BYTES,
	SXRC_STAT_RECV_WQES,
	SXRC_STAT_RECV_BYTES,
	SXRC_STAT_RNR_RETRIES,
	SXRC_STAT_RETRIES,
	SXRC_STAT_ERRORS,
	SXRC_STAT_RECV_SHARED,
	SXRC_NUM_STATS,
};

struct sxrc_stats {
	atomic64_t c[SXRC_NUM_STATS];
};

/**
 * enum sxrc_wire_stat - a link's packet counters (sysfs counters/wire_*)
 * @SXRC_WIRE_TX: packets sent
 * @SXRC_WIRE_RX: packets received for the link
 * @SXRC_WIRE_RX_DROPPED: of those, dropped without any effect: malformed,
 *	bad ICRC, for no QP or one that does not take them (type, state,
 *	source address, Q_Key, no receive WQE for a datagram), requests
 *	UC drops, RC requests ahead of sequence once their NAK went,
 *	duplicates that cannot be answered, responses no request awaits,
 *	or the queue full
 * @SXRC_WIRE_RETRANSMITS: times a requester went back to resend
 * @SXRC_WIRE_TX_LENT: of the packets sent, those whose payload went out
 *	from the pages of its region, uncopied
 * @SXRC_WIRE_RX_SOFTIRQ: of the packets received, those handled in the
 *	socket's softirq rather than by the receive worker
 * @SXRC_WIRE_QPS: not a count of events: the QPs of the device that hold
 *	wire state now (made when a UD QP, or a connected QP whose peer is
 *	on another host, enters RTR, in its owner's context; never by a
 *	packet)
 * @SXRC_WIRE_CM_RX: MADs QP1 took (cm_mad.c, cm.c): answered, or moved
 *	a connection on
 * @SXRC_WIRE_CM_TX: MADs QP1 sent: answers, requests, their resends
 * @SXRC_WIRE_CM_DROPPED: packets for QP1 dropped without any effect: not
 *	a CM MAD of a RoCEv2 host, about a connection this host does not
 *	have or in a state that does not take it, a REQ past a listener's
 *	backlog (also counted in @SXRC_WIRE_RX_DROPPED)
 * @SXRC_WIRE_CM_RETRIES: requests (REQ, REP, DREQ, SIDR_REQ) resent
 *	because their answer did not come in time
 * @SXRC_WIRE_CM_TIMEOUTS: requests given up after their last resend
 *	(SXRC_CM_EVENT_TIMEOUT)
 * @SXRC_WIRE_CM_UNLISTENED: REQs and SIDR_REQs for a service ID nobody
 *	listens on, answered at once (REJ "invalid service ID", SIDR_REP
 *	"unsupported")
 * @SXRC_WIRE_TX_LOOPBACK: of the packets sent, those to an address of a
 *	link of this host, put in its receive queue without the network
 *	(the CM's to its own host: sxrc_wire_loopback())
 * @SXRC_WIRE_NUM_STATS: how many
 */
enum sxrc_wire_stat {
	SXRC_WIRE_TX,
	SXRC_WIRE_RX,
	SXRC_WIRE_RX_DROPPED,
	SXRC_WIRE_RETRANSMITS,
	SXRC_WIRE_TX_LENT,
	SXRC_WIRE_RX_SOFTIRQ,
	SXRC_WIRE_QPS,
	SXRC_WIRE_CM_RX,
	SXRC_WIRE_CM_TX,
	SXRC_WIRE_CM_DROPPED,
	SXRC_WIRE_CM_RETRIES,
	SXRC_WIRE_CM_TIMEOUTS,
	SXRC_WIRE_CM_UNLISTENED,
	SXRC_WIRE_TX_LOOPBACK,
	SXRC_WIRE_NUM_STATS,
};

/**
 * struct sxrc_sqpoll - a device's send queue polling thread (sqpoll.c)
 * @lock: protects @qps, @sleeping, @backoff, and sxrc_qp.sqpoll_entry and
 *	sxrc_qp.sqpoll_seen of the QPs on @qps; a spinlock taken alone
 * @qps: the QPs created with SXRC_CREATE_QP_SQPOLL and not destroyed
 *	yet, each holding a reference (sxrc_qp.sqpoll_entry)
 * @task: the thread, from the device's creation to its removal
 * @sleeping: the thread sleeps, or is about to: the polled rings say
 *	SXRC_RING_POLL_WAKEUP, and a doorbell on a polled QP wakes it
 * @backoff: with @sleeping: the thread stepped aside for a while (its
 *	CPU was wanted) and a doorbell does not wake it
 */
struct sxrc_sqpoll {
	spinlock_t lock;	/* see above */
	struct list_head qps;
	struct task_struct *task;
	bool sleeping;
	bool backoff;
};

/**
 * struct sxrc_dev - one softxrc device, /dev/infiniband/softxrcN
 * @misc: the character device; its this_device carries the sysfs files
 * @index: N
 * @name: "softxrcN"
 * @nodename: "infiniband/softxrcN", its node under /dev
 * @node_guid: node GUID, network byte order; GID 0 is fe80::@node_guid
 * @port_state: SXRC_PORT_ACTIVE or SXRC_PORT_DOWN, set through sysfs
 * @lock: protects @ctx_list and @ctx_next
 * @ctx_list: open user contexts, for device-wide async events and the
 *	resource view; in increasing sxrc_ctx.id order
 * @ctx_next: id of the next context opened
 * @nobj: live objects per enum sxrc_obj_type, for limits and sysfs
 * @nctx: open contexts
 * @mr_pages: pages pinned by all MRs of the device
 * @odp_regions: on-demand paging regions of the device: while there are
 *	any, its polling thread leaves send queues to their work items,
 *	whose copies may wait for a page fault
 * @mr_runs: contiguous runs those pages make up (the page list length)
 * @mrs: key index -> struct sxrc_mr *, or a struct sxrc_mw * tagged
 *	SXRC_KEY_MW (xa_tag_pointer()), for keys from any context
 * @mr_next: where the cyclic MR index allocation goes on
 * @qps: QP number -> struct sxrc_qp *
 * @qp_next: where the cyclic QPN allocation goes on
 * @srqs: SRQ number -> struct sxrc_srq *
 * @srq_next: where the cyclic SRQN allocation goes on
 * @mcast_lock: protects @mcast_list and @mcast_groups
 * @mcast_list: multicast attachments (struct sxrc_mcast)
 * @mcast_groups: distinct groups (GIDs) on @mcast_list
 * @stats: the device's data path counters (sums over its QPs)
 * @xrcd_mutex: protects @xrcds and @nxrcd; makes XRC domain lookup and
 *	creation atomic
 * @xrcds: XRC domains (struct sxrc_xrcd)
 * @nxrcd: XRC domains alive
 * @users_lock: protects @users, and each sxrc_user's reference count
 *	reaching zero (sxrc_user_put() removes the record under it); taken
 *	last, after any other lock, since a context may be freed anywhere
 * @users: struct sxrc_user of each user with a context on the device,
 *	hashed by uid
 * @debugfs: the device's debugfs directory, or an error pointer
 * @ref: the device table's reference and one per context
 * @rcu: frees the device after data path readers of the table left
 * @dead: removed (sxrc_dev_remove()): every call but a destroy fails
 * @ndev: a link's network device (a reference, @ndev_tracker); NULL for
 *	a device without.  Written under RTNL, read under RCU or RTNL
 * @ndev_tracker: the reference's tracker
 * @ndev_mtu: a link's path MTU, an IBV_MTU_* value from its MTU; RTNL
 *	writes, readers READ_ONCE()
 * @ndev_speed: a link's interface speed in Mb/s as ethtool reports it
 *	(0: unknown), which the port's rate follows; RTNL writes, readers
 *	READ_ONCE()
 * @gids: a link's GID table as its users last heard of it (a GID_CHANGE
 *	event when it changes, link.c); under sxrc_devs_mutex
 * @ngids: entries of @gids
 * @sqpoll: the send queue polling thread, from the device's creation to
 *	its removal
 * @wire_rxq: a link's received packets waiting for @wire_rx; its lock,
 *	taken with BH off, also protects @wire_rx_owned and @wire_rxq_bytes
 * @wire_rxq_bytes: the memory (truesize) of the packets on @wire_rxq
 * @wire_rx_owned: a packet of the link is being handled, by @wire_rx or
 *	in softirq: nobody else starts one (wire.c)
 * @wire_rx: the link's receive worker
 * @wire_sock: the namespace's RoCEv2 UDP socket a link receives on
 * @wire_rs: the responder's scratch space, the receive worker's
 * @wire_cm: QP1 and the communication manager (cm.h): made by
 *	sxrc_wire_start(), stops sending with sxrc_wire_stop(), freed with
 *	the device (its ids are the contexts'); NULL on a device without a
 *	link.  Its own mutex protects it
 * @wire_stats: a link's packet counters
 */
struct sxrc_dev {
	struct miscdevice misc;
	u32 index;
	char name[16];
	char nodename[32];
	__be64 node_guid;
	u32 port_state;
	spinlock_t lock;		/* protects ctx_list, ctx_next */
	struct list_head ctx_list;
	u64 ctx_next;
	atomic_t nobj[SXRC_NUM_TYPES];
	atomic_t nctx;
	atomic64_t mr_pages;
	atomic_t odp_regions;
	atomic64_t mr_runs;
	struct xarray mrs;
	u32 mr_next;
	struct xarray qps;
	u32 qp_next;
	struct xarray srqs;
	u32 srq_next;
	struct mutex mcast_lock;	/* protects mcast_list, mcast_groups */
	struct list_head mcast_list;
	u32 mcast_groups;
	struct sxrc_stats stats;
	struct mutex xrcd_mutex;	/* see above */
	struct list_head xrcds;
	u32 nxrcd;
	spinlock_t users_lock;		/* see above */
	DECLARE_HASHTABLE(users, 6);
	struct dentry *debugfs;
	struct kref ref;
	struct rcu_head rcu;
	bool dead;
	struct net_device __rcu *ndev;
	netdevice_tracker ndev_tracker;
	u32 ndev_mtu;
	u32 ndev_speed;
	u8 gids[SXRC_LINK_GID_TBL_LEN][16];
	u32 ngids;
	struct sxrc_sqpoll sqpoll;
	struct sk_buff_head wire_rxq;
	u32 wire_rxq_bytes;
	bool wire_rx_owned;
	struct work_struct wire_rx;
	struct sxrc_wire_sock *wire_sock;
	struct sxrc_scratch *wire_rs;
	struct sxrc_cm_port *wire_cm;
	atomic64_t wire_stats[SXRC_WIRE_NUM_STATS];
};

/**
 * struct sxrc_user - what one user holds on one device, for the per-user
 *	limits (module parameters max_*_per_user)
 * @ref: one reference per context the user opened, dropped when the
 *	context is freed: an XRC receive QP that outlives its creator's
 *	file keeps the context, so it stays counted here until torn down
 * @dev: the device
 * @uid: the effective uid of the contexts' openers
 * @node: in dev->users, under dev->users_lock
 * @nobj: live objects per enum sxrc_obj_type created by those contexts
 */
struct sxrc_user {
	struct kref ref;
	struct sxrc_dev *dev;
	kuid_t uid;
	struct hlist_node node;
	atomic_t nobj[SXRC_NUM_TYPES];
};

#endif /* SXRC_DEV_H */
