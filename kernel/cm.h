/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the communication manager of a link (QP1): what cm_mad.c
 * (the MADs), cm.c (ids, the state machine, timers) and cm_chan.c (the
 * event channels) share.
 */
#ifndef SXRC_CM_H
#define SXRC_CM_H

#include <linux/hashtable.h>
#include <linux/mutex.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include "compat.h"
#include "sxrc.h"
#include "wire.h"

/* The MAD header (IBA 13.4.3), as the CM fills it. */
#define SXRC_MAD_BASE_VERSION	1
#define SXRC_MAD_CLASS_CM	0x07
#define SXRC_MAD_CM_VERSION	2
#define SXRC_MAD_METHOD_SEND	0x03
#define SXRC_MAD_HDR_LEN	24

/* Offsets in a MAD: the header's fields, then the CM message's. */
#define SXRC_MAD_TID		8
#define SXRC_MAD_ATTR_ID	16
#define SXRC_CM_MSG(off)	(SXRC_MAD_HDR_LEN + (off))

/* Where each message's private data starts (IBA tables 106-121). */
#define SXRC_CM_REQ_PD_OFF	140
#define SXRC_CM_MRA_PD_OFF	10
#define SXRC_CM_REJ_PD_OFF	84
#define SXRC_CM_REP_PD_OFF	36
#define SXRC_CM_RTU_PD_OFF	8
#define SXRC_CM_DREQ_PD_OFF	12
#define SXRC_CM_DREP_PD_OFF	8
#define SXRC_CM_SREQ_PD_OFF	16
#define SXRC_CM_SREP_PD_OFF	96

/* REJ and MRA: the message they are about (top two bits). */
#define SXRC_CM_MSGD_REQ	0
#define SXRC_CM_MSGD_REP	1
#define SXRC_CM_MSGD_OTHER	2

/* SIDR_REP status: the service ID is not supported; rejected. */
#define SXRC_CM_SIDR_UNSUPPORTED	1
#define SXRC_CM_SIDR_REJECT		2

/* What the module waits for an answer, at least and at most (ms). */
#define SXRC_CM_MIN_WAIT_MS	100
#define SXRC_CM_MAX_WAIT_MS	60000
/* A destroyed id's comm ID is not reused for this long (ms). */
#define SXRC_CM_TIMEWAIT_MS	1000
/* The MRA the module answers a repeated REQ with: 4.096 us << 20. */
#define SXRC_CM_AUTO_MRA	20

/**
 * enum sxrc_cm_state - where a CM id is (IBA figure 138, simplified)
 * @SXRC_CMS_IDLE: made, nothing sent or received
 * @SXRC_CMS_LISTEN: a listener
 * @SXRC_CMS_REQ_SENT: active: the REQ went, the REP is awaited (timer)
 * @SXRC_CMS_REQ_RCVD: passive: the REQ is the application's to answer
 * @SXRC_CMS_REP_SENT: passive: the REP went, the RTU is awaited (timer)
 * @SXRC_CMS_REP_RCVD: active: the REP is the application's to answer
 * @SXRC_CMS_ESTABLISHED: connected
 * @SXRC_CMS_DREQ_SENT: the DREQ went, the DREP is awaited (timer)
 * @SXRC_CMS_SIDR_REQ_SENT: active: the SIDR_REQ went (timer)
 * @SXRC_CMS_SIDR_REQ_RCVD: passive: the application's to answer
 * @SXRC_CMS_DONE: over (rejected, disconnected, timed out, answered):
 *	kept until destroyed, answering only repeats of what ended it
 * @SXRC_CMS_DEAD: destroyed; no timer, no table holds it
 */
enum sxrc_cm_state {
	SXRC_CMS_IDLE,
	SXRC_CMS_LISTEN,
	SXRC_CMS_REQ_SENT,
	SXRC_CMS_REQ_RCVD,
	SXRC_CMS_REP_SENT,
	SXRC_CMS_REP_RCVD,
	SXRC_CMS_ESTABLISHED,
	SXRC_CMS_DREQ_SENT,
	SXRC_CMS_SIDR_REQ_SENT,
	SXRC_CMS_SIDR_REQ_RCVD,
	SXRC_CMS_DONE,
	SXRC_CMS_DEAD,
};

/**
 * struct sxrc_cm_port - QP1 of a link, and its connection manager
 * @mutex: protects everything below but @sport, @hdr and @hlen
 *	(constant), the state of every id of the link (struct sxrc_cm_id),
 *	and sxrc_ctx.cm_closed of the link's contexts.  Taken by the
 *	receive worker, by the CM methods, by the ids' timers and by a
 *	closing context; never held across a user copy or a wait for
 *	anything but memory.  Outside it: ctx->objects' lock, a channel's
 *	lock (its queue's, evf.q.lock), the route's lock, in that order.
 * @stopped: the link's wire is gone (sxrc_cm_stop()): nothing is sent
 * @route: the route MADs took last (a leaf lock of its own)
 * @sport: the UDP source port of QP1's packets
 * @hdr: the BTH and DETH of every MAD (QP1 to QP1), made once
 * @hlen: their length
 * @mad: the MAD being built
 * @ids: local comm ID -> struct sxrc_cm_id *, or a time-wait record
 *	(xa_tag_pointer(struct sxrc_cm_tw *, 1))
 * @timewait: the time-wait records, oldest first
 * @remote: passive ids by the REQ's (or SIDR_REQ's) comm ID
 * @listeners: listeners by service ID
 */
struct sxrc_cm_port {
	struct mutex mutex;	/* see above */
	bool stopped;
	struct sxrc_wire_route route;
	u16 sport;
	u8 hdr[SXRC_BTH_LEN + SXRC_DETH_LEN];
	u32 hlen;
	u8 mad[SXRC_MAD_LEN];
	struct xarray ids;
	struct list_head timewait;
	DECLARE_HASHTABLE(remote, 8);
	DECLARE_HASHTABLE(listeners, 6);
};

/**
 * struct sxrc_cm_tw - a comm ID in time wait
 * @entry: on sxrc_cm_port.timewait
 * @comm_id: the ID
 * @expires: when it may be used again (jiffies)
 */
struct sxrc_cm_tw {
	struct list_head entry;
	u32 comm_id;
	unsigned long expires;
};

/**
 * struct sxrc_cm_chan - a CM event channel (cm_chan.c), a file of its own
 * @evf: its file (evq.c); its queue holds struct sxrc_cm_qev, oldest
 *	first; the file holds a reference and so does each id bound to the
 *	channel; the queue's lock, a leaf, is taken under
 *	sxrc_cm_port.mutex or alone
 * @nevents: the events queued, under @evf.q.lock
 */
struct sxrc_cm_chan {
	struct sxrc_evfile evf;
	u32 nevents;
};

/**
 * struct sxrc_cm_qev - an event queued on a channel
 * @entry: on sxrc_cm_chan.evf.q.events
 * @id: the id it is about, compared only (its destroy takes it back)
 * @ev: the record read() returns
 */
struct sxrc_cm_qev {
	struct list_head entry;
	struct sxrc_cm_id *id;
	struct sxrc_cm_event ev;
};

/**
 * struct sxrc_cm_id - a CM id: a handle of type SXRC_TYPE_CM_ID
 * @obj: the object header
 * @cm: its link's CM
 * @chan: its channel (a reference)
 * @state: enum sxrc_cm_state
 * @sidr: a SIDR exchange rather than a connection
 * @mra_seen: an MRA was reported in this state already
 * @mra_sent: the application sent an MRA for the REQ it was given
 * @timeout_ms: how long its timer waits for an answer
 * @retries: resends left of the message @mad holds
 * @max_retries: what a new request starts with
 * @mra_timeout: the MRA answered to a repeated REQ (5 bits)
 * @transport: SXRC_CM_TRANSPORT_* of its connection
 * @local_id: its comm ID (0: none yet)
 * @remote_id: the peer's comm ID (0: not known yet)
 * @local_qpn: the QP it connects (REQ, REP)
 * @remote_qpn: the peer's QP
 * @service_id: a listener's; a connection's REQ or SIDR_REQ's
 * @backlog: a listener: ids its REQs may have waiting at a time
 * @pending: a listener: ids its REQs have waiting now
 * @listener: a passive id the application has not answered yet: the
 *	listener whose backlog it counts in (a reference); else NULL
 * @sgid_index: the link's GID its MADs go from
 * @gid: the peer's GID
 * @local_gid: the link's GID it uses
 * @tid: the transaction ID of the request it answers or sent last
 * @sent: the attribute ID of the message in @mad
 * @node: a passive id, in sxrc_cm_port.remote; a listener, in
 *	sxrc_cm_port.listeners
 * @hashed: @node is on a list
 * @timer: resends @mad until answered (on sxrc_wq)
 * @mad: the last request or answer sent, for resends and repeats
 *
 * Every field but @obj is protected by @cm's mutex.
 */
struct sxrc_cm_id {
	struct sxrc_obj obj;
	struct sxrc_cm_port *cm;
	struct sxrc_cm_chan *chan;
	u8 state;
	bool sidr;
	bool mra_seen;
	bool mra_sent;
	u32 timeout_ms;
	u8 retries;
	u8 max_retries;
	u8 mra_timeout;
	u8 transport;
	u32 local_id;
	u32 remote_id;
	u32 local_qpn;
	u32 remote_qpn;
	u64 service_id;
	u32 backlog;
	u32 pending;
	struct sxrc_cm_id *listener;
	int sgid_index;
	u8 gid[16];
	u8 local_gid[16];
	u64 tid;
	u16 sent;
	struct hlist_node node;
	bool hashed;
	struct delayed_work timer;
	u8 mad[SXRC_MAD_LEN];
};

static inline struct sxrc_cm_id *to_sxrc_cm_id(struct sxrc_obj *obj)
{
	return container_of(obj, struct sxrc_cm_id, obj);
}

/* cm_mad.c: the MADs */
u8 *sxrc_cm_mad_start(u8 *m, u16 attr, u64 tid);
u16 sxrc_cm_valid(const struct sxrc_pkt *p);
int sxrc_cm_xmit(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
		 int sgid_index, const u8 *dgid, u8 *mad);
void sxrc_cm_build_req(struct sxrc_cm_id *id, u8 *m,
		       const struct sxrc_cm_conn *c, __be64 guid);
void sxrc_cm_parse_req(const u8 *m, struct sxrc_cm_conn *c);
bool sxrc_cm_req_ok(const u8 *m);
void sxrc_cm_build_rep(struct sxrc_cm_id *id, u8 *m,
		       const struct sxrc_cm_conn *c, __be64 guid);
void sxrc_cm_parse_rep(const u8 *m, u8 transport, struct sxrc_cm_conn *c);

static inline u32 sxrc_cm_get24(const u8 *p)
{
	return get_unaligned_be32(p) >> 8;
}

static inline void sxrc_cm_put24(u32 v, u8 *p)
{
	p[0] = v >> 16;
	p[1] = v >> 8;
	p[2] = v;
}

/* cm.c: the state machine; cm_ops.c: the ids' life */
extern const struct sxrc_obj_ops sxrc_cm_id_ops;
bool sxrc_cm_recv(struct sxrc_dev *dev, struct sxrc_cm_port *cm,
		  const struct sxrc_pkt *p, u16 attr);
void sxrc_cm_port_init(struct sxrc_cm_port *cm);
u32 sxrc_cm_wait_ms(u8 exp);
void sxrc_cm_start_timer(struct sxrc_cm_id *id);
void sxrc_cm_timer_fn(struct work_struct *work);
int sxrc_cm_alloc_comm_id(struct sxrc_cm_port *cm, struct sxrc_cm_id *id);
void sxrc_cm_free_comm_id(struct sxrc_cm_port *cm, struct sxrc_cm_id *id,
			  bool timewait);
struct sxrc_cm_id *sxrc_cm_find_listener(struct sxrc_cm_port *cm, u64 sid);
void sxrc_cm_unpend(struct sxrc_cm_id *id);
void sxrc_cm_unhash(struct sxrc_cm_id *id);
struct sxrc_cm_qev *sxrc_cm_ev(struct sxrc_cm_id *id, u32 type, const u8 *m,
			       u32 pd_off, u32 pd_len);
void sxrc_cm_report(struct sxrc_cm_id *id, struct sxrc_cm_qev *e);
struct sxrc_cm_id *sxrc_cm_id_alloc(struct sxrc_cm_port *cm,
				    struct sxrc_cm_chan *chan);

/* cm_ops.c */
void sxrc_cm_goodbye(struct sxrc_dev *dev, struct sxrc_cm_id *id);

/* cm_chan.c */
struct sxrc_cm_chan *sxrc_cm_chan_get(struct sxrc_dev *dev, int fd);
void sxrc_cm_chan_put(struct sxrc_cm_chan *ch);
bool sxrc_cm_chan_full(struct sxrc_cm_chan *ch);
bool sxrc_cm_chan_queue(struct sxrc_cm_chan *ch, struct sxrc_cm_qev *e,
			bool limited);
void sxrc_cm_chan_purge(struct sxrc_cm_chan *ch, struct sxrc_cm_id *id);

#endif /* SXRC_CM_H */
