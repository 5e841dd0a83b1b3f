// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: rdma_getaddrinfo() on top of getaddrinfo().
 * Every local address maps to softxrc's device, so no route lookup is
 * needed: the result names the address and the port space.
 */
#include <errno.h>
#include <netdb.h>
#include <stdlib.h>
#include <string.h>

#include "sxcm.h"

static struct sockaddr *sxcm_dup_addr(const struct sockaddr *sa, socklen_t len)
{
	struct sockaddr *c = malloc(len);

	if (c)
		memcpy(c, sa, len);
	return c;
}

SXCM_EXPORT void rdma_freeaddrinfo(struct rdma_addrinfo *res)
{
	struct rdma_addrinfo *next;

	for (; res; res = next) {
		next = res->ai_next;
		free(res->ai_src_addr);
		free(res->ai_dst_addr);
		free(res->ai_src_canonname);
		free(res->ai_dst_canonname);
		free(res->ai_route);
		free(res->ai_connect);
		free(res);
	}
}

SXCM_EXPORT int rdma_getaddrinfo(const char *node, const char *service,
				 const struct rdma_addrinfo *hints,
				 struct rdma_addrinfo **res)
{
	struct addrinfo h = { .ai_socktype = SOCK_STREAM }, *ai = NULL;
	struct rdma_addrinfo *r;
	int flags = hints ? hints->ai_flags : 0;
	int ret;

	if (!res || (!node && !service && !hints))
		return sxcm_errno(-EINVAL);
	if (flags & ~(RAI_PASSIVE | RAI_NUMERICHOST | RAI_NOROUTE | RAI_FAMILY))
		return EAI_BADFLAGS;
	if (hints && hints->ai_family == AF_IB)
		return EAI_FAMILY;
	if (hints && hints->ai_qp_type && hints->ai_port_space &&
	    ((hints->ai_qp_type == IBV_QPT_UD) !=
	     (hints->ai_port_space == RDMA_PS_UDP ||
	      hints->ai_port_space == RDMA_PS_IPOIB)))
		return EAI_SOCKTYPE;	/* rdma-core: EAI_QPTYPE, a private value */
	r = calloc(1, sizeof(*r));
	if (!r)
		return EAI_MEMORY;
	r->ai_flags = flags;
	r->ai_qp_type = hints && hints->ai_qp_type ? hints->ai_qp_type :
		IBV_QPT_RC;
	r->ai_port_space = hints && hints->ai_port_space ?
		hints->ai_port_space :
		(r->ai_qp_type == IBV_QPT_UD ? RDMA_PS_UDP : RDMA_PS_TCP);
	if (r->ai_qp_type == IBV_QPT_UD)
		h.ai_socktype = SOCK_DGRAM;

	if (node || service) {
		h.ai_family = hints ? hints->ai_family : AF_UNSPEC;
		if (flags & RAI_PASSIVE)
			h.ai_flags |= AI_PASSIVE;
		if (flags & RAI_NUMERICHOST)
			h.ai_flags |= AI_NUMERICHOST;
		ret = getaddrinfo(node, service, &h, &ai);
		if (ret)
			goto err;
		r->ai_family = ai->ai_family;
		if (flags & RAI_PASSIVE) {
			r->ai_src_addr = sxcm_dup_addr(ai->ai_addr, ai->ai_addrlen);
			r->ai_src_len = ai->ai_addrlen;
			if (!r->ai_src_addr)
				goto nomem;
		} else {
			r->ai_dst_addr = sxcm_dup_addr(ai->ai_addr, ai->ai_addrlen);
			r->ai_dst_len = ai->ai_addrlen;
			if (!r->ai_dst_addr)
				goto nomem;
		}
		freeaddrinfo(ai);
		ai = NULL;
	} else {
		/* No name: the addresses are those the hints carry. */
		r->ai_family = hints->ai_family;
		if (hints->ai_dst_len && hints->ai_dst_addr) {
			r->ai_dst_addr = sxcm_dup_addr(hints->ai_dst_addr,
						       hints->ai_dst_len);
			r->ai_dst_len = hints->ai_dst_len;
			if (!r->ai_dst_addr)
				goto nomem;
		}
	}
	/*
	 * As in rdma-core, a source the hints name fills an empty one,
	 * passive or not: libfabric's verbs provider asks for its bound
	 * address this way (RAI_PASSIVE, ai_src_addr, no node or service).
	 */
	if (!r->ai_src_addr && hints && hints->ai_src_len &&
	    hints->ai_src_addr) {
		r->ai_src_addr = sxcm_dup_addr(hints->ai_src_addr,
					       hints->ai_src_len);
		r->ai_src_len = hints->ai_src_len;
		if (!r->ai_src_addr)
			goto nomem;
		if (!r->ai_family)
			r->ai_family = hints->ai_src_addr->sa_family;
	}
	*res = r;
	return 0;
nomem:
	ret = EAI_MEMORY;
err:
	if (ai)
		freeaddrinfo(ai);
	rdma_freeaddrinfo(r);
	return ret;
}
