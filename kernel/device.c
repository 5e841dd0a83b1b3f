// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc: device, port, GID and P_Key queries, and the sysfs files the
 * library reads to list devices before opening them.
 */
#include <linux/capability.h>
#include <linux/device.h>
#include <linux/ethtool.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include "sxrc.h"
#include "sxrc_methods.h"

/* IBTA encodings used below. */
#define SXRC_MTU_4096		5	/* IBV_MTU_4096 */
#define SXRC_WIDTH_1X		1
#define SXRC_WIDTH_4X		2
#define SXRC_SPEED_SDR		1	/* 2.5 Gb/s a lane */
#define SXRC_SPEED_DDR		2	/* 5 */
#define SXRC_SPEED_FDR10	8	/* 10 */
#define SXRC_SPEED_EDR		32	/* 25 */
#define SXRC_PHYS_LINKUP	5
#define SXRC_PHYS_DISABLED	3
#define SXRC_VL_1		1
#define SXRC_MAX_MSG_SZ		BIT(31)

u16 sxrc_port_lid(struct sxrc_dev *dev)
{
	return dev->index + 1;
}

int sxrc_ctx_query(struct sxrc_call *call)
{
	struct sxrc_query_ctx_out *out = call->out;

	out->abi_version = SXRC_ABI_VERSION;
	out->dev_index = call->ctx->dev->index;
	out->features = SXRC_FEATURES_ALL;
	/* Connection management is a link's. */
	if (!call->ctx->dev->wire_cm)
		out->features &= ~SXRC_FEATURE_CM;
	out->num_ports = 1;
	out->num_comp_vectors = 1;
	return 0;
}

/*
 * What the caller's context may create of @type: the device limit, and
 * its user's limit where that is enforced on it.
 */
static u32 sxrc_ctx_limit(struct sxrc_ctx *ctx, enum sxrc_obj_type type,
			  u32 dev_limit)
{
	u32 ulimit = ctx->unlimited ? 0 : sxrc_type_user_limit(type);

	return ulimit ? min(dev_limit, ulimit) : dev_limit;
}

int sxrc_device_query(struct sxrc_call *call)
{
	struct sxrc_ctx *ctx = call->ctx;
	struct sxrc_dev *dev = ctx->dev;
	struct sxrc_device_attr *attr = call->out;

	attr->fw_ver = SXRC_FW_VER;
	attr->node_guid = (__force u64)dev->node_guid;
	attr->sys_image_guid = (__force u64)dev->node_guid;
	attr->max_mr_size = SXRC_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SXRC_VENDOR_ID;
	attr->vendor_part_id = SXRC_VENDOR_PART_ID;
	attr->hw_ver = SXRC_HW_VER;
	attr->device_cap_flags = SXRC_DEVICE_N_NOTIFY_CQ;
	attr->max_pd = sxrc_ctx_limit(ctx, SXRC_TYPE_PD,
				      sxrc_type_limit(SXRC_TYPE_PD));
	attr->max_mr = sxrc_ctx_limit(ctx, SXRC_TYPE_MR,
				      sxrc_type_limit(SXRC_TYPE_MR));
	attr->max_cq = sxrc_ctx_limit(ctx, SXRC_TYPE_CQ,
				      sxrc_type_limit(SXRC_TYPE_CQ));
	attr->max_cqe = SXRC_MAX_CQE;
	attr->max_qp = sxrc_ctx_limit(ctx, SXRC_TYPE_QP,
				      sxrc_type_limit(SXRC_TYPE_QP));
	attr->max_qp_wr = SXRC_MAX_QP_WR;
	attr->max_sge = SXRC_MAX_SGE;
	attr->max_sge_rd = SXRC_MAX_SGE;
	attr->max_srq = sxrc_ctx_limit(ctx, SXRC_TYPE_SRQ,
				       sxrc_type_limit(SXRC_TYPE_SRQ));
	attr->max_srq_wr = SXRC_MAX_QP_WR;
	attr->max_srq_sge = SXRC_MAX_SGE;
	attr->max_qp_rd_atom = SXRC_MAX_RD_ATOM;
	attr->max_qp_init_rd_atom = SXRC_MAX_RD_ATOM;
	attr->max_res_rd_atom = SXRC_MAX_RD_ATOM * attr->max_qp;
	attr->max_mcast_grp = SXRC_MAX_MCAST_GRP;
	attr->max_mcast_qp_attach = SXRC_MAX_MCAST_QP;
	attr->max_total_mcast_qp_attach = SXRC_MAX_MCAST_GRP *
					  SXRC_MAX_MCAST_QP;
	attr->max_inline_data = SXRC_MAX_INLINE;
	attr->max_ah = sxrc_ctx_limit(ctx, SXRC_TYPE_AH,
				      sxrc_type_limit(SXRC_TYPE_AH));
	attr->atomic_cap = SXRC_ATOMIC_HCA;
	attr->device_cap_flags |= SXRC_DEVICE_RC_RNR_NAK_GEN | SXRC_DEVICE_XRC;
	attr->max_xrcd = sxrc_ctx_limit(ctx, SXRC_TYPE_XRCD,
					READ_ONCE(sxrc_max_xrcd));
	attr->device_cap_flags |= SXRC_DEVICE_MEM_WINDOW |
				  SXRC_DEVICE_MEM_WINDOW_TYPE_2B;
	attr->max_mw = sxrc_ctx_limit(ctx, SXRC_TYPE_MW,
				      sxrc_type_limit(SXRC_TYPE_MW));
	attr->max_pkeys = SXRC_PKEY_TBL_LEN;
	attr->local_ca_ack_delay = 15;
	attr->phys_port_cnt = 1;
	return 0;
}

/*
 * A link's port rate from its interface's speed in Mb/s: the slowest
 * IBTA width and speed at least as fast (a speed the interface does not
 * say counts as 1 Gb/s), as ib_core rates the RoCE ports of rxe and siw.
 * Consumers size their protocols from the rate (UCX: its bandwidth
 * estimate, and from it the rendezvous threshold), so a port must not
 * claim more than its link carries.
 */
static void sxrc_link_rate(u32 mbps, u8 *width, u8 *speed)
{
	static const struct {
		u32 mbps;
		u8 width;
		u8 speed;
	} rates[] = {
		{ SPEED_1000, SXRC_WIDTH_1X, SXRC_SPEED_SDR },
		{ SPEED_10000, SXRC_WIDTH_1X, SXRC_SPEED_FDR10 },
		{ SPEED_20000, SXRC_WIDTH_4X, SXRC_SPEED_DDR },
		{ SPEED_25000, SXRC_WIDTH_1X, SXRC_SPEED_EDR },
		{ SPEED_40000, SXRC_WIDTH_4X, SXRC_SPEED_FDR10 },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		if (mbps <= rates[i].mbps) {
			*width = rates[i].width;
			*speed = rates[i].speed;
			return;
		}
	}
	*width = SXRC_WIDTH_4X;
	*speed = SXRC_SPEED_EDR;
}

static int sxrc_check_port(u32 port_num)
{
	return port_num == 1 ? 0 : -EINVAL;
}

int sxrc_device_query_port(struct sxrc_call *call)
{
	const struct sxrc_port_in *in = call->in;
	struct sxrc_port_attr *attr = call->out;
	struct sxrc_dev *dev = call->ctx->dev;
	bool up;

	if (in->reserved || sxrc_check_port(in->port_num))
		return -EINVAL;

	up = READ_ONCE(dev->port_state) == SXRC_PORT_ACTIVE;
	attr->state = up ? SXRC_PORT_ACTIVE : SXRC_PORT_DOWN;
	attr->max_mtu = SXRC_MTU_4096;
	attr->active_mtu = SXRC_MTU_4096;
	attr->gid_tbl_len = SXRC_GID_TBL_LEN;
	attr->lid = sxrc_port_lid(dev);
	attr->sm_lid = sxrc_port_lid(dev);
	attr->link_layer = SXRC_LINK_LAYER_INFINIBAND;
	/* Without a link, data moves by memcpy: 4X EDR. */
	attr->active_width = SXRC_WIDTH_4X;
	attr->active_speed = SXRC_SPEED_EDR;
	if (rcu_access_pointer(dev->ndev)) {
		/* A link: RoCE, as rxe's port shows itself. */
		attr->active_mtu = READ_ONCE(dev->ndev_mtu);
		attr->gid_tbl_len = SXRC_LINK_GID_TBL_LEN;
		attr->lid = 0;
		attr->sm_lid = 0;
		attr->link_layer = SXRC_LINK_LAYER_ETHERNET;
		sxrc_link_rate(READ_ONCE(dev->ndev_speed), &attr->active_width,
			       &attr->active_speed);
	}
	/* rdma_cm connects through the library; NodeInfo has the image GUID. */
	attr->port_cap_flags = SXRC_PORT_CM_SUP | SXRC_PORT_SYS_IMAGE_GUID_SUP;
	attr->max_msg_sz = SXRC_MAX_MSG_SZ;
	attr->pkey_tbl_len = SXRC_PKEY_TBL_LEN;
	attr->max_vl_num = SXRC_VL_1;
	attr->subnet_timeout = 18;
	attr->phys_state = up ? SXRC_PHYS_LINKUP : SXRC_PHYS_DISABLED;
	return 0;
}

int sxrc_device_query_gid(struct sxrc_call *call)
{
	const struct sxrc_gid_in *in = call->in;
	struct sxrc_gid_out *out = call->out;
	struct sxrc_dev *dev = call->ctx->dev;

	if (sxrc_check_port(in->port_num))
		return -EINVAL;
	if (rcu_access_pointer(dev->ndev)) {
		if (in->index >= SXRC_LINK_GID_TBL_LEN)
			return -EINVAL;
		out->gid_type = SXRC_GID_TYPE_ROCE_V2;
		return sxrc_link_gid(dev, in->index, out->gid);
	}
	if (in->index >= SXRC_GID_TBL_LEN)
		return -EINVAL;

	sxrc_local_gid(dev, out->gid);
	out->gid_type = SXRC_GID_TYPE_IB;
	return 0;
}

int sxrc_device_query_pkey(struct sxrc_call *call)
{
	const struct sxrc_gid_in *in = call->in;
	struct sxrc_pkey_out *out = call->out;

	if (sxrc_check_port(in->port_num) || in->index >= SXRC_PKEY_TBL_LEN)
		return -EINVAL;
	out->pkey = SXRC_PKEY_DEFAULT;
	return 0;
}

/* ------------------------------------------------------------------
 * sysfs: /sys/class/misc/softxrcN/
 */

static struct sxrc_dev *to_sxrc_dev(struct device *d)
{
	struct miscdevice *misc = dev_get_drvdata(d);

	return container_of(misc, struct sxrc_dev, misc);
}

static ssize_t abi_version_show(struct device *d,
				struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", SXRC_ABI_VERSION);
}
static DEVICE_ATTR_RO(abi_version);

static ssize_t node_guid_show(struct device *d, struct device_attribute *attr,
			      char *buf)
{
	u64 guid = be64_to_cpu(to_sxrc_dev(d)->node_guid);

	return sysfs_emit(buf, "%04x:%04x:%04x:%04x\n",
			  (u16)(guid >> 48), (u16)(guid >> 32),
			  (u16)(guid >> 16), (u16)guid);
}
static DEVICE_ATTR_RO(node_guid);

static ssize_t fw_ver_show(struct device *d, struct device_attribute *attr,
			   char *buf)
{
	return sysfs_emit(buf, "%llu.%llu.%llu\n", SXRC_FW_VER >> 32,
			  (SXRC_FW_VER >> 16) & 0xffff, SXRC_FW_VER & 0xffff);
}
static DEVICE_ATTR_RO(fw_ver);

static ssize_t node_desc_show(struct device *d, struct device_attribute *attr,
			      char *buf)
{
	return sysfs_emit(buf, "softxrc %s\n", to_sxrc_dev(d)->name);
}
static DEVICE_ATTR_RO(node_desc);

static ssize_t board_id_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "SOFTXRC-1\n");
}
static DEVICE_ATTR_RO(board_id);

/*
 * port_state: "ACTIVE" or "DOWN".  Writing it (CAP_NET_ADMIN) takes the
 * port down or up, as unplugging a cable would, and raises
 * IBV_EVENT_PORT_ERR or IBV_EVENT_PORT_ACTIVE in every open context.
 */
static ssize_t port_state_show(struct device *d, struct device_attribute *attr,
			       char *buf)
{
	bool up = READ_ONCE(to_sxrc_dev(d)->port_state) == SXRC_PORT_ACTIVE;

	return sysfs_emit(buf, "%s\n", up ? "ACTIVE" : "DOWN");
}

static ssize_t port_state_store(struct device *d,
				struct device_attribute *attr,
				const char *buf, size_t len)
{
	struct sxrc_dev *dev = to_sxrc_dev(d);
	u32 state, old;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	/* A link's port follows its interface. */
	if (rcu_access_pointer(dev->ndev))
		return -EOPNOTSUPP;
	if (sysfs_streq(buf, "ACTIVE"))
		state = SXRC_PORT_ACTIVE;
	else if (sysfs_streq(buf, "DOWN"))
		state = SXRC_PORT_DOWN;
	else
		return -EINVAL;

	old = xchg(&dev->port_state, state);
	if (old != state)
		sxrc_dev_event(dev, state == SXRC_PORT_ACTIVE ?
			       SXRC_EVENT_PORT_ACTIVE : SXRC_EVENT_PORT_ERR, 1);
	return len;
}
static DEVICE_ATTR_RW(port_state);

static struct attribute *sxrc_dev_attrs[] = {
	&dev_attr_abi_version.attr,
	&dev_attr_node_guid.attr,
	&dev_attr_fw_ver.attr,
	&dev_attr_node_desc.attr,
	&dev_attr_board_id.attr,
	&dev_attr_port_state.attr,
	NULL,
};

static const struct attribute_group sxrc_dev_group = {
	.attrs = sxrc_dev_attrs,
};

/*
 * objects/: live objects of each class on this device, and open
 * contexts.  Tests use them to prove that nothing outlives its owner.
 */
static ssize_t sxrc_show_count(struct device *d, char *buf, atomic_t *count)
{
	return sysfs_emit(buf, "%d\n", atomic_read(count));
}

static ssize_t contexts_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	return sxrc_show_count(d, buf, &to_sxrc_dev(d)->nctx);
}
static DEVICE_ATTR_RO(contexts);

static ssize_t pd_show(struct device *d, struct device_attribute *attr,
		       char *buf)
{
	return sxrc_show_count(d, buf, &to_sxrc_dev(d)->nobj[SXRC_TYPE_PD]);
}
static DEVICE_ATTR_RO(pd);

static ssize_t mr_show(struct device *d, struct device_attribute *attr,
		       char *buf)
{
	return sxrc_show_count(d, buf, &to_sxrc_dev(d)->nobj[SXRC_TYPE_MR]);
}
static DEVICE_ATTR_RO(mr);

static ssize_t cq_show(struct device *d, struct device_attribute *attr,
		       char *buf)
{
	return sxrc_show_count(d, buf, &to_sxrc_dev(d)->nobj[SXRC_TYPE_CQ]);
}
static DEVICE_ATTR_RO(cq);

static ssize_t qp_show(struct device *d, struct device_attribute *attr,
		       char *buf)
{
	return sxrc_show_count(d, buf, &to_sxrc_dev(d)->nobj[SXRC_TYPE_QP]);
}
static DEVICE_ATTR_RO(qp);

static ssize_t srq_show(struct device *d, struct device_attribute *attr,
			char *buf)
{
	return sxrc_show_count(d, buf, &to_sxrc_dev(d)->nobj[SXRC_TYPE_SRQ]);
}
static DEVICE_ATTR_RO(srq);

static ssize_t cm_id_show(struct device *d, struct device_attribute *attr,
			  char *buf)
{
	return sxrc_show_count(d, buf,
			       &to_sxrc_dev(d)->nobj[SXRC_TYPE_CM_ID]);
}
static DEVICE_ATTR_RO(cm_id);

static ssize_t mr_pages_show(struct device *d, struct device_attribute *attr,
			     char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&to_sxrc_dev(d)->mr_pages));
}
static DEVICE_ATTR_RO(mr_pages);

static ssize_t mr_runs_show(struct device *d, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&to_sxrc_dev(d)->mr_runs));
}
static DEVICE_ATTR_RO(mr_runs);

static struct attribute *sxrc_obj_attrs[] = {
	&dev_attr_contexts.attr,
	&dev_attr_pd.attr,
	&dev_attr_mr.attr,
	&dev_attr_cq.attr,
	&dev_attr_qp.attr,
	&dev_attr_srq.attr,
	&dev_attr_cm_id.attr,
	&dev_attr_mr_pages.attr,
	&dev_attr_mr_runs.attr,
	NULL,
};

static const struct attribute_group sxrc_obj_group = {
	.name = "objects",
	.attrs = sxrc_obj_attrs,
};

/* counters/: the device's data path counters (enum sxrc_stat). */
static ssize_t sxrc_counter_show(struct device *d,
				 struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea =
		container_of(attr, struct dev_ext_attribute, attr);
	unsigned long stat = (unsigned long)ea->var;

	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&to_sxrc_dev(d)->stats.c[stat]));
}

static struct dev_ext_attribute dev_attr_send_wqes = {
	__ATTR(send_wqes, 0444, sxrc_counter_show, NULL),
	(void *)SXRC_STAT_SEND_WQES
};

static struct dev_ext_attribute dev_attr_send_bytes = {
	__ATTR(send_bytes, 0444, sxrc_counter_show, NULL),
	(void *)SXRC_STAT_SEND_BYTES
};

static struct dev_ext_attribute dev_attr_recv_wqes = {
	__ATTR(recv_wqes, 0444, sxrc_counter_show, NULL),
	(void *)SXRC_STAT_RECV_WQES
};

static struct dev_ext_attribute dev_attr_recv_bytes = {
	__ATTR(recv_bytes, 0444, sxrc_counter_show, NULL),
	(void *)SXRC_STAT_RECV_BYTES
};

static struct dev_ext_attribute dev_attr_rnr_retries = {
	__ATTR(rnr_retries, 0444, sxrc_counter_show, NULL),
	(void *)SXRC_STAT_RNR_RETRIES
};

static struct dev_ext_attribute dev_attr_retries = {
	__ATTR(retries, 0444, sxrc_counter_show, NULL),
	(void *)SXRC_STAT_RETRIES
};

static struct dev_ext_attribute dev_attr_errors = {
	__ATTR(errors, 0444, sxrc_counter_show, NULL),
	(void *)SXRC_STAT_ERRORS
};

static struct dev_ext_attribute dev_attr_recv_shared = {
	__ATTR(recv_shared, 0444, sxrc_counter_show, NULL),
	(void *)SXRC_STAT_RECV_SHARED
};

/* counters/wire_*: a link's packet counters (enum sxrc_wire_stat). */
static ssize_t sxrc_wire_counter_show(struct device *d,
				      struct device_attribute *attr, char *buf)
{
	struct dev_ext_attribute *ea =
		container_of(attr, struct dev_ext_attribute, attr);
	unsigned long stat = (unsigned long)ea->var;

	return sysfs_emit(buf, "%lld\n",
			  (long long)atomic64_read(&to_sxrc_dev(d)->wire_stats[stat]));
}

#define SXRC_WIRE_COUNTER(_name, _stat)					\
static struct dev_ext_attribute dev_attr_##_name = {			\
	__ATTR(_name, 0444, sxrc_wire_counter_show, NULL),		\
	(void *)(_stat)							\
}

SXRC_WIRE_COUNTER(wire_tx_packets, SXRC_WIRE_TX);
SXRC_WIRE_COUNTER(wire_rx_packets, SXRC_WIRE_RX);
SXRC_WIRE_COUNTER(wire_rx_dropped, SXRC_WIRE_RX_DROPPED);
SXRC_WIRE_COUNTER(wire_retransmits, SXRC_WIRE_RETRANSMITS);
SXRC_WIRE_COUNTER(wire_tx_lent, SXRC_WIRE_TX_LENT);
SXRC_WIRE_COUNTER(wire_rx_softirq, SXRC_WIRE_RX_SOFTIRQ);
SXRC_WIRE_COUNTER(wire_qps, SXRC_WIRE_QPS);
SXRC_WIRE_COUNTER(wire_cm_rx, SXRC_WIRE_CM_RX);
SXRC_WIRE_COUNTER(wire_cm_tx, SXRC_WIRE_CM_TX);
SXRC_WIRE_COUNTER(wire_cm_dropped, SXRC_WIRE_CM_DROPPED);
SXRC_WIRE_COUNTER(wire_cm_retries, SXRC_WIRE_CM_RETRIES);
SXRC_WIRE_COUNTER(wire_cm_timeouts, SXRC_WIRE_CM_TIMEOUTS);
SXRC_WIRE_COUNTER(wire_cm_unlistened, SXRC_WIRE_CM_UNLISTENED);
SXRC_WIRE_COUNTER(wire_tx_loopback, SXRC_WIRE_TX_LOOPBACK);

static struct attribute *sxrc_counter_attrs[] = {
	&dev_attr_wire_tx_packets.attr.attr,
	&dev_attr_wire_rx_packets.attr.attr,
	&dev_attr_wire_rx_dropped.attr.attr,
	&dev_attr_wire_retransmits.attr.attr,
	&dev_attr_wire_tx_lent.attr.attr,
	&dev_attr_wire_rx_softirq.attr.attr,
	&dev_attr_wire_qps.attr.attr,
	&dev_attr_wire_cm_rx.attr.attr,
	&dev_attr_wire_cm_tx.attr.attr,
	&dev_attr_wire_cm_dropped.attr.attr,
	&dev_attr_wire_cm_retries.attr.attr,
	&dev_attr_wire_cm_timeouts.attr.attr,
	&dev_attr_wire_cm_unlistened.attr.attr,
	&dev_attr_wire_tx_loopback.attr.attr,
	&dev_attr_send_wqes.attr.attr,
	&dev_attr_send_bytes.attr.attr,
	&dev_attr_recv_wqes.attr.attr,
	&dev_attr_recv_bytes.attr.attr,
	&dev_attr_rnr_retries.attr.attr,
	&dev_attr_retries.attr.attr,
	&dev_attr_errors.attr.attr,
	&dev_attr_recv_shared.attr.attr,
	NULL,
};

static const struct attribute_group sxrc_counter_group = {
	.name = "counters",
	.attrs = sxrc_counter_attrs,
};

const struct attribute_group *sxrc_dev_groups[] = {
	&sxrc_dev_group,
	&sxrc_obj_group,
	&sxrc_counter_group,
	NULL,
};
