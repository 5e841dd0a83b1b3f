/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * softxrc: the generic netlink family of the resource view.
 *
 * Kept apart from softxrc-abi.h (the character device's ABI): the
 * softxrc tool and other monitoring programs consume only this.  Values
 * named here as SXRC_QPT_* and enum sxrc_qp_state are those of
 * softxrc-abi.h.  Same rules: attributes and enum values are only added,
 * never renumbered or given a new meaning.
 */
#ifndef _UAPI_RDMA_SOFTXRC_NETLINK_H
#define _UAPI_RDMA_SOFTXRC_NETLINK_H

#include <linux/types.h>

/*
 * Resource view (generic netlink)
 * -------------------------------
 * The module registers the generic netlink family SXRC_NL_FAMILY_NAME,
 * version SXRC_NL_FAMILY_VERSION.  Its one command, SXRC_NL_CMD_RES_GET,
 * is a dump (NLM_F_DUMP): every reply message describes one object of one
 * device, named by SXRC_NL_ATTR_RES_CLASS.  The request may carry
 * SXRC_NL_ATTR_RES_CLASS (only that class) and SXRC_NL_ATTR_PID (only
 * objects of contexts opened by that process).  A caller without
 * CAP_SYS_ADMIN sees the devices and only the objects of contexts opened
 * with its effective uid; of an XRC receive QP it is registered with,
 * only the creator and the registrants of such contexts are named, the
 * other registrations counted (SXRC_NL_ATTR_REG_OTHERS).  Attributes only
 * grow; unknown ones are ignored by readers.
 *
 * Links
 * -----
 * SXRC_NL_CMD_LINK_ADD attaches a new device to a network device, as
 * "rdma link add" does for rdma_rxe: SXRC_NL_ATTR_DEV_NAME, "softxrcN"
 * with N below 8 and free, and SXRC_NL_ATTR_NETDEV, the interface's name
 * in the caller's network namespace.  The device's port has an Ethernet
 * link layer, RoCEv2 GIDs from the interface's addresses, and follows
 * its state and MTU; it goes away with the interface.
 * SXRC_NL_CMD_LINK_DEL removes such a device (SXRC_NL_ATTR_DEV_NAME);
 * contexts still open on it get IBV_EVENT_DEVICE_FATAL and fail every
 * further call but destroys with EIO.  Both need CAP_NET_ADMIN.  The
 * device dump shows a link's SXRC_NL_ATTR_NETDEV and
 * SXRC_NL_ATTR_NETDEV_INDEX.
 */

#define SXRC_NL_FAMILY_NAME	"softxrc"
#define SXRC_NL_FAMILY_VERSION	1

/**
 * enum sxrc_nl_cmd - commands of the softxrc netlink family
 * @SXRC_NL_CMD_UNSPEC: not a command
 * @SXRC_NL_CMD_RES_GET: dump resources (NLM_F_DUMP only)
 * @SXRC_NL_CMD_LINK_ADD: attach a new device to a network device
 * @SXRC_NL_CMD_LINK_DEL: remove a device attached to a network device
 * @__SXRC_NL_CMD_MAX: number of commands
 * @SXRC_NL_CMD_MAX: highest command
 */
enum sxrc_nl_cmd {
	SXRC_NL_CMD_UNSPEC,
	SXRC_NL_CMD_RES_GET,
	SXRC_NL_CMD_LINK_ADD,
	SXRC_NL_CMD_LINK_DEL,
	__SXRC_NL_CMD_MAX,
	SXRC_NL_CMD_MAX = __SXRC_NL_CMD_MAX - 1,
};

/**
 * enum sxrc_nl_res_class - object classes of the resource view
 * @SXRC_NL_RES_ALL: no class (request: every class)
 * @SXRC_NL_RES_DEV: a device: object counts and data path counters
 * @SXRC_NL_RES_CTX: a user context (an open of the device)
 * @SXRC_NL_RES_PD: a protection domain
 * @SXRC_NL_RES_MR: a memory region
 * @SXRC_NL_RES_CQ: a completion queue
 * @SXRC_NL_RES_QP: a queue pair (XRC receive QPs excepted)
 * @SXRC_NL_RES_SRQ: a shared receive queue
 * @SXRC_NL_RES_XRCD: a context's open of an XRC domain
 * @SXRC_NL_RES_XRCQP: an XRC receive QP and its registrations
 * @SXRC_NL_RES_CM_ID: a connection manager id of a link (the IB CM on
 *	its QP1): a listener or one side of a connection
 * @__SXRC_NL_RES_MAX: number of classes
 */
enum sxrc_nl_res_class {
	SXRC_NL_RES_ALL,
	SXRC_NL_RES_DEV,
	SXRC_NL_RES_CTX,
	SXRC_NL_RES_PD,
	SXRC_NL_RES_MR,
	SXRC_NL_RES_CQ,
	SXRC_NL_RES_QP,
	SXRC_NL_RES_SRQ,
	SXRC_NL_RES_XRCD,
	SXRC_NL_RES_XRCQP,
	SXRC_NL_RES_CM_ID,
	__SXRC_NL_RES_MAX,
};

/**
 * enum sxrc_nl_attr - attributes of the softxrc netlink family
 * @SXRC_NL_ATTR_UNSPEC: not an attribute
 * @SXRC_NL_ATTR_PAD: padding of 64-bit attributes
 * @SXRC_NL_ATTR_RES_CLASS: u32, enum sxrc_nl_res_class (request: filter)
 * @SXRC_NL_ATTR_PID: u32, pid (thread group) that opened the context
 *	(request: filter)
 * @SXRC_NL_ATTR_DEV_INDEX: u32, N of /dev/infiniband/softxrcN
 * @SXRC_NL_ATTR_DEV_NAME: string, "softxrcN"
 * @SXRC_NL_ATTR_CTX_ID: u64, the context's number on its device
 * @SXRC_NL_ATTR_UID: u32, effective uid of the opener
 * @SXRC_NL_ATTR_COMM: string, command name of the opener
 * @SXRC_NL_ATTR_HANDLE: u32, the object's handle in its context
 * @SXRC_NL_ATTR_NUM_CTX: u32, open contexts of a device
 * @SXRC_NL_ATTR_NUM_PD: u32, live PDs
 * @SXRC_NL_ATTR_NUM_MR: u32, live MRs
 * @SXRC_NL_ATTR_NUM_CQ: u32, live CQs
 * @SXRC_NL_ATTR_NUM_QP: u32, live QPs (XRC receive QPs included)
 * @SXRC_NL_ATTR_NUM_SRQ: u32, live SRQs
 * @SXRC_NL_ATTR_NUM_XRCD: u32, XRC domains alive
 * @SXRC_NL_ATTR_PINNED_PAGES: u64, pages pinned (an MR; a device: all MRs)
 * @SXRC_NL_ATTR_LENGTH: u64, bytes of an MR
 * @SXRC_NL_ATTR_KEY: u32, lkey == rkey of an MR
 * @SXRC_NL_ATTR_CQE: u32, entries of a CQ
 * @SXRC_NL_ATTR_QPN: u32, QP number
 * @SXRC_NL_ATTR_QP_TYPE: u32, SXRC_QPT_*
 * @SXRC_NL_ATTR_QP_STATE: u32, enum sxrc_qp_state
 * @SXRC_NL_ATTR_SRQN: u32, SRQ number
 * @SXRC_NL_ATTR_INODE: u64, inode number naming an XRC domain (0:
 *	anonymous)
 * @SXRC_NL_ATTR_OPENS: u32, open handles of an XRC domain, all contexts
 * @SXRC_NL_ATTR_STATS: nested, enum sxrc_nl_stat: data path counters of
 *	a device or a QP
 * @SXRC_NL_ATTR_REG: nested, repeated: one registrant process of an XRC
 *	receive QP (SXRC_NL_ATTR_PID, SXRC_NL_ATTR_REG_COUNT)
 * @SXRC_NL_ATTR_REG_COUNT: u32, registrations a process holds
 * @SXRC_NL_ATTR_REG_OTHERS: u32, registrations of an XRC receive QP held
 *	by contexts the caller may not see (they have no SXRC_NL_ATTR_REG);
 *	the QP's SXRC_NL_ATTR_PID and SXRC_NL_ATTR_CTX_ID, its creator's,
 *	are likewise left out when the caller may not see that context
 * @SXRC_NL_ATTR_NETDEV: string, the network device a link is attached to
 * @SXRC_NL_ATTR_NETDEV_INDEX: u32, its interface index
 * @SXRC_NL_ATTR_NUM_CM_ID: u32, live connection manager ids of a link
 * @SXRC_NL_ATTR_CM_STATE: u32, enum sxrc_nl_cm_state of a CM id
 * @SXRC_NL_ATTR_SERVICE_ID: u64, a listener's service ID; a connection's
 *	(its REQ's or SIDR_REQ's)
 * @SXRC_NL_ATTR_CM_LOCAL_ID: u32, a connection's local communication ID
 *	(0: none yet)
 * @SXRC_NL_ATTR_CM_REMOTE_ID: u32, the peer's communication ID (0: not
 *	known yet)
 * @SXRC_NL_ATTR_REMOTE_QPN: u32, the peer's QP number (0: not known yet);
 *	the id's own QP is SXRC_NL_ATTR_QPN
 * @__SXRC_NL_ATTR_MAX: number of attributes
 * @SXRC_NL_ATTR_MAX: highest attribute
 */
enum sxrc_nl_attr {
	SXRC_NL_ATTR_UNSPEC,
	SXRC_NL_ATTR_PAD,
	SXRC_NL_ATTR_RES_CLASS,
	SXRC_NL_ATTR_PID,
	SXRC_NL_ATTR_DEV_INDEX,
	SXRC_NL_ATTR_DEV_NAME,
	SXRC_NL_ATTR_CTX_ID,
	SXRC_NL_ATTR_UID,
	SXRC_NL_ATTR_COMM,
	SXRC_NL_ATTR_HANDLE,
	SXRC_NL_ATTR_NUM_CTX,
	SXRC_NL_ATTR_NUM_PD,
	SXRC_NL_ATTR_NUM_MR,
	SXRC_NL_ATTR_NUM_CQ,
	SXRC_NL_ATTR_NUM_QP,
	SXRC_NL_ATTR_NUM_SRQ,
	SXRC_NL_ATTR_NUM_XRCD,
	SXRC_NL_ATTR_PINNED_PAGES,
	SXRC_NL_ATTR_LENGTH,
	SXRC_NL_ATTR_KEY,
	SXRC_NL_ATTR_CQE,
	SXRC_NL_ATTR_QPN,
	SXRC_NL_ATTR_QP_TYPE,
	SXRC_NL_ATTR_QP_STATE,
	SXRC_NL_ATTR_SRQN,
	SXRC_NL_ATTR_INODE,
	SXRC_NL_ATTR_OPENS,
	SXRC_NL_ATTR_STATS,
	SXRC_NL_ATTR_REG,
	SXRC_NL_ATTR_REG_COUNT,
	SXRC_NL_ATTR_REG_OTHERS,
	SXRC_NL_ATTR_NETDEV,
	SXRC_NL_ATTR_NETDEV_INDEX,
	SXRC_NL_ATTR_NUM_CM_ID,
	SXRC_NL_ATTR_CM_STATE,
	SXRC_NL_ATTR_SERVICE_ID,
	SXRC_NL_ATTR_CM_LOCAL_ID,
	SXRC_NL_ATTR_CM_REMOTE_ID,
	SXRC_NL_ATTR_REMOTE_QPN,
	__SXRC_NL_ATTR_MAX,
	SXRC_NL_ATTR_MAX = __SXRC_NL_ATTR_MAX - 1,
};

/**
 * enum sxrc_nl_stat - u64 counters nested in SXRC_NL_ATTR_STATS
 * @SXRC_NL_STAT_UNSPEC: not a counter
 * @SXRC_NL_STAT_SEND_WQES: send WQEs completed successfully
 * @SXRC_NL_STAT_SEND_BYTES: bytes they moved
 * @SXRC_NL_STAT_RECV_WQES: receive WQEs completed successfully
 * @SXRC_NL_STAT_RECV_BYTES: bytes they received
 * @SXRC_NL_STAT_RNR_RETRIES: RNR NAKs waited out
 * @SXRC_NL_STAT_RETRIES: lost messages waited out
 * @SXRC_NL_STAT_ERRORS: transitions to the error state
 * @SXRC_NL_STAT_PAD: padding
 * @SXRC_NL_STAT_RECV_SHARED: receive WQEs of an XRC SRQ completed through
 *	an XRC receive QP another context created (an SRQ's; a QP's: such
 *	WQEs it carried; a device's: all)
 * @__SXRC_NL_STAT_MAX: number of counters
 *
 * A device and a QP carry every counter; an SRQ the receive ones
 * (RECV_WQES, RECV_BYTES, RECV_SHARED), the others zero.
 */
enum sxrc_nl_stat {
	SXRC_NL_STAT_UNSPEC,
	SXRC_NL_STAT_SEND_WQES,
	SXRC_NL_STAT_SEND_BYTES,
	SXRC_NL_STAT_RECV_WQES,
	SXRC_NL_STAT_RECV_BYTES,
	SXRC_NL_STAT_RNR_RETRIES,
	SXRC_NL_STAT_RETRIES,
	SXRC_NL_STAT_ERRORS,
	SXRC_NL_STAT_PAD,
	SXRC_NL_STAT_RECV_SHARED,
	__SXRC_NL_STAT_MAX,
};

/**
 * enum sxrc_nl_cm_state - where a CM id is (SXRC_NL_ATTR_CM_STATE)
 * @SXRC_NL_CM_IDLE: made, nothing sent or received
 * @SXRC_NL_CM_LISTEN: a listener
 * @SXRC_NL_CM_REQ_SENT: active: its REQ went, the REP is awaited
 * @SXRC_NL_CM_REQ_RCVD: passive: the REQ is the application's to answer
 * @SXRC_NL_CM_REP_SENT: passive: its REP went, the RTU is awaited
 * @SXRC_NL_CM_REP_RCVD: active: the REP is the application's to answer
 * @SXRC_NL_CM_ESTABLISHED: connected
 * @SXRC_NL_CM_DREQ_SENT: its DREQ went, the DREP is awaited
 * @SXRC_NL_CM_SIDR_REQ_SENT: active: its SIDR_REQ went
 * @SXRC_NL_CM_SIDR_REQ_RCVD: passive: the application's to answer
 * @SXRC_NL_CM_DONE: over (rejected, disconnected, timed out, answered),
 *	until its owner destroys it
 * @__SXRC_NL_CM_MAX: number of states
 */
enum sxrc_nl_cm_state {
	SXRC_NL_CM_IDLE,
	SXRC_NL_CM_LISTEN,
	SXRC_NL_CM_REQ_SENT,
	SXRC_NL_CM_REQ_RCVD,
	SXRC_NL_CM_REP_SENT,
	SXRC_NL_CM_REP_RCVD,
	SXRC_NL_CM_ESTABLISHED,
	SXRC_NL_CM_DREQ_SENT,
	SXRC_NL_CM_SIDR_REQ_SENT,
	SXRC_NL_CM_SIDR_REQ_RCVD,
	SXRC_NL_CM_DONE,
	__SXRC_NL_CM_MAX,
};

#endif /* _UAPI_RDMA_SOFTXRC_NETLINK_H */
