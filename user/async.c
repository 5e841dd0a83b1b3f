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

#include "sxrc.h"

SXRC_EXPORT int ibv_get_async_event(struct ibv_context *context,
				    struct ibv_async_event *event)
{
	struct sxrc_async_event rec;
	ssize_t n;

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
		sxrc_log("async event queue overflowed: events were lost\n");

	memset(event, 0, sizeof(*event));
	event->event_type = rec.event_type;
	switch (rec.element_type) {
	case SXRC_ELEMENT_PORT:
		event->element.port_num = rec.element;
		break;
	case SXRC_ELEMENT_OBJECT:
		/* The cookie is the address of the verbs object. */
		event->element.qp = (struct ibv_qp *)(uintptr_t)rec.element;
		break;
	default:
		errno = EPROTO;
		return -1;
	}
	return 0;
}

SXRC_EXPORT void ibv_ack_async_event(struct ibv_async_event *event)
{
	/*
	 * Port and device events hold nothing.  Object events are counted
	 * by the object's destroy path once objects can raise them.
	 */
	(void)event;
}
