// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: what a context tells of its device: device
 * and port attributes, GIDs, P_Keys.  A device of the system's library
 * answers through it (sys.c).
 */
#include <endian.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sxu.h"

static int sxu_query_device_raw(struct ibv_context *context,
				 struct sxrc_device_attr *a)
{
	return sxu_invoke(context->cmd_fd, SXRC_OBJ_DEVICE,
			   SXRC_DEVICE_QUERY, NULL, 0, a, sizeof(*a));
}

static void sxu_fill_device_attr(struct ibv_device_attr *attr,
				  const struct sxrc_device_attr *a)
{
	memset(attr, 0, sizeof(*attr));
	snprintf(attr->fw_ver, sizeof(attr->fw_ver), "%u.%u.%u",
		 (unsigned int)(a->fw_ver >> 32),
		 (unsigned int)(a->fw_ver >> 16) & 0xffff,
		 (unsigned int)a->fw_ver & 0xffff);
	attr->node_guid = a->node_guid;
	attr->sys_image_guid = a->sys_image_guid;
	attr->max_mr_size = a->max_mr_size;
	attr->page_size_cap = a->page_size_cap;
	attr->vendor_id = a->vendor_id;
	attr->vendor_part_id = a->vendor_part_id;
	attr->hw_ver = a->hw_ver;
	attr->max_qp = a->max_qp;
	attr->max_qp_wr = a->max_qp_wr;
	attr->device_cap_flags = (unsigned int)a->device_cap_flags;
	attr->max_sge = a->max_sge;
	attr->max_sge_rd = a->max_sge_rd;
	attr->max_cq = a->max_cq;
	attr->max_cqe = a->max_cqe;
	attr->max_mr = a->max_mr;
	attr->max_pd = a->max_pd;
	attr->max_qp_rd_atom = a->max_qp_rd_atom;
	attr->max_res_rd_atom = a->max_res_rd_atom;
	attr->max_qp_init_rd_atom = a->max_qp_init_rd_atom;
	attr->atomic_cap = a->atomic_cap;
	attr->max_mcast_grp = a->max_mcast_grp;
	attr->max_mcast_qp_attach = a->max_mcast_qp_attach;
	attr->max_total_mcast_qp_attach = a->max_total_mcast_qp_attach;
	attr->max_ah = a->max_ah;
	attr->max_mw = a->max_mw;
	attr->max_srq = a->max_srq;
	attr->max_srq_wr = a->max_srq_wr;
	attr->max_srq_sge = a->max_srq_sge;
	attr->max_pkeys = a->max_pkeys;
	attr->local_ca_ack_delay = a->local_ca_ack_delay;
	attr->phys_port_cnt = a->phys_port_cnt;
}

SXU_EXPORT int ibv_query_device(struct ibv_context *context,
				 struct ibv_device_attr *attr)
{
	struct sxrc_device_attr a;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_device, EOPNOTSUPP, context, attr);
	ret = sxu_query_device_raw(context, &a);
	if (ret)
		return ret;
	sxu_fill_device_attr(attr, &a);
	return 0;
}

int sxu_query_device_ex(struct ibv_context *context,
			 const struct ibv_query_device_ex_input *input,
			 struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex ex;
	struct sxrc_device_attr a;
	int ret;

	if (input && input->comp_mask)
		return EINVAL;
	if (attr_size < sizeof(attr->orig_attr))
		return EINVAL;

	ret = sxu_query_device_raw(context, &a);
	if (ret)
		return ret;

	memset(&ex, 0, sizeof(ex));
	sxu_fill_device_attr(&ex.orig_attr, &a);
	ex.device_cap_flags_ex = a.device_cap_flags;
	ex.phys_port_cnt_ex = a.phys_port_cnt;
	if (to_sxu_ctx(context)->features & SXRC_FEATURE_CQE_TIMESTAMP) {
		/* The completion clock: CLOCK_MONOTONIC, 1 GHz (in kHz). */
		ex.completion_timestamp_mask = UINT64_MAX;
		ex.hca_core_clock = 1000000;
	}
	if (to_sxu_ctx(context)->features & SXRC_FEATURE_ODP) {
		/* What SXRC_FEATURE_ODP promises; UC is not covered. */
		ex.odp_caps.general_caps = IBV_ODP_SUPPORT |
					   IBV_ODP_SUPPORT_IMPLICIT;
		ex.odp_caps.per_transport_caps.rc_odp_caps =
			IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;
		ex.odp_caps.per_transport_caps.ud_odp_caps =
			IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			IBV_ODP_SUPPORT_SRQ_RECV;
		ex.xrc_odp_caps = ex.odp_caps.per_transport_caps.rc_odp_caps;
	}
	if (attr_size > sizeof(ex)) {
		memset((char *)attr + sizeof(ex), 0, attr_size - sizeof(ex));
		attr_size = sizeof(ex);
	}
	memcpy(attr, &ex, attr_size);
	return 0;
}

static int sxu_query_port_raw(struct ibv_context *context, uint8_t port_num,
			       struct ibv_port_attr *attr)
{
	struct sxrc_port_in in = { .port_num = port_num };
	struct sxrc_port_attr p;
	int ret;

	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_DEVICE,
			  SXRC_DEVICE_QUERY_PORT, &in, sizeof(in),
			  &p, sizeof(p));
	if (ret)
		return ret;

	memset(attr, 0, sizeof(*attr));
	attr->state = p.state;
	attr->max_mtu = p.max_mtu;
	attr->active_mtu = p.active_mtu;
	attr->gid_tbl_len = p.gid_tbl_len;
	attr->port_cap_flags = p.port_cap_flags;
	attr->max_msg_sz = p.max_msg_sz;
	attr->bad_pkey_cntr = p.bad_pkey_cntr;
	attr->qkey_viol_cntr = p.qkey_viol_cntr;
	attr->pkey_tbl_len = p.pkey_tbl_len;
	attr->lid = p.lid;
	attr->sm_lid = p.sm_lid;
	attr->lmc = p.lmc;
	attr->max_vl_num = p.max_vl_num;
	attr->sm_sl = p.sm_sl;
	attr->subnet_timeout = p.subnet_timeout;
	attr->init_type_reply = p.init_type_reply;
	attr->active_width = p.active_width;
	attr->active_speed = p.active_speed;
	attr->phys_state = p.phys_state;
	attr->link_layer = p.link_layer;
	attr->flags = p.flags;
	attr->port_cap_flags2 = p.port_cap_flags2;
	return 0;
}

int sxu_query_port(struct ibv_context *context, uint8_t port_num,
		    struct ibv_port_attr *attr, size_t attr_size)
{
	struct ibv_port_attr full;
	int ret;

	ret = sxu_query_port_raw(context, port_num, &full);
	if (ret)
		return ret;
	if (attr_size > sizeof(full)) {
		memset((char *)attr + sizeof(full), 0,
		       attr_size - sizeof(full));
		attr_size = sizeof(full);
	}
	memcpy(attr, &full, attr_size);
	return 0;
}

/*
 * The exported symbol serves binaries built against headers older than
 * the extended context: their struct ends with link_layer at the latest,
 * so nothing past it is written.
 */
#undef ibv_query_port
SXU_EXPORT int ibv_query_port(struct ibv_context *context, uint8_t port_num,
			       struct _compat_ibv_port_attr *port_attr)
{
	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_port, EOPNOTSUPP, context,
				   port_num, port_attr);
	return sxu_query_port(context, port_num,
			       (struct ibv_port_attr *)port_attr,
			       offsetof(struct ibv_port_attr, link_layer) + 1);
}

static int sxu_query_gid_raw(struct ibv_context *context, uint32_t port_num,
			      uint32_t index, struct sxrc_gid_out *out)
{
	struct sxrc_gid_in in = { .port_num = port_num, .index = index };

	return sxu_invoke(context->cmd_fd, SXRC_OBJ_DEVICE,
			   SXRC_DEVICE_QUERY_GID, &in, sizeof(in),
			   out, sizeof(*out));
}

SXU_EXPORT int ibv_query_gid(struct ibv_context *context, uint8_t port_num,
			      int index, union ibv_gid *gid)
{
	struct sxrc_gid_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_gid, -1, context, port_num, index,
				   gid);
	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = sxu_query_gid_raw(context, port_num, index, &out);
	if (ret == ENODATA) {
		/* An empty entry of a link's table reads as zeros, as in sysfs. */
		memset(gid->raw, 0, sizeof(gid->raw));
		return 0;
	}
	if (ret)
		return -1;
	memcpy(gid->raw, out.gid, sizeof(gid->raw));
	return 0;
}

SXU_EXPORT int _ibv_query_gid_ex(struct ibv_context *context,
				  uint32_t port_num, uint32_t gid_index,
				  struct ibv_gid_entry *entry, uint32_t flags,
				  size_t entry_size)
{
	struct ibv_gid_entry e = { 0 };
	struct sxrc_gid_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(_ibv_query_gid_ex, EOPNOTSUPP, context,
				   port_num, gid_index, entry, flags,
				   entry_size);
	if (flags || entry_size < sizeof(e))
		return EINVAL;
	ret = sxu_query_gid_raw(context, port_num, gid_index, &out);
	if (ret)
		return ret;
	memcpy(e.gid.raw, out.gid, sizeof(e.gid.raw));
	e.gid_index = gid_index;
	e.port_num = port_num;
	e.gid_type = out.gid_type;
	memset(entry, 0, entry_size);
	memcpy(entry, &e, sizeof(e));
	return 0;
}

SXU_EXPORT ssize_t _ibv_query_gid_table(struct ibv_context *context,
					 struct ibv_gid_entry *entries,
					 size_t max_entries, uint32_t flags,
					 size_t entry_size)
{
	struct sxu_context *ctx = to_sxu_ctx(context);
	size_t n = 0;

	if (sxu_foreign(context))
		return SXU_FORWARD(_ibv_query_gid_table, -EOPNOTSUPP, context,
				   entries, max_entries, flags, entry_size);
	if (flags || entry_size < sizeof(*entries))
		return -EINVAL;

	for (uint32_t port = 1; port <= ctx->num_ports; port++) {
		struct ibv_port_attr pa;
		int ret = sxu_query_port_raw(context, port, &pa);

		if (ret)
			return -ret;
		for (int i = 0; i < pa.gid_tbl_len; i++) {
			struct ibv_gid_entry *e;

			if (n == max_entries)
				return -EINVAL;
			e = (void *)((char *)entries + n * entry_size);
			ret = _ibv_query_gid_ex(context, port, i, e, 0,
						entry_size);
			if (ret == ENODATA)
				continue;	/* empty: not listed */
			if (ret)
				return -ret;
			n++;
		}
	}
	return n;
}

/*
 * IBVERBS_PRIVATE: Debian's ibv_devinfo prints the GID type with it, as
 * enum ibv_gid_type_sysfs (not in the public headers).
 */
enum { SXU_GID_TYPE_SYSFS_IB_ROCE_V1 = 0, SXU_GID_TYPE_SYSFS_ROCE_V2 = 1 };

SXU_EXPORT int ibv_query_gid_type(struct ibv_context *context,
				   uint8_t port_num, unsigned int index,
				   int *type)
{
	struct sxrc_gid_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_gid_type, -1, context, port_num,
				   index, type);
	ret = sxu_query_gid_raw(context, port_num, index, &out);
	if (ret) {
		errno = ret;
		return -1;
	}
	*type = out.gid_type == SXRC_GID_TYPE_ROCE_V2 ?
		SXU_GID_TYPE_SYSFS_ROCE_V2 : SXU_GID_TYPE_SYSFS_IB_ROCE_V1;
	return 0;
}

SXU_EXPORT int ibv_query_pkey(struct ibv_context *context, uint8_t port_num,
			       int index, __be16 *pkey)
{
	struct sxrc_gid_in in = { .port_num = port_num, .index = index };
	struct sxrc_pkey_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_query_pkey, -1, context, port_num, index,
				   pkey);
	if (index < 0) {
		errno = EINVAL;
		return -1;
	}
	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_DEVICE,
			  SXRC_DEVICE_QUERY_PKEY, &in, sizeof(in),
			  &out, sizeof(out));
	if (ret)
		return -1;
	*pkey = htobe16(out.pkey);
	return 0;
}

SXU_EXPORT int ibv_get_pkey_index(struct ibv_context *context,
				   uint8_t port_num, __be16 pkey)
{
	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_get_pkey_index, -1, context, port_num,
				   pkey);
	for (int i = 0;; i++) {
		__be16 p;

		if (ibv_query_pkey(context, port_num, i, &p))
			return -1;
		if (p == pkey)
			return i;
	}
}
