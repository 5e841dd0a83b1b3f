// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: completion queues and channels.
 *
 * ibv_poll_cq() and ibv_req_notify_cq() touch only the mapped ring: no
 * system call.  Only channel reads (ibv_get_cq_event) enter the kernel.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sxrc.h"

#define SXRC_ATOMIC(p)	((_Atomic uint32_t *)(p))

SXRC_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context)
{
	struct ibv_comp_channel *ch;
	struct sxrc_channel_out out;
	int ret;

	ch = calloc(1, sizeof(*ch));
	if (!ch)
		return NULL;
	ret = sxrc_invoke(context->cmd_fd, SXRC_OBJ_CHANNEL,
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

SXRC_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	struct ibv_context *context = channel->context;

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

SXRC_EXPORT int ibv_get_cq_event(struct ibv_comp_channel *channel,
				 struct ibv_cq **cq, void **cq_context)
{
	struct sxrc_comp_event ev;
	ssize_t n;

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

SXRC_EXPORT void ibv_ack_cq_events(struct ibv_cq *cq, unsigned int nevents)
{
	pthread_mutex_lock(&cq->mutex);
	cq->comp_events_completed += nevents;
	pthread_cond_signal(&cq->cond);
	pthread_mutex_unlock(&cq->mutex);
}

SXRC_EXPORT struct ibv_cq *ibv_create_cq(struct ibv_context *context, int cqe,
					 void *cq_context,
					 struct ibv_comp_channel *channel,
					 int comp_vector)
{
	struct sxrc_create_cq_in in = {
		.cqe = cqe,
		.channel_fd = channel ? channel->fd : -1,
		.comp_vector = comp_vector,
	};
	struct sxrc_cq_ring_out out;
	struct sxrc_cq *cq;
	int ret;

	if (cqe <= 0 || comp_vector < 0) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;
	in.user_cookie = (uintptr_t)&cq->ibcq;
	ret = sxrc_invoke(context->cmd_fd, SXRC_OBJ_CQ, SXRC_CQ_CREATE,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret) {
		if (ret == ENOMEM)
			sxrc_explain_limit(context, "cq");
		goto err_free;
	}
	ret = sxrc_uring_map(context, &cq->ring, out.mmap_offset,
			     out.mmap_size, out.cqe, sizeof(struct sxrc_cqe));
	if (ret)
		goto err_destroy;

	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
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
	return &cq->ibcq;

err_destroy:
	sxrc_destroy_handle(context->cmd_fd, SXRC_OBJ_CQ, SXRC_CQ_DESTROY,
			    out.handle);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

SXRC_EXPORT int ibv_destroy_cq(struct ibv_cq *ibcq)
{
	struct sxrc_cq *cq = to_sxrc_cq(ibcq);
	struct ibv_comp_channel *channel = ibcq->channel;
	struct ibv_context *context = ibcq->context;
	struct sxrc_handle_in in = { .handle = ibcq->handle };
	struct sxrc_destroy_out out;
	int ret;

	ret = sxrc_invoke(context->cmd_fd, SXRC_OBJ_CQ, SXRC_CQ_DESTROY,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret)
		return ret;

	sxrc_wait_events(&ibcq->mutex, &ibcq->cond,
			 &ibcq->comp_events_completed, out.comp_events);
	sxrc_wait_events(&ibcq->mutex, &ibcq->cond,
			 &ibcq->async_events_completed, out.async_events);
	if (channel) {
		pthread_mutex_lock(&context->mutex);
		channel->refcnt--;
		pthread_mutex_unlock(&context->mutex);
	}
	sxrc_uring_unmap(context, &cq->ring);
	pthread_spin_destroy(&cq->lock);
	pthread_mutex_destroy(&ibcq->mutex);
	pthread_cond_destroy(&ibcq->cond);
	free(cq);
	return 0;
}

SXRC_EXPORT int ibv_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sxrc_cq *cq = to_sxrc_cq(ibcq);
	struct sxrc_resize_cq_in in = { .handle = ibcq->handle, .cqe = cqe };
	struct sxrc_cq_ring_out out;
	struct sxrc_uring old;
	int ret;

	if (cqe <= 0)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	/* Hand back what was polled, so the kernel moves only the rest. */
	atomic_store_explicit(SXRC_ATOMIC(&cq->ring.hdr->cons), cq->cons,
			      memory_order_release);
	ret = sxrc_invoke(ibcq->context->cmd_fd, SXRC_OBJ_CQ, SXRC_CQ_RESIZE,
			  &in, sizeof(in), &out, sizeof(out));
	if (ret)
		goto out_unlock;
	old = cq->ring;
	ret = sxrc_uring_map(ibcq->context, &cq->ring,
			     out.mmap_offset, out.mmap_size, out.cqe,
			     sizeof(struct sxrc_cqe));
	if (ret) {
		/* The old ring is dead now: nothing more can be polled. */
		cq->ring = old;
		goto out_unlock;
	}
	sxrc_uring_unmap(ibcq->context, &old);
	cq->cons = 0;
	ibcq->cqe = out.cqe;
out_unlock:
	pthread_spin_unlock(&cq->lock);
	return ret;
}

static void sxrc_fill_wc(struct ibv_wc *wc, const struct sxrc_cqe *cqe)
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

int sxrc_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct sxrc_cq *cq = to_sxrc_cq(ibcq);
	struct sxrc_ring_hdr *hdr = cq->ring.hdr;
	uint32_t prod;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	/* Pairs with the kernel's smp_store_release() of prod. */
	prod = atomic_load_explicit(SXRC_ATOMIC(&hdr->prod),
				    memory_order_acquire);
	while (n < ne && cq->cons != prod) {
		sxrc_fill_wc(&wc[n++], sxrc_uring_slot(&cq->ring, cq->cons));
		cq->cons++;
	}
	if (n) {
		/* The slots are read: the kernel may reuse them. */
		atomic_store_explicit(SXRC_ATOMIC(&hdr->cons), cq->cons,
				      memory_order_release);
	} else if (atomic_load_explicit(SXRC_ATOMIC(&hdr->flags),
					memory_order_relaxed) &
		   SXRC_RING_ERROR) {
		/* Overrun: IBV_EVENT_CQ_ERR was raised; nothing is left. */
		n = -1;
	}
	pthread_spin_unlock(&cq->lock);
	return n;
}

int sxrc_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct sxrc_cq *cq = to_sxrc_cq(ibcq);

	atomic_store_explicit(SXRC_ATOMIC(&cq->ring.hdr->arm),
			      solicited_only ? SXRC_CQ_ARM_SOLICITED :
					       SXRC_CQ_ARM_NEXT,
			      memory_order_relaxed);
	/*
	 * Pairs with the kernel's smp_mb() between publishing a CQE and
	 * reading arm: either it sees the arm, or the caller's next poll
	 * sees the CQE.
	 */
	atomic_thread_fence(memory_order_seq_cst);
	return 0;
}
