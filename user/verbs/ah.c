// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: address handles.
 */
#include <endian.h>
#include <errno.h>
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

SXU_EXPORT int ibv_init_ah_from_wc(struct ibv_context *context,
				    uint8_t port_num, struct ibv_wc *wc,
				    struct ibv_grh *grh,
				    struct ibv_ah_attr *ah_attr)
{
	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_init_ah_from_wc, -1, context, port_num,
				   wc, grh, ah_attr);
	memset(ah_attr, 0, sizeof(*ah_attr));
	ah_attr->dlid = wc->slid;
	ah_attr->sl = wc->sl;
	ah_attr->src_path_bits = wc->dlid_path_bits;
	ah_attr->port_num = port_num;
	if (wc->wc_flags & IBV_WC_GRH) {
		uint32_t flow = be32toh(grh->version_tclass_flow);
		struct ibv_port_attr pa;
		union ibv_gid gid;
		int i;

		/* Reply to the sender, from the GID it addressed. */
		if (ibv_query_port(context, port_num, &pa))
			return -1;
		for (i = 0; i < pa.gid_tbl_len; i++) {
			if (ibv_query_gid(context, port_num, i, &gid))
				return -1;
			if (!memcmp(&gid, &grh->dgid, sizeof(gid)))
				break;
		}
		if (i == pa.gid_tbl_len) {
			errno = EINVAL;
			return -1;
		}
		ah_attr->is_global = 1;
		ah_attr->grh.dgid = grh->sgid;
		ah_attr->grh.flow_label = flow & 0xfffff;
		ah_attr->grh.traffic_class = (flow >> 20) & 0xff;
		ah_attr->grh.hop_limit = 0xff;
		ah_attr->grh.sgid_index = i;
	}
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
