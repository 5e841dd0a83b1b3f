// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: address handles.
 */
#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "sxu.h"

SXU_EXPORT struct ibv_ah *ibv_create_ah(struct ibv_pd *pd,
					 struct ibv_ah_attr *attr)
{
	struct sxrc_create_ah_in in = { 0 };
	struct sxrc_handle_out out;
	struct sxu_ah *ah;
	int ret;

	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_create_ah, NULL, pd, attr);

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	in.pd_handle = to_sxu_pd(pd)->handle;
	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;
	in.user_cookie = (uintptr_t)&ah->ibah;
	memcpy(in.attr.dgid, attr->grh.dgid.raw, sizeof(in.attr.dgid));
	in.attr.flow_label = attr->grh.flow_label;
	in.attr.sgid_index = attr->grh.sgid_index;
	in.attr.hop_limit = attr->grh.hop_limit;
	in.attr.traffic_class = attr->grh.traffic_class;
	in.attr.is_global = !!attr->is_global;
	in.attr.dlid = attr->dlid;
	in.attr.sl = attr->sl;
	in.attr.src_path_bits = attr->src_path_bits;
	in.attr.static_rate = attr->static_rate;
	in.attr.port_num = attr->port_num;

	ret = sxu_invoke(pd->context->cmd_fd, SXRC_OBJ_AH, SXRC_AH_CREATE,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	ah->ibah.context = pd->context;
	ah->ibah.pd = pd;
	ah->ibah.handle = out.handle;
	return &ah->ibah;
}

SXU_EXPORT int ibv_destroy_ah(struct ibv_ah *ah)
{
	int ret;

	if (sxu_foreign(ah->context))
		return SXU_FORWARD(ibv_destroy_ah, EOPNOTSUPP, ah);

	ret = sxu_destroy_handle(ah->context->cmd_fd, SXRC_OBJ_AH,
				  SXRC_AH_DESTROY, ah->handle);
	if (ret)
		return ret;
	free(sxu_container_of(ah, struct sxu_ah, ibah));
	return 0;
}

/* Does the IPv4 header @h (20 bytes, no options) carry a valid checksum? */
static bool sxu_ip4_csum_ok(const uint8_t *h)
{
	uint32_t sum = 0;

	for (int i = 0; i < 20; i += 2)
		sum += (uint32_t)h[i] << 8 | h[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum == 0xffff;
}

/*
 * What a RoCEv2 receive's 40-byte GRH area holds: a GRH (6), or an IPv4
 * header in its last 20 bytes (4).  As rdma-core decides: an area whose
 * first nibble is not 6 can only be IPv4; one whose first nibble is 6 is
 * IPv4 still if its last 20 bytes are an option-less IPv4 header with a
 * good checksum.  -1: neither.
 */
static int sxu_grh_ip_version(const struct ibv_grh *grh)
{
	const uint8_t *ip4 = (const uint8_t *)grh + 20;

	if (be32toh(grh->version_tclass_flow) >> 28 != 6)
		return ip4[0] >> 4 == 4 ? 4 : -1;
	return ip4[0] == 0x45 && sxu_ip4_csum_ok(ip4) ? 4 : 6;
}

/* The index of @gid among @port's GIDs (RoCEv2 ones only if @v2), or -1. */
static int sxu_gid_index(struct ibv_context *context, uint8_t port,
			 const union ibv_gid *gid, int tbl_len, bool v2)
{
	struct ibv_gid_entry e;

	for (int i = 0; i < tbl_len; i++) {
		if (ibv_query_gid_ex(context, port, i, &e, 0))
			continue;
		if ((!v2 || e.gid_type == IBV_GID_TYPE_ROCE_V2) &&
		    !memcmp(e.gid.raw, gid->raw, sizeof(gid->raw)))
			return i;
	}
	return -1;
}

static void sxu_map_ip4(const uint8_t *addr, union ibv_gid *gid)
{
	memset(gid, 0, sizeof(*gid));
	gid->raw[10] = 0xff;
	gid->raw[11] = 0xff;
	memcpy(&gid->raw[12], addr, 4);
}

/*
 * An address handle back to the sender of @wc: from the GID it
 * addressed to the GID it came from.  On an Ethernet port (a link) the
 * area holds what came on the wire: a RoCEv2 packet over IPv4 leaves its
 * IPv4 header there, whose addresses are the IPv4-mapped GIDs.
 */
SXU_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				    uint8_t port_num, struct ibv_wc *wc,
				    struct ibv_grh *grh,
				    struct ibv_ah_attr *ah_attr)
{
	struct ibv_port_attr pa;
	union ibv_gid dgid;
	uint32_t flow;
	bool eth;
	int i;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_init_ah_from_wc, -1, context, port_num,
				   wc, grh, ah_attr);
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (!(wc->wc_flags & IBV_WC_GRH))
		return 0;
	if (ibv_query_port(context, port_num, &pa))
		return -1;
	eth = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
	ah_attr->is_global = 1;
	if (eth && sxu_grh_ip_version(grh) == 4) {
		const uint8_t *ip4 = (const uint8_t *)grh + 20;

		sxu_map_ip4(ip4 + 16, &dgid);		/* its destination */
		i = sxu_gid_index(context, port_num, &dgid, pa.gid_tbl_len,
				  true);
		if (i < 0) {
			errno = EINVAL;
			return -1;
		}
		sxu_map_ip4(ip4 + 12, &ah_attr->grh.dgid);	/* its source */
		ah_attr->grh.sgid_index = i;
		ah_attr->grh.hop_limit = ip4[8];		/* TTL */
		ah_attr->grh.traffic_class = ip4[1];		/* TOS */
		return 0;
	}
	if (eth && sxu_grh_ip_version(grh) != 6) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	i = sxu_gid_index(context, port_num, &grh->dgid, pa.gid_tbl_len, false);
	if (i < 0) {
		errno = EINVAL;
		return -1;
	}
	flow = be32toh(grh->version_tclass_flow);
	ah_attr->grh.dgid = grh->sgid;
	ah_attr->grh.flow_label = flow & 0xfffff;
	ah_attr->grh.traffic_class = (flow >> 20) & 0xff;
	/* A routed reply may cross as many hops as the request did. */
	ah_attr->grh.hop_limit = eth ? grh->hop_limit : 0xff;
	ah_attr->grh.sgid_index = i;
	return 0;
}

SXU_EXPORT struct ibv_ah *ibv_create_ah_from_wc(struct ibv_pd *pd,
						 struct ibv_wc *wc,
						 struct ibv_grh *grh,
						 uint8_t port_num)
{
	struct ibv_ah_attr attr;

	if (pd && sxu_foreign(pd->context))
		return SXU_FORWARD(ibv_create_ah_from_wc, NULL, pd, wc, grh,
				   port_num);

	if (!pd) {
		errno = EINVAL;
		return NULL;
	}
	if (ibv_init_ah_from_wc(pd->context, port_num, wc, grh, &attr))
		return NULL;
	return ibv_create_ah(pd, &attr);
}
