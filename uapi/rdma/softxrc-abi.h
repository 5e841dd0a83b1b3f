/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * softxrc: the user/kernel contract of the software RDMA verbs device.
 *
 * This header is the whole ABI.  The kernel module and the userspace
 * library are both built from it; nothing else is shared between them.
 *
 * Transport
 * ---------
 * Each softxrc device is a character device (a misc device named
 * softxrcN, its node /dev/infiniband/softxrcN).  Every open() creates a
 * user context; every object made through that fd belongs to
 * the context and is destroyed, in dependency order, when the last
 * reference to the file goes away (close(), exit, or SIGKILL).
 *
 * All control calls go through one ioctl, SXRC_IOCTL_INVOKE, whose
 * argument is a struct sxrc_ioctl_hdr naming an object class, a method of
 * that class, and two buffers: the method's input structure and the
 * buffer for its output structure, each with an explicit length.
 *
 * Extensibility rules (the same for every structure below)
 * ---------------------------------------------------------
 *  - Structures only grow, at the end, in multiples of 8 bytes.  A field
 *    is never removed, renamed with a new meaning or moved.
 *  - Input shorter than the method's minimum size is EINVAL.  Input
 *    shorter than the kernel's size is zero-extended (an older library
 *    talking to a newer kernel).  Input longer than the kernel's size is
 *    accepted only if every extra byte is zero, otherwise E2BIG (a newer
 *    library asking for something this kernel does not know).
 *  - Output shorter than the method's minimum size is EINVAL.  The kernel
 *    writes min(out_len, its size) bytes, zero-fills the rest of a longer
 *    buffer, and reports in sxrc_ioctl_hdr.out_len how many bytes it
 *    defined, so a newer library can tell which fields are real.
 *  - Every field named reserved, and every undefined flag bit, must be
 *    zero on input (EINVAL otherwise) and is zero on output.
 *  - User pointers are __aligned_u64.  No kernel pointer ever leaves the
 *    kernel; objects are named by 32-bit handles that are only meaningful
 *    within the context that created them.
 *
 * Errors
 * ------
 *  EOPNOTSUPP  unknown object class or method (a verb this module does
 *              not implement)
 *  EINVAL      bad length, non-zero reserved field or unknown flag, bad
 *              value; a handle that does not name a live object of the
 *              expected class in *this* context
 *  E2BIG       non-zero bytes past the end of a structure the kernel knows
 *  EFAULT      a user pointer that cannot be read or written
 *  ENOENT      a query method's handle names no live object
 *  EBUSY       destroying an object that other objects still use
 *  EPERM       a call from a process that is not a member of the
 *              context (neither its opener nor an importer)
 *  ENOMEM      out of memory, or a module object limit reached
 *
 * Versioning
 * ----------
 * SXRC_ABI_VERSION changes only on an incompatible break; the library
 * refuses a device whose version differs.  New behaviour is announced by
 * bits in sxrc_query_ctx_out.features rather than by version numbers.
 */
#ifndef _UAPI_RDMA_SOFTXRC_ABI_H
#define _UAPI_RDMA_SOFTXRC_ABI_H

#include <linux/const.h>
#include <linux/types.h>
#include <linux/ioctl.h>

#define SXRC_ABI_VERSION	1

/* Device name prefix: softxrc0, softxrc1, ... (/dev/infiniband/softxrcN) */
#define SXRC_DEV_PREFIX		"softxrc"

#define SXRC_IOCTL_TYPE		0xB6
#define SXRC_IOCTL_INVOKE	_IO(SXRC_IOCTL_TYPE, 0x00)
/*
 * SXRC_IOCTL_DOORBELL: the argument is a QP handle (not a pointer).  The
 * kernel executes the QP's send queue, in the caller's context, until it
 * is empty or has to wait (RNR, a peer not ready yet: it then goes on by
 * itself).  A QP in the error state has its queues flushed instead.
 * Returns 0, or EINVAL for a handle that names no QP of this context.
 */
#define SXRC_IOCTL_DOORBELL	_IO(SXRC_IOCTL_TYPE, 0x01)
/*
 * SXRC_IOCTL_IMPORT: the argument must be 0.  Makes the calling process
 * a member of the context, as the opener is from open(): a member may
 * use SXRC_IOCTL_INVOKE, SXRC_IOCTL_DOORBELL, mmap() and read() on the
 * fd; any other process gets EPERM.  This is ibv_import_device(): the fd
 * was passed on (SCM_RIGHTS) or inherited, and whoever holds it may
 * import.  Importing again is a no-op.  Returns 0; EINVAL for a non-zero
 * argument; EUSERS when the context has SXRC_MAX_MEMBERS members already.
 * Members stay until the file is released.
 */
#define SXRC_IOCTL_IMPORT	_IO(SXRC_IOCTL_TYPE, 0x02)

/* Processes that may use one context, the opener included. */
#define SXRC_MAX_MEMBERS	64

/**
 * struct sxrc_ioctl_hdr - argument of SXRC_IOCTL_INVOKE
 * @size: sizeof(struct sxrc_ioctl_hdr) as the caller knows it
 * @object_id: an enum sxrc_object value
 * @method_id: a method of that object (enum sxrc_*_method)
 * @in_len: length of the buffer at @in
 * @out_len: on input, length of the buffer at @out; on output, how many
 *	bytes of it the kernel defined
 * @in: user pointer to the method's input structure (0 when @in_len is 0)
 * @out: user pointer to the method's output structure (0 when @out_len
 *	is 0)
 */
struct sxrc_ioctl_hdr {
	__u32 size;
	__u16 object_id;
	__u16 method_id;
	__u32 in_len;
	__u32 out_len;
	__aligned_u64 in;
	__aligned_u64 out;
};

/**
 * enum sxrc_object - object classes
 * @SXRC_OBJ_CTX: the user context itself (the open fd)
 * @SXRC_OBJ_DEVICE: device and port attributes
 * @SXRC_OBJ_PD: protection domains
 * @SXRC_OBJ_MR: memory regions
 * @SXRC_OBJ_CQ: completion queues
 * @SXRC_OBJ_CHANNEL: completion channels (each is a file of its own)
 * @SXRC_OBJ_QP: queue pairs
 * @SXRC_OBJ_SRQ: shared receive queues
 * @SXRC_OBJ_AH: address handles (UD)
 * @SXRC_OBJ_XRCD: XRC domains, and the legacy OFED calls on their
 *	receive QPs
 * @SXRC_OBJ_MW: memory windows
 * @SXRC_OBJ_CM: the communication manager of a link (QP1 on RoCEv2):
 *	its event channels and connection ids
 */
enum sxrc_object {
	SXRC_OBJ_CTX = 0,
	SXRC_OBJ_DEVICE = 1,
	SXRC_OBJ_PD = 2,
	SXRC_OBJ_MR = 3,
	SXRC_OBJ_CQ = 4,
	SXRC_OBJ_CHANNEL = 5,
	SXRC_OBJ_QP = 6,
	SXRC_OBJ_SRQ = 7,
	SXRC_OBJ_AH = 8,
	SXRC_OBJ_XRCD = 9,
	SXRC_OBJ_MW = 10,
	SXRC_OBJ_CM = 11,
	SXRC_OBJ_MAX,
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_CTX
 */
enum sxrc_ctx_method {
	SXRC_CTX_QUERY = 0,
};

/**
 * enum sxrc_features - behaviour bits announced in sxrc_query_ctx_out
 * @SXRC_FEATURE_ASYNC_EVENTS: read()/poll() on the device fd deliver
 *	struct sxrc_async_event records
 * @SXRC_FEATURE_XRC: XRC domains, SRQs and QPs (SXRC_OBJ_XRCD)
 * @SXRC_FEATURE_CQE_TIMESTAMP: SXRC_CQ_CREATE_TIMESTAMP, CQEs that carry
 *	the time they were produced (struct sxrc_cqe_ts)
 * @SXRC_FEATURE_IMPORT: SXRC_IOCTL_IMPORT, SXRC_PD_QUERY, SXRC_MR_QUERY
 * @SXRC_FEATURE_DMABUF_MR: SXRC_MR_REG_DMABUF, regions over a dma-buf
 * @SXRC_FEATURE_ODP: SXRC_ACCESS_ON_DEMAND regions (explicit, and implicit
 *	over the whole address space) and SXRC_MR_ADVISE.  They serve every
 *	opcode of RC and XRC (SEND, RECV, SRQ_RECV, WRITE, READ, ATOMIC)
 *	and UD (SEND, RECV, SRQ_RECV); UC is not covered
 * @SXRC_FEATURE_SQPOLL: SXRC_CREATE_QP_SQPOLL, send queues run by a
 *	kernel thread without a doorbell (sxrc_ring_hdr.poll)
 * @SXRC_FEATURE_CM: SXRC_OBJ_CM, connection management between hosts
 *	(a link device only)
 * @SXRC_FEATURE_CQ_NOTIFY: SXRC_CQ_NOTIFY, an arm fired for completions
 *	that were already waiting when it was stored
 */
enum sxrc_features {
	SXRC_FEATURE_ASYNC_EVENTS = 1 << 0,
	SXRC_FEATURE_XRC = 1 << 1,
	SXRC_FEATURE_CQE_TIMESTAMP = 1 << 2,
	SXRC_FEATURE_IMPORT = 1 << 3,
	SXRC_FEATURE_DMABUF_MR = 1 << 4,
	SXRC_FEATURE_ODP = 1 << 5,
	SXRC_FEATURE_SQPOLL = 1 << 6,
	SXRC_FEATURE_CQ_NOTIFY = 1 << 7,
	SXRC_FEATURE_CM = 1 << 8,
};

#define SXRC_FEATURES_ALL	(SXRC_FEATURE_ASYNC_EVENTS | SXRC_FEATURE_XRC | \
				 SXRC_FEATURE_CQE_TIMESTAMP |		\
				 SXRC_FEATURE_IMPORT |			\
				 SXRC_FEATURE_DMABUF_MR |		\
				 SXRC_FEATURE_ODP | SXRC_FEATURE_SQPOLL | \
				 SXRC_FEATURE_CQ_NOTIFY | SXRC_FEATURE_CM)

/**
 * struct sxrc_query_ctx_out - SXRC_CTX_QUERY output; the method has no
 *	input
 * @abi_version: SXRC_ABI_VERSION of the module
 * @features: enum sxrc_features bits
 * @dev_index: N of /dev/infiniband/softxrcN
 * @num_ports: physical ports on the device (1)
 * @num_comp_vectors: completion vectors
 * @reserved: zero
 */
struct sxrc_query_ctx_out {
	__u32 abi_version;
	__u32 dev_index;
	__aligned_u64 features;
	__u32 num_ports;
	__u32 num_comp_vectors;
	__aligned_u64 reserved;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_DEVICE
 */
enum sxrc_device_method {
	SXRC_DEVICE_QUERY = 0,
	SXRC_DEVICE_QUERY_PORT = 1,
	SXRC_DEVICE_QUERY_GID = 2,
	SXRC_DEVICE_QUERY_PKEY = 3,
};

/*
 * Capability bits of sxrc_device_attr.device_cap_flags.  They carry the
 * bit positions of IBV_DEVICE_* in <infiniband/verbs.h> (and IB_DEVICE_*
 * of the IBTA), so the library passes them through.  Only what works is
 * reported.
 */
#define SXRC_DEVICE_RC_RNR_NAK_GEN	_BITULL(12)
#define SXRC_DEVICE_SRQ_RESIZE		_BITULL(13)
#define SXRC_DEVICE_N_NOTIFY_CQ		_BITULL(14)
#define SXRC_DEVICE_MEM_WINDOW		_BITULL(17)
#define SXRC_DEVICE_XRC			_BITULL(20)
#define SXRC_DEVICE_MEM_WINDOW_TYPE_2B	_BITULL(24)

/*
 * sxrc_device_attr identity.  SXRC_VENDOR_ID is no vendor's OUI: its
 * first octet, 0x02, has the IEEE "locally administered" bit set with the
 * low bits of the SLAP AAI quadrant, a range the IEEE registry never
 * assigns, so no real device can share it; the two other octets are
 * "SX".  The part number and hardware version never change for a given
 * ABI; the firmware version is the module's (sxrc_device_attr.fw_ver).
 */
#define SXRC_VENDOR_ID			0x025358
#define SXRC_VENDOR_PART_ID		0x5c
#define SXRC_HW_VER			1

/* atomic_cap values: enum ibv_atomic_cap */
#define SXRC_ATOMIC_NONE		0
#define SXRC_ATOMIC_HCA			1

/**
 * struct sxrc_device_attr - SXRC_DEVICE_QUERY output; no input
 *
 * The fields mirror struct ibv_device_attr / ibv_device_attr_ex.  Limits
 * are those of this module instance (several are module parameters) at
 * the time of the call; for a caller without CAP_SYS_RESOURCE an object
 * count is the smaller of the device's and its user's limit.  Each is
 * what a creation really accepts: the limit succeeds, one more fails.
 *
 * @fw_ver: firmware version, major << 32 | minor << 16 | sub-minor
 * @node_guid: node GUID, network byte order
 * @sys_image_guid: system image GUID, network byte order
 * @max_mr_size: largest MR in bytes
 * @page_size_cap: supported page sizes (bit N: 2^N bytes)
 * @device_cap_flags: SXRC_DEVICE_* bits
 * @vendor_id: SXRC_VENDOR_ID
 * @vendor_part_id: SXRC_VENDOR_PART_ID
 * @hw_ver: SXRC_HW_VER
 * @max_qp: QPs per device
 * @max_qp_wr: work requests per send or receive queue
 * @max_sge: scatter/gather entries per send or receive WR
 * @max_sge_rd: scatter/gather entries per RDMA READ WR
 * @max_cq: CQs per device
 * @max_cqe: entries per CQ
 * @max_mr: MRs per device
 * @max_pd: PDs per device
 * @max_qp_rd_atom: outstanding RDMA READ/atomic as target, per QP
 * @max_res_rd_atom: the same, for the whole device
 * @max_qp_init_rd_atom: outstanding RDMA READ/atomic as initiator, per QP
 * @atomic_cap: SXRC_ATOMIC_*
 * @max_mcast_grp: multicast groups
 * @max_mcast_qp_attach: QPs per multicast group
 * @max_total_mcast_qp_attach: QP attachments over all groups
 * @max_ah: address handles per device
 * @max_srq: SRQs per device
 * @max_srq_wr: work requests per SRQ
 * @max_srq_sge: scatter/gather entries per SRQ WR
 * @max_pkeys: P_Key table length
 * @local_ca_ack_delay: local CA ack delay (IBTA encoding)
 * @phys_port_cnt: ports
 * @max_inline_data: inline bytes per send WR
 * @max_xrcd: XRC domains per device
 * @max_mw: memory windows per device
 */
struct sxrc_device_attr {
	__aligned_u64 fw_ver;
	__aligned_u64 node_guid;
	__aligned_u64 sys_image_guid;
	__aligned_u64 max_mr_size;
	__aligned_u64 page_size_cap;
	__aligned_u64 device_cap_flags;
	__u32 vendor_id;
	__u32 vendor_part_id;
	__u32 hw_ver;
	__u32 max_qp;
	__u32 max_qp_wr;
	__u32 max_sge;
	__u32 max_sge_rd;
	__u32 max_cq;
	__u32 max_cqe;
	__u32 max_mr;
	__u32 max_pd;
	__u32 max_qp_rd_atom;
	__u32 max_res_rd_atom;
	__u32 max_qp_init_rd_atom;
	__u32 atomic_cap;
	__u32 max_mcast_grp;
	__u32 max_mcast_qp_attach;
	__u32 max_total_mcast_qp_attach;
	__u32 max_ah;
	__u32 max_srq;
	__u32 max_srq_wr;
	__u32 max_srq_sge;
	__u16 max_pkeys;
	__u8 local_ca_ack_delay;
	__u8 phys_port_cnt;
	__u32 max_inline_data;
	__u32 max_xrcd;
	__u32 max_mw;
};

/**
 * struct sxrc_port_in - input of SXRC_DEVICE_QUERY_PORT
 * @port_num: port number, from 1
 * @reserved: zero
 */
struct sxrc_port_in {
	__u32 port_num;
	__u32 reserved;
};

/* port_state values: enum ibv_port_state */
#define SXRC_PORT_DOWN		1
#define SXRC_PORT_ACTIVE	4
/* port_cap_flags bits: the values of IBV_PORT_* */
#define SXRC_PORT_SYS_IMAGE_GUID_SUP	_BITUL(11)
#define SXRC_PORT_CM_SUP		_BITUL(16)
/* link_layer values: IBV_LINK_LAYER_* */
#define SXRC_LINK_LAYER_INFINIBAND	1
#define SXRC_LINK_LAYER_ETHERNET	2

/**
 * struct sxrc_port_attr - SXRC_DEVICE_QUERY_PORT output
 *
 * Mirrors struct ibv_port_attr, with the same encodings.
 *
 * @state: SXRC_PORT_* (enum ibv_port_state)
 * @max_mtu: enum ibv_mtu
 * @active_mtu: enum ibv_mtu
 * @gid_tbl_len: GID table length
 * @port_cap_flags: IBV_PORT_* capability bits
 * @max_msg_sz: largest message in bytes
 * @bad_pkey_cntr: P_Key violations counted
 * @qkey_viol_cntr: Q_Key violations counted
 * @pkey_tbl_len: P_Key table length
 * @lid: base LID
 * @sm_lid: subnet manager LID
 * @lmc: LID mask control
 * @max_vl_num: virtual lanes (IBTA encoding)
 * @sm_sl: subnet manager service level
 * @subnet_timeout: subnet propagation delay (IBTA encoding)
 * @init_type_reply: IBTA InitTypeReply
 * @active_width: IBTA link width encoding
 * @active_speed: IBTA link speed encoding
 * @phys_state: IBTA physical port state (5: LinkUp)
 * @link_layer: SXRC_LINK_LAYER_*
 * @flags: reserved for ibv_port_attr.flags, zero
 * @port_cap_flags2: IBV_PORT_*2 bits
 * @active_speed_ex: extended speed encoding (0: use @active_speed)
 */
struct sxrc_port_attr {
	__u32 state;
	__u32 max_mtu;
	__u32 active_mtu;
	__u32 gid_tbl_len;
	__u32 port_cap_flags;
	__u32 max_msg_sz;
	__u32 bad_pkey_cntr;
	__u32 qkey_viol_cntr;
	__u16 pkey_tbl_len;
	__u16 lid;
	__u16 sm_lid;
	__u8 lmc;
	__u8 max_vl_num;
	__u8 sm_sl;
	__u8 subnet_timeout;
	__u8 init_type_reply;
	__u8 active_width;
	__u8 active_speed;
	__u8 phys_state;
	__u8 link_layer;
	__u8 flags;
	__u16 port_cap_flags2;
	__u16 reserved;
	__u32 active_speed_ex;
};

/**
 * struct sxrc_gid_in - input of SXRC_DEVICE_QUERY_GID and _QUERY_PKEY
 * @port_num: port number, from 1
 * @index: table index
 */
struct sxrc_gid_in {
	__u32 port_num;
	__u32 index;
};

/* gid_type values: enum ibv_gid_type */
#define SXRC_GID_TYPE_IB	0
#define SXRC_GID_TYPE_ROCE_V2	2

/**
 * struct sxrc_gid_out - SXRC_DEVICE_QUERY_GID output
 * @gid: the GID, network byte order
 * @gid_type: SXRC_GID_TYPE_*
 * @reserved: zero
 */
struct sxrc_gid_out {
	__u8 gid[16];
	__u32 gid_type;
	__u32 reserved;
};

/**
 * struct sxrc_pkey_out - SXRC_DEVICE_QUERY_PKEY output
 * @pkey: the P_Key, host byte order
 * @reserved: zero
 */
struct sxrc_pkey_out {
	__u16 pkey;
	__u16 reserved0;
	__u32 reserved;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_PD
 */
enum sxrc_pd_method {
	SXRC_PD_ALLOC = 0,
	SXRC_PD_DEALLOC = 1,
	SXRC_PD_QUERY = 2,
};

/**
 * struct sxrc_create_in - common input of the creation methods that
 *	take nothing else (SXRC_PD_ALLOC)
 * @user_cookie: opaque value echoed in async events about the object
 */
struct sxrc_create_in {
	__aligned_u64 user_cookie;
};

/**
 * struct sxrc_handle_out - output of a creation method: the new handle
 * @handle: handle of the new object, valid in this context only
 * @reserved: zero
 */
struct sxrc_handle_out {
	__u32 handle;
	__u32 reserved;
};

/**
 * struct sxrc_handle_in - input of methods that name one object
 *	(SXRC_PD_DEALLOC, ...)
 * @handle: the object's handle
 * @reserved: zero
 */
struct sxrc_handle_in {
	__u32 handle;
	__u32 reserved;
};

/*
 * SXRC_PD_QUERY (input struct sxrc_handle_in, output struct
 * sxrc_handle_out, which echoes the handle) tells whether a handle names
 * a live PD of the context: ibv_import_pd().  Unlike the other methods,
 * the query methods tell a handle that names nothing (ENOENT) from one
 * that names an object of another class (EINVAL), as uverbs does.
 */

/* --------------------------------------------------------------------
 * SXRC_OBJ_MR
 *
 * A memory region pins [addr, addr + length) of the caller's address
 * space (FOLL_LONGTERM; FOLL_WRITE when LOCAL_WRITE is asked) and charges
 * the pages to the caller's RLIMIT_MEMLOCK (mm->pinned_vm) unless it has
 * CAP_IPC_LOCK.  Work requests name it by its lkey (the same PD as the
 * QP only) and peers by its rkey (the same device only), with addresses
 * in [iova, iova + length).
 *
 * Keys are (index << 8) | key byte; the index is allocated cyclically
 * and the key byte is random, so a stale or guessed key rarely names a
 * live region, and never one with rights it was not given.
 *
 * SXRC_MR_REG_DMABUF registers [offset, offset + length) of a dma-buf
 * instead (SXRC_FEATURE_DMABUF_MR).  The module maps the whole buffer
 * into the kernel with dma_buf_vmap() and copies through that mapping;
 * it holds a reference on the dma-buf, so closing the fd afterwards
 * changes nothing.  Nothing of the caller's address space is pinned,
 * and nothing is charged to RLIMIT_MEMLOCK: the exporter owns the
 * memory.  An exporter that cannot map the buffer for the CPU, or maps
 * it as I/O memory, gets EOPNOTSUPP.  SXRC_MR_REREG may change such a
 * region's PD and access, not its translation (EOPNOTSUPP).
 *
 * SXRC_ACCESS_ON_DEMAND (SXRC_FEATURE_ODP) makes an on-demand paging
 * region: nothing is pinned or charged to RLIMIT_MEMLOCK.  The module
 * follows the range through an MMU interval notifier on the registrant's
 * mm and faults pages in (for write when the access writes) as the
 * engine reaches them; an munmap(), mremap() or copy-on-write waits for
 * a copy in progress and the engine never uses a page after it was
 * invalidated.  An access to a part that is not mapped, or a write to a
 * read-only mapping, fails as an access to a bad key would (local:
 * SXRC_WC_LOC_PROT_ERR; remote: SXRC_WC_REM_ACCESS_ERR).  addr 0 with
 * length ~0 and iova 0 registers the whole address space (implicit
 * ODP).  SXRC_MR_ADVISE prefetches ranges of such regions.
 */
enum sxrc_mr_method {
	SXRC_MR_REG = 0,
	SXRC_MR_DEREG = 1,
	SXRC_MR_REREG = 2,
	SXRC_MR_QUERY = 3,
	SXRC_MR_REG_DMABUF = 4,
	SXRC_MR_ADVISE = 5,
};

/* access bits: the values of enum ibv_access_flags */
#define SXRC_ACCESS_LOCAL_WRITE		_BITUL(0)
#define SXRC_ACCESS_REMOTE_WRITE	_BITUL(1)
#define SXRC_ACCESS_REMOTE_READ		_BITUL(2)
#define SXRC_ACCESS_REMOTE_ATOMIC	_BITUL(3)
#define SXRC_ACCESS_MW_BIND		_BITUL(4)
#define SXRC_ACCESS_ON_DEMAND		_BITUL(6)
#define SXRC_ACCESS_ALL		(SXRC_ACCESS_LOCAL_WRITE |		\
				 SXRC_ACCESS_REMOTE_WRITE |		\
				 SXRC_ACCESS_REMOTE_READ |		\
				 SXRC_ACCESS_REMOTE_ATOMIC |		\
				 SXRC_ACCESS_MW_BIND |			\
				 SXRC_ACCESS_ON_DEMAND)
/* What a memory window may grant: remote access only. */
#define SXRC_ACCESS_MW_ALL	(SXRC_ACCESS_REMOTE_WRITE |		\
				 SXRC_ACCESS_REMOTE_READ |		\
				 SXRC_ACCESS_REMOTE_ATOMIC)

/**
 * struct sxrc_reg_mr_in - input of SXRC_MR_REG
 * @addr: start of the range in the caller's address space
 * @length: bytes, > 0; addr + length must not wrap
 * @iova: address the region has in work requests and for peers
 * @pd_handle: the PD
 * @access: SXRC_ACCESS_* (REMOTE_WRITE and REMOTE_ATOMIC need
 *	LOCAL_WRITE; MW_BIND lets memory windows be bound to the region)
 * @user_cookie: opaque value for the library
 */
struct sxrc_reg_mr_in {
	__aligned_u64 addr;
	__aligned_u64 length;
	__aligned_u64 iova;
	__u32 pd_handle;
	__u32 access;
	__aligned_u64 user_cookie;
};

/**
 * struct sxrc_reg_dmabuf_mr_in - input of SXRC_MR_REG_DMABUF
 * @offset: first byte of the region in the dma-buf
 * @length: bytes, > 0; offset + length must not pass the buffer's end
 *	(EINVAL)
 * @iova: address the region has in work requests and for peers; its
 *	offset in a page must be that of @offset (EINVAL), as the RDMA core
 *	asks
 * @pd_handle: the PD
 * @access: SXRC_ACCESS_*, as for SXRC_MR_REG
 * @user_cookie: opaque value for the library
 * @fd: the dma-buf's file descriptor (EBADF if it is none, EINVAL if it
 *	is not a dma-buf)
 * @reserved: zero
 */
struct sxrc_reg_dmabuf_mr_in {
	__aligned_u64 offset;
	__aligned_u64 length;
	__aligned_u64 iova;
	__u32 pd_handle;
	__u32 access;
	__aligned_u64 user_cookie;
	__u32 fd;
	__u32 reserved;
};

/**
 * struct sxrc_reg_mr_out - output of SXRC_MR_REG, SXRC_MR_REG_DMABUF and
 *	SXRC_MR_REREG
 * @handle: the MR's handle
 * @lkey: local key
 * @rkey: remote key (equal to @lkey)
 * @reserved: zero
 */
struct sxrc_reg_mr_out {
	__u32 handle;
	__u32 lkey;
	__u32 rkey;
	__u32 reserved;
};

/* rereg flags: the values of enum ibv_rereg_mr_flags */
#define SXRC_REREG_TRANSLATION		_BITUL(0)
#define SXRC_REREG_PD			_BITUL(1)
#define SXRC_REREG_ACCESS		_BITUL(2)
#define SXRC_REREG_ALL		(SXRC_REREG_TRANSLATION | SXRC_REREG_PD | \
				 SXRC_REREG_ACCESS)

/**
 * struct sxrc_rereg_mr_in - input of SXRC_MR_REREG
 * @handle: the MR
 * @flags: SXRC_REREG_*, at least one; fields of the others are ignored
 * @addr: new range start (SXRC_REREG_TRANSLATION)
 * @length: new length (SXRC_REREG_TRANSLATION)
 * @iova: new iova (SXRC_REREG_TRANSLATION)
 * @pd_handle: new PD (SXRC_REREG_PD)
 * @access: new access (SXRC_REREG_ACCESS)
 *
 * Either everything changes or nothing does; the keys stay the same.
 * EBUSY while a memory window is bound to the region.
 */
struct sxrc_rereg_mr_in {
	__u32 handle;
	__u32 flags;
	__aligned_u64 addr;
	__aligned_u64 length;
	__aligned_u64 iova;
	__u32 pd_handle;
	__u32 access;
};

/* SXRC_MR_ADVISE advice: the values of enum ibv_advise_mr_advice */
#define SXRC_ADVISE_PREFETCH		0
#define SXRC_ADVISE_PREFETCH_WRITE	1
#define SXRC_ADVISE_PREFETCH_NO_FAULT	2
/* SXRC_MR_ADVISE flags: those of enum ibv_advise_mr_flags */
#define SXRC_ADVISE_FLAG_FLUSH		_BITUL(0)
#define SXRC_ADVISE_FLAGS_ALL		SXRC_ADVISE_FLAG_FLUSH
/* Most entries one SXRC_MR_ADVISE takes. */
#define SXRC_ADVISE_MAX_SGE		1024

/**
 * struct sxrc_advise_mr_in - input of SXRC_MR_ADVISE (no output)
 * @sg_list: user pointer to @num_sge struct sxrc_sge, each naming an
 *	on-demand region of @pd_handle by its lkey
 * @pd_handle: the PD
 * @advice: SXRC_ADVISE_*; another value gets EOPNOTSUPP
 * @flags: SXRC_ADVISE_FLAG_*; another bit gets EINVAL
 * @num_sge: entries, 1 to SXRC_ADVISE_MAX_SGE (EINVAL)
 *
 * PREFETCH faults the ranges in for reading, PREFETCH_WRITE for writing
 * (the region must have SXRC_ACCESS_LOCAL_WRITE); PREFETCH_NO_FAULT only
 * checks them, as the module keeps no translation between accesses.
 * The work is done before the call returns, with or without FLUSH.  An
 * lkey that names no on-demand region of the PD, a range outside its
 * region, or one that is not mapped gets EFAULT.
 */
struct sxrc_advise_mr_in {
	__aligned_u64 sg_list;
	__u32 pd_handle;
	__u32 advice;
	__u32 flags;
	__u32 num_sge;
};

/**
 * struct sxrc_query_mr_out - output of SXRC_MR_QUERY (input struct
 *	sxrc_handle_in): what ibv_import_mr() needs
 * @addr: start of the range in the address space of the process that
 *	registered it (meaningless in any other)
 * @length: bytes
 * @iova: address of the first byte in work requests
 * @lkey: local key
 * @rkey: remote key (equal to @lkey)
 * @access: SXRC_ACCESS_*
 * @pd_handle: its PD
 *
 * ENOENT for a handle that names nothing, EINVAL for one that names an
 * object of another class.
 */
struct sxrc_query_mr_out {
	__aligned_u64 addr;
	__aligned_u64 length;
	__aligned_u64 iova;
	__u32 lkey;
	__u32 rkey;
	__u32 access;
	__u32 pd_handle;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_MW
 *
 * A memory window gives peers remote access, through its own rkey, to a
 * range of an MR registered with SXRC_ACCESS_MW_BIND, with rights of its
 * own.  It is bound (and a type 1 window unbound) by a SXRC_WR_BIND_MW
 * WQE on a QP of its PD; the MR must be in the same PD.  A type 2
 * window (IBTA type 2B) is reached only through the QP that bound it,
 * and is invalidated by SXRC_WR_LOCAL_INV or SXRC_WR_SEND_WITH_INV; a
 * type 1 window is reached through any QP of its PD and cannot be
 * invalidated.  Window keys share the index space of MR keys; an MR
 * with a window bound cannot be deregistered or reregistered (EBUSY).
 * Deallocating a window unbinds it; accesses under way are waited for.
 */
enum sxrc_mw_method {
	SXRC_MW_ALLOC = 0,
	SXRC_MW_DEALLOC = 1,
};

/* mw_type values: enum ibv_mw_type */
#define SXRC_MW_TYPE_1		1
#define SXRC_MW_TYPE_2		2

/**
 * struct sxrc_alloc_mw_in - input of SXRC_MW_ALLOC
 * @user_cookie: opaque value for the library
 * @pd_handle: the PD
 * @mw_type: SXRC_MW_TYPE_*
 */
struct sxrc_alloc_mw_in {
	__aligned_u64 user_cookie;
	__u32 pd_handle;
	__u32 mw_type;
};

/**
 * struct sxrc_alloc_mw_out - output of SXRC_MW_ALLOC
 * @handle: the window's handle
 * @rkey: its first rkey; the window is not bound yet
 */
struct sxrc_alloc_mw_out {
	__u32 handle;
	__u32 rkey;
};

/* --------------------------------------------------------------------
 * Mapped rings
 *
 * CQ, SQ, RQ and SRQ rings live in kernel memory that the library maps
 * with mmap(fd, size, PROT_READ | PROT_WRITE, MAP_SHARED, offset), the
 * size and offset coming from the creating method.  A mapping keeps the
 * ring's memory alive after its object is destroyed, and is not
 * inherited by fork() children.  Rings are entries of a power-of-two
 * count; indices are free-running 32-bit counters, an index's slot is
 * index & (entries - 1).
 *
 * Who writes what, and the ordering each side keeps:
 *  - the producer fills a slot, then publishes it with a store-release
 *    of its index (smp_store_release / atomic_store_explicit(release));
 *  - the consumer reads the producer's index with a load-acquire, reads
 *    the slots, then hands them back with a store-release of its own
 *    index.
 * The kernel never trusts what the library wrote: an index more than
 * the ring size ahead of the other is a corrupt ring, and every WQE
 * field is range-checked before use; a corrupt ring fails its queue
 * (the QP goes to the error state, the CQ reports IBV_EVENT_CQ_ERR), it
 * never harms the kernel or another process.
 */

/**
 * struct sxrc_ring_hdr - first 128 bytes of every mapped ring
 * @prod: producer index (CQ: the kernel; SQ, RQ, SRQ: the library)
 * @flags: SXRC_RING_* state bits, written by the kernel
 * @poll: SQ of an SXRC_CREATE_QP_SQPOLL QP only: SXRC_RING_POLL_* bits,
 *	written by the kernel; zero on every other ring
 * @pad0: keeps @prod and @cons on separate cache lines
 * @cons: consumer index (CQ: the library; SQ, RQ, SRQ: the kernel)
 * @arm: CQ only, written by the library to request an event
 *	(SXRC_CQ_ARM_*), cleared by the kernel when it fires
 * @pad1: to 128 bytes; the entries follow
 */
struct sxrc_ring_hdr {
	__u32 prod;
	__u32 flags;
	__u32 poll;
	__u8 pad0[52];
	__u32 cons;
	__u32 arm;
	__u8 pad1[56];
};

#define SXRC_RING_HDR_SIZE	128

/*
 * sxrc_ring_hdr.flags.  SXRC_RING_ERROR: a CQ overran or its ring was
 * corrupt; or a QP entered the error state: receives posted from then on
 * are flushed once the library rings the doorbell.
 */
#define SXRC_RING_ERROR		_BITUL(0)

/*
 * sxrc_ring_hdr.poll.  SXRC_RING_POLL_WAKEUP: the polling thread sleeps;
 * whoever publishes a new producer index rings the doorbell, which runs
 * the queue and wakes the thread.  Publishing pairs with the thread as
 * CQ arming does with a completion: the library stores @prod, then a
 * full barrier, then reads @poll; the thread stores @poll, then a full
 * barrier, then reads @prod once more before it sleeps.  While the bit
 * is clear, a doorbell is not needed (and still allowed).
 */
#define SXRC_RING_POLL_WAKEUP	_BITUL(0)

/*
 * CQ arming.  ibv_req_notify_cq() stores SXRC_CQ_ARM_NEXT or
 * SXRC_CQ_ARM_SOLICITED in @arm, then a full barrier, then the library
 * polls once more (a completion that raced with the arm is not lost: the
 * kernel stores the CQE and the producer index, then a full barrier,
 * then reads @arm, so one of the two sides sees the other).  When a
 * matching completion arrives the kernel swaps @arm back to 0 and
 * signals the CQ's channel once.
 *
 * An arm also fires for completions already waiting in the ring when it
 * is stored, as a ConnectX CQ's does (its arm names the next index to be
 * polled): software written for that hardware arms without polling
 * again.  After the barrier the library looks at the slots between @cons
 * and @prod; if one matches the arm (any completion, or for
 * SXRC_CQ_ARM_SOLICITED a solicited or failed one), it calls
 * SXRC_CQ_NOTIFY, and the kernel fires the arm if it is still set and
 * the ring still holds a completion past @cons.
 */
#define SXRC_CQ_ARM_NONE	0
#define SXRC_CQ_ARM_NEXT	1
#define SXRC_CQ_ARM_SOLICITED	2

/* sxrc_cqe.status: the values of enum ibv_wc_status */
#define SXRC_WC_SUCCESS			0
#define SXRC_WC_LOC_LEN_ERR		1
#define SXRC_WC_LOC_QP_OP_ERR		2
#define SXRC_WC_LOC_PROT_ERR		4
#define SXRC_WC_WR_FLUSH_ERR		5
#define SXRC_WC_MW_BIND_ERR		6
#define SXRC_WC_REM_INV_REQ_ERR		9
#define SXRC_WC_REM_ACCESS_ERR		10
#define SXRC_WC_REM_OP_ERR		11
#define SXRC_WC_RETRY_EXC_ERR		12
#define SXRC_WC_RNR_RETRY_EXC_ERR	13
#define SXRC_WC_GENERAL_ERR		21

/* sxrc_cqe.opcode: the values of enum ibv_wc_opcode */
#define SXRC_WC_OP_SEND			0
#define SXRC_WC_OP_RDMA_WRITE		1
#define SXRC_WC_OP_RDMA_READ		2
#define SXRC_WC_OP_COMP_SWAP		3
#define SXRC_WC_OP_FETCH_ADD		4
#define SXRC_WC_OP_BIND_MW		5
#define SXRC_WC_OP_LOCAL_INV		6
#define SXRC_WC_OP_RECV			128
#define SXRC_WC_OP_RECV_RDMA_WITH_IMM	129

/* sxrc_cqe.wc_flags: the values of enum ibv_wc_flags */
#define SXRC_WC_GRH			_BITUL(0)
#define SXRC_WC_WITH_IMM		_BITUL(1)
#define SXRC_WC_WITH_INV		_BITUL(3)

/**
 * struct sxrc_cqe - one completion, written by the kernel
 * @wr_id: the work request's id
 * @status: enum ibv_wc_status
 * @opcode: enum ibv_wc_opcode
 * @vendor_err: softxrc reason code for an error status (SXRC_VERR_*)
 * @byte_len: bytes received (receive completions), or transferred
 * @imm_data: immediate data, network order; or the invalidated rkey
 *	(IBV_WC_WITH_INV)
 * @qp_num: the local QP
 * @src_qp: the sender's QP (UD)
 * @wc_flags: IBV_WC_GRH, IBV_WC_WITH_IMM, IBV_WC_WITH_INV
 * @pkey_index: P_Key index (UD)
 * @slid: the sender's LID (UD)
 * @sl: service level
 * @dlid_path_bits: destination LID path bits
 * @solicited: the message asked for a solicited event
 * @reserved: zero
 */
struct sxrc_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;
	__u32 vendor_err;
	__u32 byte_len;
	__u32 imm_data;
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 solicited;
	__u8 reserved;
};

/**
 * struct sxrc_cqe_ts - a completion and when it was produced
 * @cqe: the completion
 * @ts_ns: CLOCK_MONOTONIC, in nanoseconds, when the kernel produced it
 *	(the "completion clock": the same clock clock_gettime() reads, so
 *	the device's raw clock is CLOCK_MONOTONIC at 1 GHz)
 * @wallclock_ns: CLOCK_REALTIME at the same moment, nanoseconds since
 *	the Epoch
 *
 * The slot of a CQ created with SXRC_CQ_CREATE_TIMESTAMP.
 */
struct sxrc_cqe_ts {
	struct sxrc_cqe cqe;
	__aligned_u64 ts_ns;
	__aligned_u64 wallclock_ns;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_CQ
 */
enum sxrc_cq_method {
	SXRC_CQ_CREATE = 0,
	SXRC_CQ_DESTROY = 1,
	SXRC_CQ_RESIZE = 2,
	SXRC_CQ_NOTIFY = 3,
};

/*
 * SXRC_CQ_NOTIFY (input struct sxrc_handle_in, no output): fire the CQ's
 * arm now if it is set and a completion waits past @cons ("CQ arming"
 * above).  0 whether or not it fired.
 */

/**
 * struct sxrc_create_cq_in - input of SXRC_CQ_CREATE
 * @user_cookie: returned in async events and channel events
 * @cqe: entries wanted, 1 to max_cqe
 * @channel_fd: completion channel fd, or -1 for none
 * @comp_vector: completion vector, < num_comp_vectors
 * @flags: SXRC_CQ_CREATE_* (SXRC_FEATURE_CQE_TIMESTAMP announces them)
 */
struct sxrc_create_cq_in {
	__aligned_u64 user_cookie;
	__u32 cqe;
	__s32 channel_fd;
	__u32 comp_vector;
	__u32 flags;
};

/* sxrc_create_cq_in.flags */
#define SXRC_CQ_CREATE_TIMESTAMP	_BITUL(0)	/* slots: sxrc_cqe_ts */
#define SXRC_CQ_CREATE_FLAGS_ALL	SXRC_CQ_CREATE_TIMESTAMP

/**
 * struct sxrc_cq_ring_out - output of SXRC_CQ_CREATE and _RESIZE
 * @handle: the CQ
 * @cqe: entries the ring holds (a power of two, >= what was asked)
 * @mmap_offset: offset to mmap the ring at
 * @mmap_size: bytes to map: SXRC_RING_HDR_SIZE + @cqe * @cqe_stride,
 *	rounded up to a page
 * @cqe_stride: bytes per slot: sizeof(struct sxrc_cqe), or
 *	sizeof(struct sxrc_cqe_ts) for a CQ created with
 *	SXRC_CQ_CREATE_TIMESTAMP (a kernel that defines only the first
 *	SXRC_CQ_RING_OUT_V1 bytes knows no flag, and its slots are
 *	struct sxrc_cqe)
 * @reserved: zero
 */
struct sxrc_cq_ring_out {
	__u32 handle;
	__u32 cqe;
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 cqe_stride;
	__u32 reserved;
};

#define SXRC_CQ_RING_OUT_V1	24

/**
 * struct sxrc_resize_cq_in - input of SXRC_CQ_RESIZE
 * @handle: the CQ
 * @cqe: new size, at least the completions now queued
 *
 * Unpolled completions move to the new ring, which the library maps in
 * place of the old one (the old mapping stays valid, but is dead).
 */
struct sxrc_resize_cq_in {
	__u32 handle;
	__u32 cqe;
};

/**
 * struct sxrc_destroy_out - output of destroying a CQ, QP or SRQ
 * @comp_events: channel events ever reported for the object
 * @async_events: async events ever reported for the object
 *
 * The library waits until the application acknowledged as many.
 */
struct sxrc_destroy_out {
	__u32 comp_events;
	__u32 async_events;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_CHANNEL
 *
 * A completion channel is a file of its own (it can be polled apart from
 * the device fd); it lives until that fd is closed.  read() returns whole
 * struct sxrc_comp_event records, as the device fd does for async events.
 */
enum sxrc_channel_method {
	SXRC_CHANNEL_CREATE = 0,
};

/**
 * struct sxrc_channel_out - output of SXRC_CHANNEL_CREATE (no input)
 * @fd: the new channel's file descriptor (O_CLOEXEC)
 * @reserved: zero
 */
struct sxrc_channel_out {
	__s32 fd;
	__u32 reserved;
};

/**
 * struct sxrc_comp_event - one record read from a channel fd
 * @cq_cookie: user_cookie of the CQ that fired
 */
struct sxrc_comp_event {
	__aligned_u64 cq_cookie;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_CM
 *
 * The communication manager of a link device (IBA vol. 1 chapter 12, as
 * RoCEv2 hosts run it on QP1: UD packets to and from QP 1, Q_Key
 * 0x80010000, one 256-byte MAD of class 0x07 each).  The module owns QP1
 * and the protocol: it numbers connections (local comm IDs), stamps every
 * MAD's header, source QP, keys, GUID and GIDs, retransmits requests
 * until answered, answers duplicates (the REP again for a repeated REQ,
 * the RTU again for a repeated REP, an MRA while a REQ waits for the
 * application), sends the DREP for a DREQ itself, and answers a REQ or
 * SIDR_REQ for a service ID nobody listens on at once (REJ reason 8,
 * SIDR_REP status 1).  A process says which message to send and with
 * which parameters and private data; it reads what arrived, decoded, as
 * events.  rdma_cm's conventions (service IDs from port spaces, the
 * cma_hdr in private data, address resolution) are the library's.
 *
 * Only a link device has a CM (SXRC_FEATURE_CM in its sxrc_query_ctx_out,
 * and every method EOPNOTSUPP on another device).
 *
 * A CM channel is a file of its own, as a completion channel is: read()
 * returns whole struct sxrc_cm_event records (EAGAIN when none waits and
 * the fd is non-blocking, else it waits); poll() reports POLLIN while one
 * is queued.  A channel queues at most SXRC_CM_MAX_EVENTS records; the
 * module stops answering new REQs to a listener whose channel is full
 * (the peer retries, as with a host that is slow), and never drops an
 * event of an established id.
 *
 * A CM id is an object of the context (a handle, destroyed with the
 * context like every other) bound to one channel.  It is one of:
 *  - a listener: SXRC_CM_LISTEN on a service ID.  One listener per
 *    service ID and device, whichever context made it (EADDRINUSE).
 *    Each REQ or SIDR_REQ for it makes a new id in the listener's
 *    context, on the listener's channel; its handle comes in the event.
 *    At most @backlog such ids wait for the application's answer (REP or
 *    REJ; SIDR_REP) at a time: past that REQs are not answered.
 *  - a connection, on the active side: SXRC_CM_CREATE_ID, then a REQ or
 *    SIDR_REQ sent on it;
 *  - a connection, on the passive side: made by a REQ or SIDR_REQ.
 *
 * What the module checks on every send: the message fits the id's state
 * (IBA figure 138: a REP only on an id that received a REQ and has not
 * answered it, an RTU only after a REP arrived, a DREQ only when
 * established, ...: EINVAL otherwise); @qp_handle names a QP of the
 * caller's context on this device of the type the message says; the
 * source GID is one of the link's own; private data within the message's
 * size (EINVAL).  So no process can name another's QP or connection, or
 * another host's address: the peer of a passive id is whoever sent its
 * REQ, and of an active one whoever its REQ went to.
 *
 * Destroying an id (or closing the context) ends its connection as the
 * IB CM does: a REJ for a REQ not yet answered or a REP not yet
 * acknowledged (reason 28, consumer reject; reason 1, timeout, on the
 * active side), a DREQ for an established one; a listener stops
 * listening.  The module sends these itself and keeps nothing of the id
 * afterwards but the comm ID, which it does not reuse for a while (time
 * wait: a late MAD for it is dropped).
 */
enum sxrc_cm_method {
	SXRC_CM_CHANNEL_CREATE = 0,
	SXRC_CM_CREATE_ID = 1,
	SXRC_CM_DESTROY_ID = 2,
	SXRC_CM_LISTEN = 3,
	SXRC_CM_SEND = 4,
};

/* Events a CM channel holds at most; listeners a backlog of at most. */
#define SXRC_CM_MAX_EVENTS	1024
#define SXRC_CM_MAX_BACKLOG	256

/*
 * SXRC_CM_CHANNEL_CREATE: no input; output struct sxrc_channel_out (the
 * new channel's fd, O_CLOEXEC).
 *
 * SXRC_CM_DESTROY_ID: input struct sxrc_handle_in, no output.
 */

/**
 * struct sxrc_cm_create_id_in - input of SXRC_CM_CREATE_ID
 * @user_cookie: returned in the id's events
 * @channel_fd: a CM channel of this device (EINVAL otherwise)
 * @reserved: zero
 *
 * Output: struct sxrc_handle_out, the new id's handle.
 */
struct sxrc_cm_create_id_in {
	__aligned_u64 user_cookie;
	__s32 channel_fd;
	__u32 reserved;
};

/**
 * struct sxrc_cm_listen_in - input of SXRC_CM_LISTEN (no output)
 * @service_id: the 64-bit service ID (host byte order), listened on
 *	exactly (rdma_cm's: port space << 16 | port, in 0x0000000001xxxxxx)
 * @handle: an id that is neither connected nor listening
 * @backlog: 1 to SXRC_CM_MAX_BACKLOG: ids made for REQs that may wait
 *	for an answer at a time
 *
 * EADDRINUSE: some id of the device listens on @service_id already.
 */
struct sxrc_cm_listen_in {
	__aligned_u64 service_id;
	__u32 handle;
	__u32 backlog;
};

/**
 * enum sxrc_cm_msg - CM messages: the MAD attribute IDs (IBA table 104)
 * @SXRC_CM_MSG_REQ: request a connection (active side)
 * @SXRC_CM_MSG_MRA: "message received, answer later"
 * @SXRC_CM_MSG_REJ: reject a REQ or REP
 * @SXRC_CM_MSG_REP: accept a REQ (passive side)
 * @SXRC_CM_MSG_RTU: ready to use: the REP arrived (active side)
 * @SXRC_CM_MSG_DREQ: disconnect
 * @SXRC_CM_MSG_DREP: disconnected (the module answers every DREQ)
 * @SXRC_CM_MSG_SIDR_REQ: resolve a service ID to a UD QP (active side)
 * @SXRC_CM_MSG_SIDR_REP: its answer (passive side)
 */
enum sxrc_cm_msg {
	SXRC_CM_MSG_REQ = 0x10,
	SXRC_CM_MSG_MRA = 0x11,
	SXRC_CM_MSG_REJ = 0x12,
	SXRC_CM_MSG_REP = 0x13,
	SXRC_CM_MSG_RTU = 0x14,
	SXRC_CM_MSG_DREQ = 0x15,
	SXRC_CM_MSG_DREP = 0x16,
	SXRC_CM_MSG_SIDR_REQ = 0x17,
	SXRC_CM_MSG_SIDR_REP = 0x18,
};

/* Private data each message carries at most (bytes). */
#define SXRC_CM_REQ_PDATA	92
#define SXRC_CM_MRA_PDATA	222
#define SXRC_CM_REJ_PDATA	148
#define SXRC_CM_REP_PDATA	196
#define SXRC_CM_RTU_PDATA	224
#define SXRC_CM_DREQ_PDATA	220
#define SXRC_CM_DREP_PDATA	224
#define SXRC_CM_SIDR_REQ_PDATA	216
#define SXRC_CM_SIDR_REP_PDATA	136
#define SXRC_CM_MAX_PDATA	224

/* Transport types of a REQ (sxrc_cm_conn.transport). */
#define SXRC_CM_TRANSPORT_RC	0
#define SXRC_CM_TRANSPORT_UC	1
#define SXRC_CM_TRANSPORT_XRC	3

/* REJ reasons the module itself sends (IBA table 112). */
#define SXRC_CM_REJ_TIMEOUT		1
#define SXRC_CM_REJ_INVALID_SERVICE_ID	8
#define SXRC_CM_REJ_STALE_CONN		10
#define SXRC_CM_REJ_CONSUMER_DEFINED	28

/**
 * struct sxrc_cm_conn - a connection's parameters, as a REQ, REP or
 *	SIDR message carries them (in struct sxrc_cm_send_in and struct
 *	sxrc_cm_event); each message uses the fields its comment names,
 *	the others are zero
 * @service_id: REQ, SIDR_REQ (host byte order)
 * @gid: the peer's GID: where a REQ or SIDR_REQ goes (send); where a
 *	message came from (event)
 * @local_gid: the link's GID the connection uses: a REQ's or SIDR_REQ's
 *	source (send: must be one of the link's); the GID a message came
 *	to (event)
 * @qpn: REQ, REP: the sender's QP (send: the module takes it from
 *	the QP sxrc_cm_send_in names); SIDR_REP: the UD QP; XRC REP: the
 *	XRC target QP
 * @psn: REQ, REP: the PSN the sender's receive queue starts at, which
 *	the other side sends with first (24 bits; as ib_cm reads it)
 * @qkey: SIDR_REP: the UD QP's Q_Key
 * @flow_label: REQ: the path's flow label (20 bits)
 * @transport: REQ: SXRC_CM_TRANSPORT_*
 * @responder_resources: REQ, REP: RDMA READs and atomics the sender
 *	takes at once
 * @initiator_depth: REQ, REP: ... and sends at once
 * @retry_count: REQ: the transport's retry count (3 bits)
 * @rnr_retry_count: REQ, REP: the RNR retry count (3 bits)
 * @path_mtu: REQ: IBV_MTU_* (1 to 5)
 * @local_ack_timeout: REQ: the path's ack timeout (5 bits)
 * @traffic_class: REQ: the path's traffic class
 * @hop_limit: REQ: the path's hop limit
 * @srq: REQ, REP: the sender's QP has an SRQ
 * @flow_control: REQ, REP: end-to-end flow control
 * @status: SIDR_REP: its status (0: the QP is valid)
 * @max_cm_retries: REQ, SIDR_REQ: times the module resends it, 0 to 15
 *	(also the REP's, when the REQ came with it)
 * @cm_response_timeout: REQ, SIDR_REQ: 4.096 us << this is how long the
 *	module waits for an answer before resending (0 to 31; the module
 *	waits at least 100 ms and at most 60 s)
 * @reserved: zero
 */
struct sxrc_cm_conn {
	__aligned_u64 service_id;
	__u8 gid[16];
	__u8 local_gid[16];
	__u32 qpn;
	__u32 psn;
	__u32 qkey;
	__u32 flow_label;
	__u8 transport;
	__u8 responder_resources;
	__u8 initiator_depth;
	__u8 retry_count;
	__u8 rnr_retry_count;
	__u8 path_mtu;
	__u8 local_ack_timeout;
	__u8 traffic_class;
	__u8 hop_limit;
	__u8 srq;
	__u8 flow_control;
	__u8 status;
	__u8 max_cm_retries;
	__u8 cm_response_timeout;
	__u16 reserved;
};

/**
 * struct sxrc_cm_send_in - input of SXRC_CM_SEND (no output)
 * @handle: the id
 * @msg: enum sxrc_cm_msg
 * @pdata_len: bytes of private data at @pdata, at most the message's
 *	SXRC_CM_*_PDATA; the rest of the MAD's private data is zero
 * @pdata: user pointer to the private data (0 when @pdata_len is 0)
 * @qp_handle: REQ, REP: the caller's QP (RC, UC, or XRC send QP for a
 *	REQ; RC, UC or XRC receive QP for a REP, whose QPN the peer
 *	connects to: an XRC receive QP by the handle of the caller's
 *	registration of it, as SXRC_QP_CREATE gave it); SIDR_REP: the
 *	caller's UD QP (zero for one whose @conn.status is not 0);
 *	otherwise zero.  Zero for a REQ or REP (or SIDR_REP) whose
 *	@conn.qpn is the number of one of the caller's QPs on the device,
 *	or of an XRC receive QP the caller is registered with: the
 *	module finds it (rdma_cm names an application's own QP by
 *	number only)
 * @reason: REJ: the reason (IBA table 112)
 * @mra_timeout: MRA: 4.096 us << this is how long the peer should wait
 *	now (5 bits)
 * @reserved: zero
 * @conn: the parameters (struct sxrc_cm_conn says which message uses
 *	which)
 *
 * EINVAL: a message the id's state does not allow, a handle or field
 * out of range; EAGAIN: the link has no route to @conn.gid yet (the
 * neighbour is being resolved: try again); ENETDOWN: the link's netdev
 * is down.
 */
struct sxrc_cm_send_in {
	__u32 handle;
	__u16 msg;
	__u16 pdata_len;
	__aligned_u64 pdata;
	__u32 qp_handle;
	__u16 reason;
	__u8 mra_timeout;
	__u8 reserved;
	struct sxrc_cm_conn conn;
};

/**
 * enum sxrc_cm_event_type - what a struct sxrc_cm_event reports
 * @SXRC_CM_EVENT_REQ: a REQ for a listener: @handle is a new id for it,
 *	@conn what the REQ said
 * @SXRC_CM_EVENT_SIDR_REQ: the same, for a SIDR_REQ
 * @SXRC_CM_EVENT_REP: the answer to this id's REQ; answer it with an
 *	RTU or a REJ
 * @SXRC_CM_EVENT_RTU: the REP this id sent was acknowledged: established
 * @SXRC_CM_EVENT_REJ: the peer rejected; @reason says why
 * @SXRC_CM_EVENT_MRA: the peer will answer later (the module already
 *	waits longer)
 * @SXRC_CM_EVENT_DREQ: the peer disconnects (the module sent the DREP)
 * @SXRC_CM_EVENT_DREP: the answer to this id's DREQ: disconnected
 * @SXRC_CM_EVENT_SIDR_REP: the answer to this id's SIDR_REQ
 * @SXRC_CM_EVENT_TIMEOUT: the message @msg went unanswered through all
 *	its retries (REQ: the peer is unreachable; REP: the connection is
 *	gone; DREQ: disconnected anyway; SIDR_REQ: unreachable)
 * @SXRC_CM_EVENT_ESTABLISHED: data arrived on the QP of an id whose RTU
 *	is still missing (reserved: not reported yet)
 */
enum sxrc_cm_event_type {
	SXRC_CM_EVENT_REQ = 1,
	SXRC_CM_EVENT_SIDR_REQ = 2,
	SXRC_CM_EVENT_REP = 3,
	SXRC_CM_EVENT_RTU = 4,
	SXRC_CM_EVENT_REJ = 5,
	SXRC_CM_EVENT_MRA = 6,
	SXRC_CM_EVENT_DREQ = 7,
	SXRC_CM_EVENT_DREP = 8,
	SXRC_CM_EVENT_SIDR_REP = 9,
	SXRC_CM_EVENT_TIMEOUT = 10,
	SXRC_CM_EVENT_ESTABLISHED = 11,
};

/**
 * struct sxrc_cm_event - one record read from a CM channel
 * @user_cookie: the id's (REQ, SIDR_REQ: the listener's; an id made for
 *	a REQ or SIDR_REQ has its listener's cookie for good)
 * @event: enum sxrc_cm_event_type
 * @handle: the id the event is about (REQ, SIDR_REQ: the new one)
 * @msg: TIMEOUT: the message that went unanswered (enum sxrc_cm_msg)
 * @reason: REJ: the reason
 * @pdata_len: bytes of @pdata the message carried (its whole private
 *	data field: a CM message does not say how much of it was used)
 * @reserved: zero
 * @conn: REQ, SIDR_REQ, REP, SIDR_REP: the message's parameters
 *	(struct sxrc_cm_conn); otherwise only @conn.gid and
 *	@conn.local_gid
 * @pdata: the message's private data
 */
struct sxrc_cm_event {
	__aligned_u64 user_cookie;
	__u32 event;
	__u32 handle;
	__u16 msg;
	__u16 reason;
	__u16 pdata_len;
	__u16 reserved;
	struct sxrc_cm_conn conn;
	__u8 pdata[SXRC_CM_MAX_PDATA];
};

/* --------------------------------------------------------------------
 * Work queue entries (in the SQ, RQ and SRQ rings)
 */

/**
 * struct sxrc_sge - one scatter/gather element
 * @addr: address, in the MR's iova space
 * @length: bytes
 * @lkey: the MR
 */
struct sxrc_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/**
 * struct sxrc_recv_wqe - a receive WQE; @num_sge sxrc_sge follow it
 * @wr_id: the work request's id
 * @num_sge: scatter entries that follow, <= the queue's max_recv_sge
 * @reserved: zero
 */
struct sxrc_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
};

/* sxrc_send_wqe.opcode: the values of enum ibv_wr_opcode */
#define SXRC_WR_RDMA_WRITE		0
#define SXRC_WR_RDMA_WRITE_WITH_IMM	1
#define SXRC_WR_SEND			2
#define SXRC_WR_SEND_WITH_IMM		3
#define SXRC_WR_RDMA_READ		4
#define SXRC_WR_ATOMIC_CMP_AND_SWP	5
#define SXRC_WR_ATOMIC_FETCH_AND_ADD	6
#define SXRC_WR_LOCAL_INV		7
#define SXRC_WR_BIND_MW			8
#define SXRC_WR_SEND_WITH_INV		9

/* sxrc_send_wqe.send_flags: the values of enum ibv_send_flags */
#define SXRC_SEND_FENCE			_BITUL(0)
#define SXRC_SEND_SIGNALED		_BITUL(1)
#define SXRC_SEND_SOLICITED		_BITUL(2)
#define SXRC_SEND_INLINE		_BITUL(3)
#define SXRC_SEND_FLAGS_ALL		(SXRC_SEND_FENCE | SXRC_SEND_SIGNALED | \
					 SXRC_SEND_SOLICITED | SXRC_SEND_INLINE)

/**
 * struct sxrc_send_wqe - a send WQE; sxrc_sge entries, or inline data
 *	when IBV_SEND_INLINE is set, follow it
 * @wr_id: the work request's id
 * @opcode: enum ibv_wr_opcode
 * @send_flags: IBV_SEND_FENCE, _SIGNALED, _SOLICITED, _INLINE
 * @imm_data: immediate data (network order) or the rkey to invalidate
 * @num_sge: gather entries that follow; with IBV_SEND_INLINE, the number
 *	of inline bytes that follow
 * @remote_addr: RDMA and atomic target address
 * @rkey: RDMA and atomic target key
 * @remote_qpn: UD destination QP
 * @compare_add: atomic compare (CMP_AND_SWP) or addend (FETCH_AND_ADD)
 * @swap: atomic swap value
 * @ah_handle: UD address handle
 * @remote_qkey: UD destination Q_Key
 * @remote_srqn: XRC destination SRQ number
 * @reserved: zero
 *
 * SXRC_WR_BIND_MW (RC and UC QPs) binds a memory window and carries no
 * gather list: @rkey is the window's current rkey, @imm_data the rkey it
 * gets (the same index, bits 31:8; a new key byte, bits 7:0),
 * @remote_addr and @compare_add the start (in the MR's iova space) and
 * the length of the window, @swap its SXRC_ACCESS_MW_ALL rights (and
 * SXRC_ACCESS_LOCAL_WRITE, which is ignored), and
 * @remote_qpn the lkey of the MR it is bound to.  A type 1 window with
 * a length of 0 is unbound.  Any failure completes with
 * SXRC_WC_MW_BIND_ERR and leaves the window as it was.
 */
struct sxrc_send_wqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 imm_data;
	__u32 num_sge;
	__aligned_u64 remote_addr;
	__u32 rkey;
	__u32 remote_qpn;
	__aligned_u64 compare_add;
	__aligned_u64 swap;
	__u32 ah_handle;
	__u32 remote_qkey;
	__u32 remote_srqn;
	__u32 reserved;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_QP
 */
enum sxrc_qp_method {
	SXRC_QP_CREATE = 0,
	SXRC_QP_DESTROY = 1,
	SXRC_QP_MODIFY = 2,
	SXRC_QP_QUERY = 3,
	SXRC_QP_ATTACH_MCAST = 4,
	SXRC_QP_DETACH_MCAST = 5,
	SXRC_QP_OPEN = 6,
};

/* qp_type values: enum ibv_qp_type */
#define SXRC_QPT_RC		2
#define SXRC_QPT_UC		3
#define SXRC_QPT_UD		4
#define SXRC_QPT_XRC_SEND	9
#define SXRC_QPT_XRC_RECV	10

/* QP states: enum ibv_qp_state */
enum sxrc_qp_state {
	SXRC_QPS_RESET,
	SXRC_QPS_INIT,
	SXRC_QPS_RTR,
	SXRC_QPS_RTS,
	SXRC_QPS_SQD,
	SXRC_QPS_SQE,
	SXRC_QPS_ERR,
};

/**
 * struct sxrc_create_qp_in - input of SXRC_QP_CREATE
 * @user_cookie: returned in async events about the QP
 * @pd_handle: the PD
 * @send_cq_handle: CQ of the send queue
 * @recv_cq_handle: CQ of the receive queue
 * @srq_handle: SRQ to receive from (RC, UD only), 0 for none
 * @qp_type: SXRC_QPT_*
 * @sq_sig_all: every send WR completes, whatever its flags
 * @max_send_wr: send queue depth
 * @max_recv_wr: receive queue depth (ignored with an SRQ)
 * @max_send_sge: gather entries per send WR
 * @max_recv_sge: scatter entries per receive WR (ignored with an SRQ)
 * @max_inline_data: inline bytes per send WR
 * @flags: SXRC_CREATE_QP_* (zero for XRC_RECV)
 * @xrcd_handle: XRC_RECV: the XRC domain (an SXRC_XRCD_OPEN handle); the
 *	QP belongs to the domain and the handle returned is this context's
 *	registration with it.  Zero for the other types.
 * @reserved: zero
 *
 * XRC_SEND QPs have a send queue only (no receive queue, no SRQ, the
 * receive CQ is optional); XRC_RECV QPs have no queues, no CQs and no PD
 * (@pd_handle, the CQ handles and the caps must be zero).
 *
 * Version 1 of this structure ended at @flags (56 bytes); the kernel
 * accepts both sizes.
 */
struct sxrc_create_qp_in {
	__aligned_u64 user_cookie;
	__u32 pd_handle;
	__u32 send_cq_handle;
	__u32 recv_cq_handle;
	__u32 srq_handle;
	__u32 qp_type;
	__u32 sq_sig_all;
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u32 flags;
	__u32 xrcd_handle;
	__u32 reserved;
};

#define SXRC_CREATE_QP_IN_V1	56

/*
 * sxrc_create_qp_in.flags.  SXRC_CREATE_QP_SQPOLL (SXRC_FEATURE_SQPOLL):
 * the device's polling thread runs the send queue whenever its producer
 * index moves, as a doorbell would; the library rings the doorbell only
 * while the ring says SXRC_RING_POLL_WAKEUP (see struct sxrc_ring_hdr).
 * Any other bit: EINVAL.
 */
#define SXRC_CREATE_QP_SQPOLL	_BITUL(0)
#define SXRC_CREATE_QP_FLAGS_ALL	SXRC_CREATE_QP_SQPOLL

/**
 * struct sxrc_wq_info - one work queue ring of a QP or SRQ
 * @entries: slots in the ring (a power of two); the usable depth is
 *	what sxrc_create_qp_out.cap reports
 * @stride: bytes per slot
 * @mmap_offset: offset to mmap the ring at
 * @mmap_size: bytes to map (0: the queue has no ring, e.g. the RQ of a
 *	QP on an SRQ)
 */
struct sxrc_wq_info {
	__u32 entries;
	__u32 stride;
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
};

/**
 * struct sxrc_qp_cap - queue capacities, as struct ibv_qp_cap
 * @max_send_wr: send queue depth
 * @max_recv_wr: receive queue depth
 * @max_send_sge: gather entries per send WR
 * @max_recv_sge: scatter entries per receive WR
 * @max_inline_data: inline bytes per send WR
 * @reserved: zero
 */
struct sxrc_qp_cap {
	__u32 max_send_wr;
	__u32 max_recv_wr;
	__u32 max_send_sge;
	__u32 max_recv_sge;
	__u32 max_inline_data;
	__u32 reserved;
};

/**
 * struct sxrc_create_qp_out - output of SXRC_QP_CREATE
 * @handle: the QP
 * @qp_num: its QP number (24 bits)
 * @cap: what the QP got, each >= what was asked
 * @sq: the send queue ring
 * @rq: the receive queue ring (mmap_size 0 on an SRQ)
 */
struct sxrc_create_qp_out {
	__u32 handle;
	__u32 qp_num;
	struct sxrc_qp_cap cap;
	struct sxrc_wq_info sq;
	struct sxrc_wq_info rq;
};

/**
 * struct sxrc_ah_attr - an address vector, as struct ibv_ah_attr
 * @dgid: destination GID (with @is_global)
 * @flow_label: GRH flow label
 * @sgid_index: source GID index
 * @hop_limit: GRH hop limit
 * @traffic_class: GRH traffic class
 * @is_global: a GRH is present
 * @dlid: destination LID
 * @sl: service level
 * @src_path_bits: source path bits
 * @static_rate: enum ibv_rate
 * @port_num: local port
 * @reserved: zero
 */
struct sxrc_ah_attr {
	__u8 dgid[16];
	__u32 flow_label;
	__u8 sgid_index;
	__u8 hop_limit;
	__u8 traffic_class;
	__u8 is_global;
	__u16 dlid;
	__u8 sl;
	__u8 src_path_bits;
	__u8 static_rate;
	__u8 port_num;
	__u8 reserved[2];
};

/* Attribute mask bits: the values of enum ibv_qp_attr_mask. */
#define SXRC_QP_STATE			_BITUL(0)
#define SXRC_QP_CUR_STATE		_BITUL(1)
#define SXRC_QP_EN_SQD_ASYNC_NOTIFY	_BITUL(2)
#define SXRC_QP_ACCESS_FLAGS		_BITUL(3)
#define SXRC_QP_PKEY_INDEX		_BITUL(4)
#define SXRC_QP_PORT			_BITUL(5)
#define SXRC_QP_QKEY			_BITUL(6)
#define SXRC_QP_AV			_BITUL(7)
#define SXRC_QP_PATH_MTU		_BITUL(8)
#define SXRC_QP_TIMEOUT			_BITUL(9)
#define SXRC_QP_RETRY_CNT		_BITUL(10)
#define SXRC_QP_RNR_RETRY		_BITUL(11)
#define SXRC_QP_RQ_PSN			_BITUL(12)
#define SXRC_QP_MAX_QP_RD_ATOMIC	_BITUL(13)
#define SXRC_QP_ALT_PATH		_BITUL(14)
#define SXRC_QP_MIN_RNR_TIMER		_BITUL(15)
#define SXRC_QP_SQ_PSN			_BITUL(16)
#define SXRC_QP_MAX_DEST_RD_ATOMIC	_BITUL(17)
#define SXRC_QP_PATH_MIG_STATE		_BITUL(18)
#define SXRC_QP_CAP			_BITUL(19)
#define SXRC_QP_DEST_QPN		_BITUL(20)
#define SXRC_QP_RATE_LIMIT		_BITUL(25)
#define SXRC_QP_ATTR_ALL		(_BITUL(21) - 1)

/**
 * struct sxrc_qp_attr - QP attributes, as struct ibv_qp_attr
 * @qp_state: enum sxrc_qp_state
 * @cur_qp_state: the state the caller believes the QP is in
 * @path_mtu: enum ibv_mtu
 * @path_mig_state: enum ibv_mig_state
 * @qkey: Q_Key (UD)
 * @rq_psn: receive PSN
 * @sq_psn: send PSN
 * @dest_qp_num: the connected peer QP (RC, UC)
 * @qp_access_flags: SXRC_ACCESS_REMOTE_* the QP grants; other bits are
 *	kept (and reported) but grant nothing
 * @cap: capacities (query only)
 * @ah_attr: primary path
 * @alt_ah_attr: alternate path
 * @pkey_index: P_Key index
 * @alt_pkey_index: alternate P_Key index
 * @en_sqd_async_notify: raise SQ_DRAINED when SQD is reached
 * @sq_draining: the SQ is draining (query only)
 * @max_rd_atomic: outstanding RDMA READ/atomic as initiator
 * @max_dest_rd_atomic: responder resources
 * @min_rnr_timer: RNR NAK timer (IBTA encoding)
 * @port_num: port
 * @timeout: local ack timeout (IBTA encoding)
 * @retry_cnt: transport retries
 * @rnr_retry: RNR retries (7: infinite)
 * @alt_port_num: alternate port
 * @alt_timeout: alternate ack timeout
 * @reserved0: zero
 * @rate_limit: rate limit in kbps (not supported: zero)
 */
struct sxrc_qp_attr {
	__u32 qp_state;
	__u32 cur_qp_state;
	__u32 path_mtu;
	__u32 path_mig_state;
	__u32 qkey;
	__u32 rq_psn;
	__u32 sq_psn;
	__u32 dest_qp_num;
	__u32 qp_access_flags;
	struct sxrc_qp_cap cap;
	struct sxrc_ah_attr ah_attr;
	struct sxrc_ah_attr alt_ah_attr;
	__u16 pkey_index;
	__u16 alt_pkey_index;
	__u8 en_sqd_async_notify;
	__u8 sq_draining;
	__u8 max_rd_atomic;
	__u8 max_dest_rd_atomic;
	__u8 min_rnr_timer;
	__u8 port_num;
	__u8 timeout;
	__u8 retry_cnt;
	__u8 rnr_retry;
	__u8 alt_port_num;
	__u8 alt_timeout;
	__u8 reserved0;
	__u32 rate_limit;
};

/**
 * struct sxrc_modify_qp_in - input of SXRC_QP_MODIFY
 * @handle: the QP
 * @attr_mask: SXRC_QP_* bits naming the fields of @attr to apply
 * @attr: the new attributes
 *
 * The transition from the current state to @attr.qp_state (or the
 * current state without SXRC_QP_STATE) must be one the IBTA allows for
 * the QP type, with every required attribute and no attribute the
 * transition does not take: otherwise EINVAL and nothing changes.
 */
struct sxrc_modify_qp_in {
	__u32 handle;
	__u32 attr_mask;
	struct sxrc_qp_attr attr;
};

/**
 * struct sxrc_query_qp_out - output of SXRC_QP_QUERY (input: handle)
 * @attr: current attributes; those never set read as zero
 * @qp_type: SXRC_QPT_*
 * @sq_sig_all: as created
 * @srq_handle: as created
 * @reserved: zero
 */
struct sxrc_query_qp_out {
	struct sxrc_qp_attr attr;
	__u32 qp_type;
	__u32 sq_sig_all;
	__u32 srq_handle;
	__u32 reserved;
};

/**
 * struct sxrc_mcast_in - input of SXRC_QP_ATTACH_MCAST and _DETACH_MCAST
 * @handle: the QP (UD only)
 * @lid: multicast LID
 * @reserved: zero
 * @gid: multicast GID (first byte 0xff)
 */
struct sxrc_mcast_in {
	__u32 handle;
	__u16 lid;
	__u16 reserved;
	__u8 gid[16];
};

/**
 * struct sxrc_open_qp_in - input of SXRC_QP_OPEN (output: a handle)
 * @user_cookie: returned in async events about the QP, for this handle
 * @xrcd_handle: the XRC domain (this context's SXRC_XRCD_OPEN handle)
 * @qp_num: an XRC_RECV QP of that domain
 * @qp_type: SXRC_QPT_XRC_RECV
 * @reserved: zero
 *
 * Registers this context with the receive QP (ibv_open_qp()): the handle
 * can modify and query the QP, and destroying it unregisters.  The QP
 * lives while any registration does.
 */
struct sxrc_open_qp_in {
	__aligned_u64 user_cookie;
	__u32 xrcd_handle;
	__u32 qp_num;
	__u32 qp_type;
	__u32 reserved;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_SRQ
 */
enum sxrc_srq_method {
	SXRC_SRQ_CREATE = 0,
	SXRC_SRQ_DESTROY = 1,
	SXRC_SRQ_MODIFY = 2,
	SXRC_SRQ_QUERY = 3,
};

/**
 * struct sxrc_create_srq_in - input of SXRC_SRQ_CREATE
 * @user_cookie: returned in async events about the SRQ
 * @pd_handle: the PD
 * @max_wr: depth, 1 to max_srq_wr
 * @max_sge: scatter entries per WR, 1 to max_srq_sge
 * @srq_limit: arm the limit event at this level (0: not armed)
 * @flags: zero
 * @reserved: zero
 * @srq_type: SXRC_SRQT_*
 * @xrcd_handle: SXRC_SRQT_XRC: the XRC domain (SXRC_XRCD_OPEN handle)
 * @cq_handle: SXRC_SRQT_XRC: the CQ its receive completions go to
 * @reserved2: zero
 *
 * Version 1 of this structure ended at @reserved (32 bytes).
 */
struct sxrc_create_srq_in {
	__aligned_u64 user_cookie;
	__u32 pd_handle;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
	__u32 flags;
	__u32 reserved;
	__u32 srq_type;
	__u32 xrcd_handle;
	__u32 cq_handle;
	__u32 reserved2;
};

#define SXRC_CREATE_SRQ_IN_V1	32

/* srq_type values: enum ibv_srq_type */
#define SXRC_SRQT_BASIC		0
#define SXRC_SRQT_XRC		1

/**
 * struct sxrc_create_srq_out - output of SXRC_SRQ_CREATE
 * @handle: the SRQ
 * @srq_num: its SRQ number
 * @max_wr: depth it got
 * @max_sge: scatter entries it got
 * @ring: its ring
 */
struct sxrc_create_srq_out {
	__u32 handle;
	__u32 srq_num;
	__u32 max_wr;
	__u32 max_sge;
	struct sxrc_wq_info ring;
};

/* attr_mask bits: the values of enum ibv_srq_attr_mask */
#define SXRC_SRQ_MAX_WR		_BITUL(0)
#define SXRC_SRQ_LIMIT		_BITUL(1)

/**
 * struct sxrc_srq_attr - in/out of SXRC_SRQ_MODIFY and _QUERY
 * @handle: the SRQ (input)
 * @attr_mask: SXRC_SRQ_* (modify input; resizing is not supported)
 * @max_wr: depth (query output)
 * @max_sge: scatter entries (query output)
 * @srq_limit: limit that arms the SRQ_LIMIT_REACHED event; <= max_wr
 * @reserved: zero
 */
struct sxrc_srq_attr {
	__u32 handle;
	__u32 attr_mask;
	__u32 max_wr;
	__u32 max_sge;
	__u32 srq_limit;
	__u32 reserved;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_AH
 */
enum sxrc_ah_method {
	SXRC_AH_CREATE = 0,
	SXRC_AH_DESTROY = 1,
};

/**
 * struct sxrc_create_ah_in - input of SXRC_AH_CREATE (output: a handle)
 * @user_cookie: opaque value for the library
 * @pd_handle: the PD
 * @reserved: zero
 * @attr: the address vector: port 1, a LID of a softxrc port on this host
 *	or a GRH whose destination GID is one of theirs (or multicast)
 */
struct sxrc_create_ah_in {
	__aligned_u64 user_cookie;
	__u32 pd_handle;
	__u32 reserved;
	struct sxrc_ah_attr attr;
};

/* --------------------------------------------------------------------
 * SXRC_OBJ_XRCD
 *
 * An XRC domain is shared by every process that opens it through the
 * same file (the inode, held by the domain, not the file: the file may
 * be closed or unlinked afterwards), on the same device.  Each open is a
 * handle of the opening context; the domain goes with the last.  As in
 * ib_uverbs, any descriptor of the file, read-only included, joins the
 * domain; a receive QP is named by number only together with the
 * caller's own open of its domain (else EINVAL).
 *
 * Its receive QPs (XRC_RECV) belong to the domain, not to a process.  A
 * context is registered with a receive QP by creating it, by
 * SXRC_QP_OPEN, or by SXRC_XRCD_REG_QP; each registration is a handle of
 * that context, and the QP is destroyed when the last registration goes
 * (an explicit unregister, a destroy of the handle, or the context's
 * close, kill -9 included).  Async events of a receive QP reach every
 * registration.
 *
 * SXRC_XRCD_CLOSE fails with EBUSY while this context has QPs, SRQs or
 * registrations made through the handle, and while it holds a
 * registration with any receive QP of the domain, through whichever of
 * its opens of the domain.
 */
enum sxrc_xrcd_method {
	SXRC_XRCD_OPEN = 0,
	SXRC_XRCD_CLOSE = 1,
	SXRC_XRCD_REG_QP = 2,
	SXRC_XRCD_UNREG_QP = 3,
	SXRC_XRCD_MODIFY_QP = 4,
	SXRC_XRCD_QUERY_QP = 5,
};

/* oflags: the values of O_CREAT and O_EXCL of <fcntl.h> */
#define SXRC_XRCD_O_CREAT	00000100
#define SXRC_XRCD_O_EXCL	00000200

/**
 * struct sxrc_open_xrcd_in - input of SXRC_XRCD_OPEN (output: a handle)
 * @user_cookie: opaque value for the library
 * @fd: a file whose inode names the domain, or -1 for a new anonymous
 *	domain (then @oflags must be exactly O_CREAT)
 * @oflags: O_CREAT: create the domain if there is none; O_CREAT|O_EXCL:
 *	fail if there is one.  Errors: EBADF for a bad @fd, EINVAL for
 *	O_EXCL on an existing domain or unknown flags, EAGAIN for a missing
 *	domain without O_CREAT (as ib_uverbs).
 */
struct sxrc_open_xrcd_in {
	__aligned_u64 user_cookie;
	__s32 fd;
	__u32 oflags;
};

/**
 * struct sxrc_xrc_qp_in - input of SXRC_XRCD_REG_QP, _UNREG_QP, _QUERY_QP
 * @xrcd_handle: this context's handle of the domain
 * @qp_num: a receive QP of that domain (else EINVAL)
 *
 * SXRC_XRCD_REG_QP registers this context (output: the registration's
 * handle); registering again is a no-op returning the same handle.
 * SXRC_XRCD_UNREG_QP drops this context's registration (EINVAL if none).
 * SXRC_XRCD_QUERY_QP outputs a struct sxrc_query_qp_out.
 */
struct sxrc_xrc_qp_in {
	__u32 xrcd_handle;
	__u32 qp_num;
};

/**
 * struct sxrc_xrc_modify_in - input of SXRC_XRCD_MODIFY_QP
 * @xrcd_handle: this context's handle of the domain
 * @qp_num: a receive QP of that domain
 * @attr_mask: as sxrc_modify_qp_in
 * @reserved: zero
 * @attr: as sxrc_modify_qp_in
 */
struct sxrc_xrc_modify_in {
	__u32 xrcd_handle;
	__u32 qp_num;
	__u32 attr_mask;
	__u32 reserved;
	struct sxrc_qp_attr attr;
};

/* --------------------------------------------------------------------
 * Asynchronous events
 *
 * read() on the device fd returns whole struct sxrc_async_event records
 * (at least one, as many as fit); it blocks unless the fd is O_NONBLOCK
 * (then EAGAIN).  poll() reports EPOLLIN while events are queued.  A
 * buffer smaller than one record is EINVAL.  The queue holds at most
 * SXRC_ASYNC_QUEUE_MAX records per context; past that, new events are
 * dropped and the next record delivered carries
 * SXRC_ASYNC_FLAG_OVERFLOW.
 */
#define SXRC_ASYNC_QUEUE_MAX	4096

/* event_type values: enum ibv_event_type */
#define SXRC_EVENT_CQ_ERR		0
#define SXRC_EVENT_QP_FATAL		1
#define SXRC_EVENT_QP_REQ_ERR		2
#define SXRC_EVENT_QP_ACCESS_ERR	3
#define SXRC_EVENT_COMM_EST		4
#define SXRC_EVENT_SQ_DRAINED		5
#define SXRC_EVENT_DEVICE_FATAL		8
#define SXRC_EVENT_PORT_ACTIVE		9
#define SXRC_EVENT_PORT_ERR		10
#define SXRC_EVENT_SRQ_ERR		14
#define SXRC_EVENT_SRQ_LIMIT_REACHED	15
#define SXRC_EVENT_QP_LAST_WQE_REACHED	16
#define SXRC_EVENT_GID_CHANGE		18

#define SXRC_ASYNC_FLAG_OVERFLOW	_BITUL(0)

/**
 * enum sxrc_async_element - what sxrc_async_event.element names
 * @SXRC_ELEMENT_PORT: @element is a port number
 * @SXRC_ELEMENT_OBJECT: @element is the user_cookie of an object
 * @SXRC_ELEMENT_XRC_QPN: @element is the number of an XRC receive QP the
 *	context registered with through SXRC_XRCD_REG_QP (legacy API)
 */
enum sxrc_async_element {
	SXRC_ELEMENT_PORT = 0,
	SXRC_ELEMENT_OBJECT = 1,
	SXRC_ELEMENT_XRC_QPN = 2,
};

/**
 * struct sxrc_async_event - one record read from the device fd
 * @element: port number or user_cookie, per @element_type
 * @event_type: SXRC_EVENT_* (the enum ibv_event_type value)
 * @element_type: enum sxrc_async_element
 * @flags: SXRC_ASYNC_FLAG_*
 * @reserved: zero
 */
struct sxrc_async_event {
	__aligned_u64 element;
	__u32 event_type;
	__u16 element_type;
	__u16 flags;
	__aligned_u64 reserved;
};

/*
 * The layout, checked by every build that includes this header (the
 * module's and the library's): a structure that changed its size, or a
 * field that moved, would break programs built against an older header.
 */
#ifdef __KERNEL__
#include <linux/build_bug.h>
#else
#include <assert.h>
#endif
/* Version 1 sizes of the structures that grew, still accepted. */
static_assert(sizeof(struct sxrc_create_qp_in) == SXRC_CREATE_QP_IN_V1 + 8, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_create_srq_in) ==
	      SXRC_CREATE_SRQ_IN_V1 + 16, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_ioctl_hdr) == 32, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_ring_hdr) == SXRC_RING_HDR_SIZE, "softxrc ABI layout");
/* The poll word came out of padding: the indices did not move. */
static_assert(__builtin_offsetof(struct sxrc_ring_hdr, poll) == 8, "softxrc ABI layout");
static_assert(__builtin_offsetof(struct sxrc_ring_hdr, cons) == 64, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_cqe) == 48, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_cqe_ts) == 64, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_cq_ring_out) == SXRC_CQ_RING_OUT_V1 + 8, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_send_wqe) == 72, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_recv_wqe) == 16, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_sge) == 16, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_qp_attr) == 144, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_async_event) == 24, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_cm_conn) == 72, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_cm_send_in) == 96, "softxrc ABI layout");
static_assert(sizeof(struct sxrc_cm_event) == 320, "softxrc ABI layout");

#endif /* _UAPI_RDMA_SOFTXRC_ABI_H */
