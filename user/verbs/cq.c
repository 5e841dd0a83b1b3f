// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: completion queues and channels.
 *
 * ibv_poll_cq(), ibv_req_notify_cq() and the extended CQ's
 * ibv_start_poll() family touch only the mapped ring: no system call.  Only channel reads (ibv_get_cq_event) enter the kernel.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sxu.h"


SXU_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct ibv_comp_channel *ch;
	struct sxrc_channel_out out;
	int ret;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_create_comp_channel, NULL, context);

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return NULL;
	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_CHANNEL,
			  SXRC_CHANNEL_CREATE, NULL, 0, &out, sizeof(out));
	if (ret) {
		free(ch);
		errno = ret;
		return NULL;
	}
	ch->context = context;
	ch->fd = out.fd;
	return ch;
}

SXU_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ibv_context *context = channel->context;

	if (sxu_foreign(channel->context))
		return SXU_FORWARD(ibv_destroy_comp_channel, EOPNOTSUPP,
				   channel);

	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		return EBUSY;
	}
	close(channel->fd);
	free(channel);
	pthread_mutex_unlock(&context->mutex);
	return 0;
}

SXU_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
				 struct ibv_cq **cq, void **cq_context)
{
	struct sxrc_comp_event ev;
	ssize_t n;

	if (sxu_foreign(channel->context))
		return SXU_FORWARD(ibv_get_cq_event, -1, channel, cq,
				   cq_context);

	n = read(channel->fd, &ev, sizeof(ev));
	if (n < 0)
		return -1;
	if (n != sizeof(ev)) {
		errno = EIO;
		return -1;
	}
	*cq = (struct ibv_cq *)(uintptr_t)ev.cq_cookie;
	*cq_context = (*cq)->cq_context;
	return 0;
}

SXU_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	if (sxu_foreign(cq->context)) {
		SXU_FORWARD(ibv_ack_cq_events, (void)0, cq, nevents);
		return;
	}
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

static inline void sxu_cq_lock(struct sxu_cq *cq)
{
	if (!cq->no_lock)
		sxu_spin_lock(&cq->lock);
}

static inline void sxu_cq_unlock(struct sxu_cq *cq)
{
	if (!cq->no_lock)
		sxu_spin_unlock(&cq->lock);
}

/* @pdom: the parent domain the CQ is created on, held; or NULL. */
static struct sxu_cq *sxu_cq_new(struct ibv_context *context, int cqe,
				   void *cq_context,
				   struct ibv_comp_channel *channel,
				   int comp_vector, uint32_t flags,
				   struct sxu_pd *pdom)
{
	struct sxrc_create_cq_in in = {
		.cqe = cqe,
		.channel_fd = channel ? channel->fd : -1,
		.comp_vector = comp_vector,
		.flags = flags,
	};
	struct sxrc_cq_ring_out out = { 0 };
	struct sxu_cq *cq;
	bool custom;
	int ret;

	if (cqe <= 0 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = sxu_obj_alloc(pdom, sizeof(*cq), SXRC_RES_TYPE_CQ, &custom);
	if (!cq)
		return NULL;
	cq->custom_mem = custom;
	cq->pdom = pdom;
	cq->no_lock = pdom && pdom->td;
	in.user_cookie = (uintptr_t)&cq->ibcq;
	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		if (ret == ENOMEM)
			sxu_explain_limit(context, "cq");
		goto err_free;
	}
	/* A kernel without SXRC_CQ_CREATE_TIMESTAMP reports no stride. */
	if (!out.cqe_stride)
		out.cqe_stride = sizeof(struct sxrc_cqe);
	ret = sxu_uring_map(context, &cq->ring, out.mmap_offset,
			     out.mmap_size, out.cqe, out.cqe_stride);
	if (ret)
		goto err_destroy;

	sxu_spin_init(&cq->lock);
	pthread_mutex_init(&cq->ibcq.mutex, NULL);
	pthread_cond_init(&cq->ibcq.cond, NULL);
	cq->ibcq.context = context;
	cq->ibcq.channel = channel;
	cq->ibcq.cq_context = cq_context;
	cq->ibcq.handle = out.handle;
	cq->ibcq.cqe = out.cqe;
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt++;
		pthread_mutex_unlock(&context->mutex);
	}
	return cq;

err_destroy:
	sxu_destroy_handle(context->cmd_fd, SXRC_OBJ_CQ, SXRC_CQ_DESTROY,
			    out.handle);
err_free:
	sxu_obj_free(pdom, cq, SXRC_RES_TYPE_CQ, custom);
	errno = ret;
	return NULL;
}

SXU_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
					 void *cq_context,
					 struct ibv_comp_channel *channel,
					 int comp_vector)
{
	struct sxu_cq *cq;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_create_cq, NULL, context, cqe,
				   cq_context, channel, comp_vector);
	cq = sxu_cq_new(context, cqe, cq_context, channel, comp_vector, 0,
			NULL);
	return cq ? &cq->ibcq : NULL;
}

SXU_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct sxu_cq *cq = to_sxu_cq(ibcq);
	struct ibv_comp_channel *channel = ibcq->channel;
	struct ibv_context *context = ibcq->context;
	struct sxu_pd *pdom;
	struct sxrc_handle_in in = { .handle = ibcq->handle };
	struct sxrc_destroy_out out;
	int ret;

	if (sxu_foreign(ibcq->context))
		return SXU_FORWARD(ibv_destroy_cq, EOPNOTSUPP, ibcq);

	ret = sxu_invoke(context->cmd_fd, SXRC_OBJ_CQ, SXRC_CQ_DESTROY,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;

	sxu_wait_events(&ibcq->mutex, &ibcq->cond,
			 &ibcq->comp_events_completed, out.comp_events);
	sxu_wait_events(&ibcq->mutex, &ibcq->cond,
			 &ibcq->async_events_completed, out.async_events);
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&context->mutex);
	}
	sxu_uring_unmap(context, &cq->ring);
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	/* The domain may go once released: free through it first. */
	pdom = cq->pdom;
	sxu_obj_free(pdom, cq, SXRC_RES_TYPE_CQ, cq->custom_mem);
	sxu_pdom_put(pdom);
	return 0;
}

SXU_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sxu_cq *cq = to_sxu_cq(ibcq);
	struct sxrc_resize_cq_in in = { .handle = ibcq->handle, .cqe = cqe };
	struct sxrc_cq_ring_out out = { 0 };
	struct sxu_uring old;
	int ret;

	if (sxu_foreign(ibcq->context))
		return SXU_FORWARD(ibv_resize_cq, EOPNOTSUPP, ibcq, cqe);

	if (cqe <= 0)
		return EINVAL;
	sxu_cq_lock(cq);
	/* Hand back what was polled, so the kernel moves only the rest. */
	sxu_uring_publish_cons(&cq->ring, cq->cons);
	ret = sxu_invoke(ibcq->context->cmd_fd, SXRC_OBJ_CQ, SXRC_CQ_RESIZE,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret)
		goto out_unlock;
	old = cq->ring;
	ret = sxu_uring_map(ibcq->context, &cq->ring,
			     out.mmap_offset, out.mmap_size, out.cqe,
			     old.stride);
	if (ret) {
		/* The old ring is dead now: nothing more can be polled. */
		cq->ring = old;
		goto out_unlock;
	}
	sxu_uring_unmap(ibcq->context, &old);
	cq->cons = 0;
	ibcq->cqe = out.cqe;
out_unlock:
	sxu_cq_unlock(cq);
	return ret;
}

static void sxu_fill_wc(struct ibv_wc *wc, const struct sxrc_cqe *cqe)
{
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	wc->opcode = cqe->opcode;
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->imm_data = cqe->imm_data;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->dlid_path_bits = cqe->dlid_path_bits;
}

int sxu_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct sxu_cq *cq = to_sxu_cq(ibcq);
	uint32_t prod;
	int n = 0;

	sxu_cq_lock(cq);
	prod = sxu_uring_prod(&cq->ring);
	/* Empty, what a polling loop finds most: straight through. */
	if (prod == cq->cons) {
		/* Overrun: IBV_EVENT_CQ_ERR was raised; nothing is left. */
		if (sxu_uring_flags(&cq->ring) & SXRC_RING_ERROR)
			n = -1;
		sxu_cq_unlock(cq);
		return n;
	}
	while (n < ne && cq->cons != prod) {
		sxu_fill_wc(&wc[n++], sxu_uring_slot(&cq->ring, cq->cons));
		cq->cons++;
	}
	/* The slots are read: the kernel may reuse them. */
	if (n)
		sxu_uring_publish_cons(&cq->ring, cq->cons);
	sxu_cq_unlock(cq);
	return n;
}

/*
 * Does a completion not yet handed back (between the published consumer
 * index and the producer's) match an arm?  Read without the CQ's lock,
 * which a poller may hold across ibv_start_poll()..ibv_end_poll(): a
 * slot being polled at the same time at worst fires an event early, and
 * an event may always find the CQ empty.
 */
static bool sxu_cq_waiting(struct sxu_cq *cq, int solicited_only)
{
	uint32_t cons = sxu_uring_cons(&cq->ring);
	uint32_t prod = sxu_uring_prod(&cq->ring);
	const struct sxrc_cqe *cqe;

	if (prod - cons > cq->ring.entries)
		return false;
	for (; cons != prod; cons++) {
		cqe = sxu_uring_slot(&cq->ring, cons);
		if (!solicited_only || cqe->solicited ||
		    cqe->status != SXRC_WC_SUCCESS)
			return true;
	}
	return false;
}

int sxu_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct sxu_cq *cq = to_sxu_cq(ibcq);
	struct sxrc_handle_in in = { .handle = ibcq->handle };

	atomic_store_explicit(SXU_RING_IDX(&cq->ring.hdr->arm),
			      solicited_only ? SXRC_CQ_ARM_SOLICITED :
					       SXRC_CQ_ARM_NEXT,
			      memory_order_relaxed);
	/*
	 * Pairs with the kernel's smp_mb() between publishing a CQE and
	 * reading arm: either it sees the arm, or the caller's next poll
	 * sees the CQE.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	/*
	 * A completion that was already there fires the arm too, as on
	 * ConnectX (uapi: "CQ arming"): Open MPI's openib connection
	 * manager arms without polling again.  A system call only then.
	 */
	if ((to_sxu_ctx(ibcq->context)->features & SXRC_FEATURE_CQ_NOTIFY) &&
	    sxu_cq_waiting(cq, solicited_only))
		return sxu_invoke(ibcq->context->cmd_fd, SXRC_OBJ_CQ,
				  SXRC_CQ_NOTIFY, &in, sizeof(in), NULL, 0);
	return 0;
}

/* ------------------------------------------------------------------
 * Extended CQs: ibv_create_cq_ex() and the ibv_start_poll() family,
 * reading the same ring as ibv_poll_cq().
 */

#define SXU_WC_EX_TIMESTAMPS	(IBV_WC_EX_WITH_COMPLETION_TIMESTAMP | \
				 IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
#define SXU_WC_EX_SUPPORTED	(IBV_WC_STANDARD_FLAGS | SXU_WC_EX_TIMESTAMPS)

static inline struct sxu_cq *to_sxu_cqx(struct ibv_cq_ex *cqx)
{
	return sxu_container_of(cqx, struct sxu_cq, ibcq_ex);
}

static inline const struct sxrc_cqe_ts *sxu_cur_ts(struct sxu_cq *cq)
{
	return (const struct sxrc_cqe_ts *)cq->cur;
}

/* Take the next CQE, if any, as the current one.  Called under cq->lock. */
static int sxu_cq_take(struct sxu_cq *cq)
{
	if (cq->cons == sxu_uring_prod(&cq->ring)) {
		cq->cur = NULL;
		return ENOENT;
	}
	cq->cur = sxu_uring_slot(&cq->ring, cq->cons++);
	cq->ibcq_ex.wr_id = cq->cur->wr_id;
	cq->ibcq_ex.status = cq->cur->status;
	return 0;
}

static int sxu_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct sxu_cq *cq = to_sxu_cqx(cqx);
	int ret;

	if (attr && attr->comp_mask)
		return EINVAL;
	sxu_cq_lock(cq);
	ret = sxu_cq_take(cq);
	if (!ret)
		return 0;	/* the lock is held until ibv_end_poll() */
	/* Overrun: IBV_EVENT_CQ_ERR was raised; nothing is left. */
	if (sxu_uring_flags(&cq->ring) & SXRC_RING_ERROR)
		ret = EIO;
	sxu_cq_unlock(cq);
	return ret;
}

static int sxu_next_poll(struct ibv_cq_ex *cqx)
{
	return sxu_cq_take(to_sxu_cqx(cqx));
}

static void sxu_end_poll(struct ibv_cq_ex *cqx)
{
	struct sxu_cq *cq = to_sxu_cqx(cqx);

	cq->cur = NULL;
	/* The slots are read: the kernel may reuse them. */
	sxu_uring_publish_cons(&cq->ring, cq->cons);
	sxu_cq_unlock(cq);
}

static enum ibv_wc_opcode sxu_read_opcode(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->opcode;
}

static uint32_t sxu_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->vendor_err;
}

static uint32_t sxu_read_byte_len(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->byte_len;
}

static __be32 sxu_read_imm_data(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->imm_data;
}

static uint32_t sxu_read_qp_num(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->qp_num;
}

static uint32_t sxu_read_src_qp(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->src_qp;
}

static unsigned int sxu_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->wc_flags;
}

static uint32_t sxu_read_slid(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->slid;
}

static uint8_t sxu_read_sl(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->sl;
}

static uint8_t sxu_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return to_sxu_cqx(cqx)->cur->dlid_path_bits;
}

static uint64_t sxu_read_completion_ts(struct ibv_cq_ex *cqx)
{
	return sxu_cur_ts(to_sxu_cqx(cqx))->ts_ns;
}

static uint64_t sxu_read_completion_wallclock_ns(struct ibv_cq_ex *cqx)
{
	return sxu_cur_ts(to_sxu_cqx(cqx))->wallclock_ns;
}

struct ibv_cq_ex *sxu_create_cq_ex(struct ibv_context *context,
				    struct ibv_cq_init_attr_ex *attr)
{
	struct sxu_context *ctx = to_sxu_ctx(context);
	struct sxu_pd *pdom = NULL;
	struct ibv_cq_ex *x;
	struct sxu_cq *cq;
	uint32_t flags = 0;

	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD)) {
		errno = EINVAL;
		return NULL;
	}
	/* A single-threaded CQ is a hint; overruns are always reported. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	/* Only a parent domain (not a plain PD) of this context. */
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != context ||
	     !to_sxu_pd(attr->parent_domain)->parent)) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->wc_flags & ~(uint64_t)SXU_WC_EX_SUPPORTED) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->wc_flags & SXU_WC_EX_TIMESTAMPS) {
		if (!(ctx->features & SXRC_FEATURE_CQE_TIMESTAMP)) {
			errno = EOPNOTSUPP;
			return NULL;
		}
		flags |= SXRC_CQ_CREATE_TIMESTAMP;
	}
	if (attr->cqe > INT32_MAX || attr->comp_vector > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}

	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD)
		pdom = sxu_pdom_get(attr->parent_domain);
	cq = sxu_cq_new(context, attr->cqe, attr->cq_context, attr->channel,
			 attr->comp_vector, flags, pdom);
	if (!cq) {
		sxu_pdom_put(pdom);
		return NULL;
	}
	cq->wc_flags = attr->wc_flags;

	x = &cq->ibcq_ex;
	x->start_poll = sxu_start_poll;
	x->next_poll = sxu_next_poll;
	x->end_poll = sxu_end_poll;
	x->read_opcode = sxu_read_opcode;
	x->read_vendor_err = sxu_read_vendor_err;
	x->read_wc_flags = sxu_read_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		x->read_byte_len = sxu_read_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		x->read_imm_data = sxu_read_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		x->read_qp_num = sxu_read_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		x->read_src_qp = sxu_read_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		x->read_slid = sxu_read_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		x->read_sl = sxu_read_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		x->read_dlid_path_bits = sxu_read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		x->read_completion_ts = sxu_read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		x->read_completion_wallclock_ns =
			sxu_read_completion_wallclock_ns;
	return x;
}

/*
 * The completion clock is CLOCK_MONOTONIC in nanoseconds (uapi struct
 * sxrc_cqe_ts): the raw clock is read here, with no system call on
 * kernels with a vDSO.
 */
int sxu_query_rt_values(struct ibv_context *context,
			 struct ibv_values_ex *values)
{
	struct sxu_context *ctx = to_sxu_ctx(context);
	uint32_t mask = values->comp_mask;

	if (mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EINVAL;
	values->comp_mask = 0;
	if (mask & IBV_VALUES_MASK_RAW_CLOCK) {
		if (!(ctx->features & SXRC_FEATURE_CQE_TIMESTAMP))
			return EOPNOTSUPP;
		if (clock_gettime(CLOCK_MONOTONIC, &values->raw_clock))
			return errno;
		values->comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}
