/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * softxrc: the user/kernel contract of the software RDMA verbs device.
 *
 * This header is the whole ABI.  The kernel module and the userspace
 * library are both built from it; nothing else is shared between them.
 *
 * Transport
 * ---------
 * Each softxrc device is a character device, /dev/softxrcN.  Every open()
 * creates a user context; every object made through that fd belongs to
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
 *  EBUSY       destroying an object that other objects still use
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

/* Character device name prefix: /dev/softxrc0, /dev/softxrc1, ... */
#define SXRC_DEV_PREFIX		"softxrc"

#define SXRC_IOCTL_TYPE		0xB6
#define SXRC_IOCTL_INVOKE	_IO(SXRC_IOCTL_TYPE, 0x00)

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
 */
enum sxrc_object {
	SXRC_OBJ_CTX = 0,
	SXRC_OBJ_DEVICE = 1,
	SXRC_OBJ_PD = 2,
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
 */
enum sxrc_features {
	SXRC_FEATURE_ASYNC_EVENTS = 1 << 0,
};

#define SXRC_FEATURES_ALL	(SXRC_FEATURE_ASYNC_EVENTS)

/**
 * struct sxrc_query_ctx_out - SXRC_CTX_QUERY output; the method has no
 *	input
 * @abi_version: SXRC_ABI_VERSION of the module
 * @features: enum sxrc_features bits
 * @dev_index: N of /dev/softxrcN
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
#define SXRC_DEVICE_XRC			_BITULL(20)

/* atomic_cap values: enum ibv_atomic_cap */
#define SXRC_ATOMIC_NONE		0
#define SXRC_ATOMIC_HCA			1

/**
 * struct sxrc_device_attr - SXRC_DEVICE_QUERY output; no input
 *
 * The fields mirror struct ibv_device_attr / ibv_device_attr_ex.  Limits
 * are those of this module instance (several are module parameters).
 *
 * @fw_ver: firmware version, major << 32 | minor << 16 | sub-minor
 * @node_guid: node GUID, network byte order
 * @sys_image_guid: system image GUID, network byte order
 * @max_mr_size: largest MR in bytes
 * @page_size_cap: supported page sizes (bit N: 2^N bytes)
 * @device_cap_flags: SXRC_DEVICE_* bits
 * @vendor_id: IEEE OUI of the vendor (0: none)
 * @vendor_part_id: part number
 * @hw_ver: hardware version
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
 * @max_xrcd: XRC domains per device (0 until XRC is supported)
 * @reserved: zero
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
	__u32 reserved;
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
/* link_layer values: IBV_LINK_LAYER_* */
#define SXRC_LINK_LAYER_INFINIBAND	1

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
#define SXRC_EVENT_PORT_ACTIVE		9
#define SXRC_EVENT_PORT_ERR		10

#define SXRC_ASYNC_FLAG_OVERFLOW	_BITUL(0)

/**
 * enum sxrc_async_element - what sxrc_async_event.element names
 * @SXRC_ELEMENT_PORT: @element is a port number
 * @SXRC_ELEMENT_OBJECT: @element is the user_cookie of an object
 */
enum sxrc_async_element {
	SXRC_ELEMENT_PORT = 0,
	SXRC_ELEMENT_OBJECT = 1,
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

#endif /* _UAPI_RDMA_SOFTXRC_ABI_H */
