/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc connection manager: the private half of the drop-in
 * librdmacm.so.1.
 *
 * softxrc moves data only between processes of one host, so connection
 * management is host-local: a listening rdma_cm_id is an abstract
 * AF_UNIX SOCK_SEQPACKET socket named after its device, port space,
 * address and port; a connection is one accepted socket pair carrying
 * the CM messages below (REQ, REP, RTU, REJ, DREQ, DREP).  The QPs
 * themselves are connected with ordinary ibv_modify_qp() calls, and the
 * kernel checks them as it checks any other.
 *
 * An id whose address belongs to one of the host's other RDMA devices
 * is a proxy for an id of the system's librdmacm (sys.c).  An id whose
 * address belongs to a softxrc link (a RoCEv2 device on a netdev) and
 * whose peer is another host speaks the IB CM through the module's
 * communication manager, SXRC_OBJ_CM (link.c, linkev.c).
 *
 * Locking: one mutex, sxcm_lock, protects every id, channel, event and
 * the watch list, and is held across every call into the system's
 * librdmacm; sxcm_cond is broadcast whenever an event is queued or
 * acknowledged.  A progress thread (rendezvous.c) waits in epoll_wait()
 * with the lock dropped and handles socket and system channel activity
 * under it, so that a channel's fd is readable exactly when an event is
 * queued.
 */
#ifndef SXCM_H
#define SXCM_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <rdma/rdma_cma.h>
#include <rdma/softxrc-abi.h>

#define SXCM_EXPORT	__attribute__((visibility("default")))

/* Private data limits of rdma_cm over InfiniBand (bytes). */
#define SXCM_REQ_PDATA	56
#define SXCM_REP_PDATA	196
#define SXCM_REJ_PDATA	148
#define SXCM_RTU_PDATA	224
#define SXCM_SIDR_REQ_PDATA	180	/* UD: SIDR REQ */
#define SXCM_SIDR_REP_PDATA	136	/* UD: SIDR REP */
#define SXCM_MAX_PDATA	224
/* rdma_cm's cma_hdr, first in a REQ's or SIDR_REQ's private data. */
#define SXCM_CMA_HDR	36

/* IB CM reject reasons reported as RDMA_CM_EVENT_REJECTED status. */
#define SXCM_REJ_INVALID_SID	8	/* nobody listens there */
#define SXCM_REJ_CONSUMER	28	/* rdma_reject() */
#define SXCM_REJ_VENDOR		35	/* rdma_reject_ece() */

/* A tiny intrusive list. */
struct sxcm_list {
	struct sxcm_list *next, *prev;
};

static inline void sxcm_list_init(struct sxcm_list *l)
{
	l->next = l->prev = l;
}

static inline bool sxcm_list_empty(const struct sxcm_list *l)
{
	return l->next == l;
}

static inline void sxcm_list_add_tail(struct sxcm_list *n,
				      struct sxcm_list *head)
{
	n->prev = head->prev;
	n->next = head;
	head->prev->next = n;
	head->prev = n;
}

static inline void sxcm_list_del(struct sxcm_list *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->next = n->prev = n;
}

#define sxcm_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - __builtin_offsetof(type, member)))

/* ------------------------------------------------------------ messages */

enum sxcm_msg_type {
	SXCM_REQ = 1,
	SXCM_REP,
	SXCM_RTU,
	SXCM_REJ,
	SXCM_DREQ,
	SXCM_DREP,
};

#define SXCM_MAGIC	0x4d435853u	/* "SXCM" */
#define SXCM_VERSION	1

/* An address as carried by a message: family, port (network order), 16 bytes. */
struct sxcm_msg_addr {
	uint16_t family;
	uint16_t port;
	uint32_t scope_id;
	uint8_t addr[16];
};

/*
 * One CM message: a fixed header, then pdata_len bytes of private data.
 * Every field is checked on receipt (sxcm_msg_check()); the peer is
 * another process and may be anything.
 */
struct sxcm_msg {
	uint32_t magic;
	uint8_t version;
	uint8_t type;
	uint8_t qp_type;		/* REQ: IBV_QPT_RC, _XRC_SEND or _UD (SIDR) */
	uint8_t pdata_len;
	uint32_t qpn;			/* REQ, REP */
	uint32_t psn;			/* REQ, REP: starting send PSN */
	uint8_t responder_resources;
	uint8_t initiator_depth;
	uint8_t retry_count;
	uint8_t rnr_retry_count;
	uint8_t flow_control;
	uint8_t srq;
	uint16_t reason;		/* REJ */
	uint32_t qkey;			/* UD REQ, REP */
	uint32_t reserved;		/* 0 */
	struct sxcm_msg_addr src;	/* REQ: the connector's address */
	struct sxcm_msg_addr dst;	/* REQ: the address it connected to */
	uint8_t pdata[SXCM_MAX_PDATA];
};

#define SXCM_MSG_HDR	__builtin_offsetof(struct sxcm_msg, pdata)

/* ------------------------------------------------------------- objects */

enum sxcm_watch_kind {
	SXCM_WATCH_CONN,	/* an id's connection or listening socket */
	SXCM_WATCH_SYS,		/* a channel's twin in the system library */
	SXCM_WATCH_LINK,	/* a link's CM channel (struct sxcm_link) */
};

/* An fd the progress thread watches; token identifies it in epoll. */
struct sxcm_watch {
	struct sxcm_list node;
	uint64_t token;
	int fd;
	enum sxcm_watch_kind kind;
};

struct sxcm_channel {
	struct rdma_event_channel ch;	/* first: what the application sees */
	struct sxcm_list node;		/* all channels */
	struct sxcm_list events;	/* queued, not yet retrieved */
	bool private_ch;		/* a synchronous id's own */
	/* The system library's channel for this one's proxied ids, or NULL. */
	struct rdma_event_channel *sys_ch;
	struct sxcm_watch sys_watch;	/* a dup of sys_ch->fd */
};

enum sxcm_state {
	SXCM_IDLE,
	SXCM_ADDR_RESOLVED,
	SXCM_ADDR_BOUND,	/* bound (rdma_bind_addr, or for a resolve) */
	SXCM_ROUTE_RESOLVED,
	SXCM_LISTEN,
	SXCM_PENDING,		/* accepted socket, no REQ yet */
	SXCM_REQ_RCVD,		/* CONNECT_REQUEST delivered */
	SXCM_REQ_SENT,
	SXCM_REP_SENT,
	SXCM_REP_RCVD,		/* CONNECT_RESPONSE (no QP) */
	SXCM_ESTABLISHED,
	SXCM_DREQ_SENT,
	SXCM_DISCONNECTED,
	SXCM_REJECTED,
	SXCM_ERROR,
	SXCM_SYSTEM,		/* a proxy: everything goes to id->sys */
};

/*
 * A softxrc link this process has opened for ids between hosts: its own
 * context (the ids' verbs), default PD, and one CM channel in the
 * progress thread's epoll, whose events linkev.c turns into rdma_cm's.
 */
struct sxcm_link {
	struct sxcm_list node;		/* sxcm_links */
	struct ibv_context *ctx;
	struct ibv_pd *pd;		/* for QPs made without one */
	struct ibv_xrcd *xrcd;		/* for XRC ids, opened on first need */
	struct ibv_port_attr port;
	struct ibv_device_attr attr;
	struct sxcm_watch watch;	/* the CM channel (SXCM_WATCH_LINK) */
};

/* Links a wildcard listener listens on at most. */
#define SXCM_MAX_LINKS	8

/* rdma_set_option()s given before an id knew its device (replayed). */
#define SXCM_OPT_TOS		(1u << 0)
#define SXCM_OPT_REUSEADDR	(1u << 1)
#define SXCM_OPT_AFONLY		(1u << 2)
#define SXCM_OPT_ACK_TIMEOUT	(1u << 3)

struct sxcm_id {
	struct rdma_cm_id id;		/* first: what the application sees */
	struct sxcm_list node;		/* all ids */
	enum sxcm_state state;
	struct sxcm_channel *chan;
	bool sync;			/* NULL channel: synchronous calls */
	bool handed_out;		/* its CONNECT_REQUEST was retrieved */
	int bind_fd;			/* holds the rendezvous name */
	struct sxcm_watch conn;		/* connection (or listening) socket */
	struct sxcm_id *listener;	/* PENDING/REQ_RCVD children */
	int unacked;			/* retrieved, not yet acknowledged */
	bool req_unacked;		/* of which its own CONNECT_REQUEST */
	/* connection parameters */
	uint32_t psn;			/* our starting send PSN */
	uint32_t remote_qpn, remote_psn;
	uint8_t responder_resources, initiator_depth;
	uint8_t retry_count, rnr_retry_count;
	uint8_t ack_timeout;
	uint8_t tos;
	bool reuseaddr, afonly;
	uint32_t qp_num;		/* application QP (no id->qp) */
	/* resources the library made (rdma_create_qp, rdma_create_ep) */
	bool own_cqs;
	struct ibv_cq *srq_cq;		/* an XRC SRQ's: kept while it is */
	struct ibv_qp_init_attr *ep_attr;	/* passive endpoint's QP attrs */
	struct ibv_pd *ep_pd;
	struct ibv_sa_path_rec path;
	unsigned int opts_set;		/* SXCM_OPT_* */
	/*
	 * Between hosts (link.c): the link, the module's CM id, and the
	 * path.  A listener's ids, one per link it listens on, are in
	 * @lsn.  @cookie names the id in the module's events.
	 */
	struct sxcm_link *link;
	bool has_handle;
	uint32_t cm_handle;
	uint64_t cookie;
	struct {
		struct sxcm_link *link;
		uint32_t handle;
	} lsn[SXCM_MAX_LINKS];
	int nlsn;
	uint8_t sgid_index;
	union ibv_gid sgid, dgid;
	uint8_t mtu, hop_limit, traffic_class;
	uint32_t flow_label;
	/*
	 * The system library's id: all of a proxy (SXCM_SYSTEM), or a
	 * wildcard listener's other half (SXCM_LISTEN).
	 */
	struct rdma_cm_id *sys;
};

struct sxcm_event {
	struct rdma_cm_event ev;	/* first: what the application sees */
	struct sxcm_list node;
	struct sxcm_id *owner;		/* counted in owner->unacked */
	uint8_t pdata[SXCM_MAX_PDATA];
};

/* The device every local address maps to (cma.c), opened once. */
struct sxcm_device {
	struct ibv_context *ctx;
	struct ibv_pd *pd;		/* for QPs made without one */
	struct ibv_xrcd *xrcd;		/* for XRC ids, opened on first need */
	struct ibv_port_attr port;
	struct ibv_device_attr attr;
	union ibv_gid gid;
};

extern pthread_mutex_t sxcm_lock;
extern pthread_cond_t sxcm_cond;
extern struct sxcm_device sxcm_dev;
extern struct sxcm_list sxcm_ids;	/* every id */
extern struct sxcm_list sxcm_channels;	/* every channel */

static inline struct sxcm_id *to_sxcm_id(struct rdma_cm_id *id)
{
	return sxcm_container_of(id, struct sxcm_id, id);
}

static inline struct sxcm_channel *to_chan(struct rdma_event_channel *ch)
{
	return sxcm_container_of(ch, struct sxcm_channel, ch);
}

/* Every function below is called with sxcm_lock held. */

/* cma.c: the device, ids */
int sxcm_errno(int err);
struct ibv_context *sxcm_device(void);
void sxcm_forget_device(void);
const struct ibv_device_attr *sxcm_dev_attr(const struct sxcm_id *id);
struct ibv_pd *sxcm_default_pd(void);
struct sxcm_id *sxcm_id_new(struct sxcm_channel *chan, void *context,
			    enum rdma_port_space ps, enum ibv_qp_type qpt);
void sxcm_id_free(struct sxcm_id *id);
void sxcm_fill_route(struct sxcm_id *id);
int sxcm_complete(struct sxcm_id *id);

/* event.c */
struct sxcm_channel *sxcm_channel_new(bool private_ch);
void sxcm_channel_free(struct sxcm_channel *c);
void sxcm_chan_push(struct sxcm_channel *c, struct sxcm_event *e);
void sxcm_chan_unlink(struct sxcm_channel *c, struct sxcm_event *e);
void sxcm_drop_events(struct sxcm_id *id);
void sxcm_queue_event(struct sxcm_id *id, enum rdma_cm_event_type type,
		      int status, const struct sxcm_msg *msg,
		      struct sxcm_id *listen_id);
int sxcm_next_event(struct sxcm_channel *c, bool nonblock,
		    struct sxcm_event **out);
void sxcm_ack(struct sxcm_event *e);

/* qp.c */
int sxcm_create_qp(struct sxcm_id *id, struct ibv_qp_init_attr_ex *attr);
void sxcm_destroy_cqs(struct sxcm_id *id);
int sxcm_qp_connect(struct sxcm_id *id);
void sxcm_qp_error(struct sxcm_id *id);

/* sys.c: ids on the host's other RDMA devices, by the system library */
bool sxcm_sys_usable(void);
bool sxcm_device_ours(struct ibv_device *dev);
bool sxcm_sys_owns(const struct sockaddr *sa);
bool sxcm_sys_owns_route(const struct sockaddr *src,
			 const struct sockaddr *dst);
int sxcm_sys_bind(struct sxcm_id *s, const struct sockaddr *addr);
int sxcm_sys_resolve_addr(struct sxcm_id *s, struct sockaddr *src,
			  struct sockaddr *dst, int timeout_ms);
int sxcm_sys_listen_too(struct sxcm_id *s, int backlog);
int sxcm_sys_follow(struct sxcm_id *s);
void sxcm_sys_mirror(struct sxcm_id *s);
void sxcm_sys_free_id(struct sxcm_id *s);
void sxcm_sys_free_channel(struct sxcm_channel *c);
void sxcm_sys_pump(struct sxcm_channel *c);
struct ibv_context **sxcm_sys_devices(int *num);
void sxcm_sys_free_devices(struct ibv_context **list);
void *sxcm_sys_fn(const char *name, _Atomic(void *) *cache);

/* The system library's function @name, typed as ours; NULL if none. */
#define SXCM_SYS(name) ({ \
	static _Atomic(void *) sxcm_sys_fn_; \
	(__typeof__(&name))sxcm_sys_fn(#name, &sxcm_sys_fn_); })

/*
 * Call the system library's @name on proxy @s (whose id->sys is among
 * the arguments), then copy what the call changed: 0 or -errno.
 */
#define SXCM_SYS_CALL(s, name, ...) ({ \
	__typeof__(&name) sxcm_fn_ = SXCM_SYS(name); \
	int sxcm_r_ = -EOPNOTSUPP; \
	if (sxcm_fn_) \
		sxcm_r_ = sxcm_fn_(__VA_ARGS__) ? (errno ? -errno : -EIO) : 0; \
	sxcm_sys_mirror(s); \
	sxcm_r_; })

/* link.c, linkev.c: ids between hosts, through a link's CM */
int sxcm_link_contexts(struct ibv_context **out, int max);
int sxcm_link_bind(struct sxcm_id *s);
void sxcm_link_unbind(struct sxcm_id *s);
bool sxcm_link_holds(const struct sockaddr *sa);
int sxcm_link_resolve(struct sxcm_id *s, const struct sockaddr *dst);
int sxcm_link_listen(struct sxcm_id *s, int backlog);
void sxcm_link_free_id(struct sxcm_id *s);
void sxcm_links_forget(void);
int sxcm_link_send(struct sxcm_id *s, uint16_t msg, uint16_t reason,
		   const void *pdata, uint16_t len,
		   const struct sxrc_cm_conn *conn);
int sxcm_link_connect(struct sxcm_id *s, struct rdma_conn_param *p);
int sxcm_link_accept(struct sxcm_id *s, struct rdma_conn_param *p);
int sxcm_link_reject(struct sxcm_id *s, const void *pdata, uint8_t len,
		     uint16_t reason);
void sxcm_link_ah(const struct sxcm_id *s, struct ibv_ah_attr *ah);
void sxcm_link_passive(struct sxcm_id *s, struct sxcm_link *l,
		       const struct sxrc_cm_conn *c);
void sxcm_link_pump(struct sxcm_link *l);

/* rendezvous.c: rendezvous sockets, messages, the progress thread */
int sxcm_watch_add(struct sxcm_watch *w, int fd);
void sxcm_watch_del(struct sxcm_watch *w);
int sxcm_name(char *buf, size_t size, enum rdma_port_space ps,
	      const struct sockaddr *sa, bool wildcard);
int sxcm_send(struct sxcm_id *id, struct sxcm_msg *msg, uint8_t type,
	      const void *pdata, uint8_t len);
void sxcm_addr_to_msg(struct sxcm_msg_addr *w, const struct sockaddr *sa);
int sxcm_addr_from_msg(struct sockaddr_storage *ss,
		       const struct sxcm_msg_addr *w);
int sxcm_reserve(struct sxcm_id *id, struct sockaddr *sa);
int sxcm_connect_socket(struct sxcm_id *id);
int sxcm_listen_socket(struct sxcm_id *id, int backlog);
bool sxcm_is_local(const struct sockaddr *sa);
bool sxcm_is_wildcard(const struct sockaddr *sa);
bool sxcm_is_loopback(const struct sockaddr *sa);
socklen_t sxcm_addr_len(const struct sockaddr *sa);
uint16_t sxcm_get_port(const struct sockaddr *sa);
void sxcm_set_port(struct sockaddr *sa, uint16_t port_be);

#endif /* SXCM_H */
