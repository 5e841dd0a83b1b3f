// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: asynchronous events.
 *
 * The kernel queues struct sxrc_async_event records on the device fd,
 * which is also context->async_fd, so applications can poll() it as
 * rdma-core documents.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "sxu.h"

SXU_EXPORT int ibv_get_async_event(struct ibv_context *context,
				    struct ibv_async_event *event)
{
	struct sxrc_async_event rec;
	ssize_t n;

	if (sxu_foreign(context))
		return SXU_FORWARD(ibv_get_async_event, -1, context, event);

	do {
		n = read(context->async_fd, &rec, sizeof(rec));
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -1;
	if (n != sizeof(rec)) {
		errno = EIO;
		return -1;
	}
	if (rec.flags & SXRC_ASYNC_FLAG_OVERFLOW)
		sxu_log("async event queue overflowed: events were lost\n");

	memset(event, 0, sizeof(*event));
	event->event_type = rec.event_type;
	switch (rec.element_type) {
	case SXRC_ELEMENT_PORT:
		event->element.port_num = rec.element;
		break;
	case SXRC_ELEMENT_OBJECT:
		/* The cookie is the address of the verbs object. */
		switch (rec.event_type) {
		case IBV_EVENT_CQ_ERR:
			event->element.cq = (void *)(uintptr_t)rec.element;
			break;
		case IBV_EVENT_SRQ_ERR:
		case IBV_EVENT_SRQ_LIMIT_REACHED:
			event->element.srq = (void *)(uintptr_t)rec.element;
			break;
		default:
			event->element.qp = (void *)(uintptr_t)rec.element;
			break;
		}
		break;
	case SXRC_ELEMENT_XRC_QPN:
		/* OFED 1.5: the QP by number, the type flagged. */
		event->event_type |= IBV_XRC_QP_EVENT_FLAG;
		event->element.port_num = rec.element;
		break;
	default:
		errno = EPROTO;
		return -1;
	}
	return 0;
}

/* Count the acknowledgement that the object's destroy waits for. */
SXU_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	struct ibv_context *context = NULL;
	pthread_mutex_t *mutex = NULL;
	pthread_cond_t *cond = NULL;
	uint32_t *count = NULL;

	/* OFED-style receive QP events name no object: nothing to count. */
	if (event->event_type & IBV_XRC_QP_EVENT_FLAG)
		return;
	switch (event->event_type) {
	case IBV_EVENT_CQ_ERR:
		context = event->element.cq->context;
		mutex = &event->element.cq->mutex;
		cond = &event->element.cq->cond;
		count = &event->element.cq->async_events_completed;
		break;
	case IBV_EVENT_SRQ_ERR:
	case IBV_EVENT_SRQ_LIMIT_REACHED:
		context = event->element.srq->context;
		mutex = &event->element.srq->mutex;
		cond = &event->element.srq->cond;
		count = &event->element.srq->events_completed;
		break;
	case IBV_EVENT_WQ_FATAL:
		/* softxrc has no WQs: only another device's come here. */
		context = event->element.wq->context;
		break;
	case IBV_EVENT_QP_FATAL:
	case IBV_EVENT_QP_REQ_ERR:
	case IBV_EVENT_QP_ACCESS_ERR:
	case IBV_EVENT_COMM_EST:
	case IBV_EVENT_SQ_DRAINED:
	case IBV_EVENT_PATH_MIG:
	case IBV_EVENT_PATH_MIG_ERR:
	case IBV_EVENT_QP_LAST_WQE_REACHED:
		context = event->element.qp->context;
		mutex = &event->element.qp->mutex;
		cond = &event->element.qp->cond;
		count = &event->element.qp->events_completed;
		break;
	default:
		/* Port and device events hold nothing. */
		break;
	}
	/* Another device's: its library counts. */
	if (context && sxu_foreign(context)) {
		SXU_FORWARD(ibv_ack_async_event, (void)0, event);
		return;
	}
	if (!count)
		return;
	pthread_mutex_lock(mutex);
	(*count)++;
	pthread_cond_signal(cond);
	pthread_mutex_unlock(mutex);
}
