// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc connection manager: event channels and events.  A channel's
 * fd is an eventfd whose counter is 1 exactly while an event is queued.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "sxcm.h"

struct sxcm_channel *sxcm_channel_new(bool private_ch)
{
	struct sxcm_channel *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	/* Readable exactly while an event is queued (counter 1 or 0). */
	c->ch.fd = eventfd(0, EFD_CLOEXEC);
	if (c->ch.fd < 0) {
		free(c);
		return NULL;
	}
	c->private_ch = private_ch;
	sxcm_list_init(&c->events);
	sxcm_list_add_tail(&c->node, &sxcm_channels);
	return c;
}

void sxcm_channel_free(struct sxcm_channel *c)
{
	while (!sxcm_list_empty(&c->events)) {
		struct sxcm_event *e = sxcm_container_of(c->events.next,
							 struct sxcm_event, node);
		sxcm_list_del(&e->node);
		free(e);
	}
	sxcm_sys_free_channel(c);
	sxcm_list_del(&c->node);
	close(c->ch.fd);
	free(c);
}

void sxcm_chan_push(struct sxcm_channel *c, struct sxcm_event *e)
{
	uint64_t one = 1;

	/* Neither can fail: the counter is 0 before a write, 1 before a read. */
	if (sxcm_list_empty(&c->events))
		(void)!write(c->ch.fd, &one, sizeof(one));
	sxcm_list_add_tail(&e->node, &c->events);
	pthread_cond_broadcast(&sxcm_cond);
}

void sxcm_chan_unlink(struct sxcm_channel *c, struct sxcm_event *e)
{
	uint64_t v;

	sxcm_list_del(&e->node);
	if (sxcm_list_empty(&c->events))
		(void)!read(c->ch.fd, &v, sizeof(v));
}

/* Drop @id's queued, not yet retrieved events, wherever they are queued. */
void sxcm_drop_events(struct sxcm_id *id)
{
	struct sxcm_list *p, *q, *n;

	for (p = sxcm_channels.next; p != &sxcm_channels; p = p->next) {
		struct sxcm_channel *c = sxcm_container_of(p, struct sxcm_channel,
							   node);
		for (q = c->events.next; q != &c->events; q = n) {
			struct sxcm_event *e = sxcm_container_of(q,
						struct sxcm_event, node);
			n = q->next;
			if (e->owner == id) {
				sxcm_chan_unlink(c, e);
				free(e);
			}
		}
	}
}

void sxcm_queue_event(struct sxcm_id *id, enum rdma_cm_event_type type,
		      int status, const struct sxcm_msg *msg,
		      struct sxcm_id *listen_id)
{
	struct sxcm_event *e = calloc(1, sizeof(*e));
	struct rdma_conn_param *p;

	if (!e)
		return;		/* the event is lost, as on a full kernel queue */
	e->owner = id;
	e->ev.id = &id->id;
	e->ev.listen_id = listen_id ? &listen_id->id : NULL;
	e->ev.event = type;
	e->ev.status = status;
	if (msg && id->id.qp_type == IBV_QPT_UD) {
		struct rdma_ud_param *u = &e->ev.param.ud;

		memcpy(e->pdata, msg->pdata, msg->pdata_len);
		u->private_data = msg->pdata_len ? e->pdata : NULL;
		u->private_data_len = msg->pdata_len;
		if (id->link) {
			sxcm_link_ah(id, &u->ah_attr);
		} else {
			u->ah_attr.dlid = sxcm_dev.port.lid;
			u->ah_attr.port_num = 1;
		}
		u->qp_num = msg->qpn;
		u->qkey = msg->qkey;
	} else if (msg) {
		p = &e->ev.param.conn;
		memcpy(e->pdata, msg->pdata, msg->pdata_len);
		p->private_data = msg->pdata_len ? e->pdata : NULL;
		p->private_data_len = msg->pdata_len;
		p->responder_resources = msg->responder_resources;
		p->initiator_depth = msg->initiator_depth;
		p->flow_control = msg->flow_control;
		p->retry_count = msg->retry_count;
		p->rnr_retry_count = msg->rnr_retry_count;
		p->srq = msg->srq;
		p->qp_num = msg->qpn;
	}
	sxcm_chan_push(listen_id ? listen_id->chan : id->chan, e);
}

/* Take the next event of @c; block unless @nonblock. */
int sxcm_next_event(struct sxcm_channel *c, bool nonblock,
			   struct sxcm_event **out)
{
	struct sxcm_event *e;

	while (sxcm_list_empty(&c->events)) {
		if (nonblock)
			return -EAGAIN;
		pthread_cond_wait(&sxcm_cond, &sxcm_lock);
	}
	e = sxcm_container_of(c->events.next, struct sxcm_event, node);
	sxcm_chan_unlink(c, e);
	e->owner->unacked++;
	e->owner->handed_out = true;
	if (e->ev.listen_id)
		e->owner->req_unacked = true;
	*out = e;
	return 0;
}

void sxcm_ack(struct sxcm_event *e)
{
	e->owner->unacked--;
	if (e->ev.listen_id)
		e->owner->req_unacked = false;
	free(e);
	pthread_cond_broadcast(&sxcm_cond);
}

SXCM_EXPORT struct rdma_event_channel *rdma_create_event_channel(void)
{
	struct sxcm_channel *c;

	pthread_mutex_lock(&sxcm_lock);
	c = sxcm_channel_new(false);
	pthread_mutex_unlock(&sxcm_lock);
	if (!c)
		return NULL;
	return &c->ch;
}

SXCM_EXPORT void rdma_destroy_event_channel(struct rdma_event_channel *channel)
{
	pthread_mutex_lock(&sxcm_lock);
	sxcm_channel_free(to_chan(channel));
	pthread_mutex_unlock(&sxcm_lock);
}

SXCM_EXPORT int rdma_get_cm_event(struct rdma_event_channel *channel,
				  struct rdma_cm_event **event)
{
	struct sxcm_event *e;
	bool nonblock;
	int ret;

	if (!channel || !event)
		return sxcm_errno(-EINVAL);
	nonblock = fcntl(channel->fd, F_GETFL) & O_NONBLOCK;
	pthread_mutex_lock(&sxcm_lock);
	ret = sxcm_next_event(to_chan(channel), nonblock, &e);
	pthread_mutex_unlock(&sxcm_lock);
	if (ret)
		return sxcm_errno(ret);
	*event = &e->ev;
	return 0;
}

SXCM_EXPORT int rdma_ack_cm_event(struct rdma_cm_event *event)
{
	if (!event)
		return sxcm_errno(-EINVAL);
	pthread_mutex_lock(&sxcm_lock);
	sxcm_ack(sxcm_container_of(event, struct sxcm_event, ev));
	pthread_mutex_unlock(&sxcm_lock);
	return 0;
}

SXCM_EXPORT const char *rdma_event_str(enum rdma_cm_event_type event)
{
	static const char *const names[] = {
		[RDMA_CM_EVENT_ADDR_RESOLVED] = "RDMA_CM_EVENT_ADDR_RESOLVED",
		[RDMA_CM_EVENT_ADDR_ERROR] = "RDMA_CM_EVENT_ADDR_ERROR",
		[RDMA_CM_EVENT_ROUTE_RESOLVED] = "RDMA_CM_EVENT_ROUTE_RESOLVED",
		[RDMA_CM_EVENT_ROUTE_ERROR] = "RDMA_CM_EVENT_ROUTE_ERROR",
		[RDMA_CM_EVENT_CONNECT_REQUEST] = "RDMA_CM_EVENT_CONNECT_REQUEST",
		[RDMA_CM_EVENT_CONNECT_RESPONSE] = "RDMA_CM_EVENT_CONNECT_RESPONSE",
		[RDMA_CM_EVENT_CONNECT_ERROR] = "RDMA_CM_EVENT_CONNECT_ERROR",
		[RDMA_CM_EVENT_UNREACHABLE] = "RDMA_CM_EVENT_UNREACHABLE",
		[RDMA_CM_EVENT_REJECTED] = "RDMA_CM_EVENT_REJECTED",
		[RDMA_CM_EVENT_ESTABLISHED] = "RDMA_CM_EVENT_ESTABLISHED",
		[RDMA_CM_EVENT_DISCONNECTED] = "RDMA_CM_EVENT_DISCONNECTED",
		[RDMA_CM_EVENT_DEVICE_REMOVAL] = "RDMA_CM_EVENT_DEVICE_REMOVAL",
		[RDMA_CM_EVENT_MULTICAST_JOIN] = "RDMA_CM_EVENT_MULTICAST_JOIN",
		[RDMA_CM_EVENT_MULTICAST_ERROR] = "RDMA_CM_EVENT_MULTICAST_ERROR",
		[RDMA_CM_EVENT_ADDR_CHANGE] = "RDMA_CM_EVENT_ADDR_CHANGE",
		[RDMA_CM_EVENT_TIMEWAIT_EXIT] = "RDMA_CM_EVENT_TIMEWAIT_EXIT",
	};

	if ((unsigned int)event < sizeof(names) / sizeof(names[0]) &&
	    names[event])
		return names[event];
	return "UNKNOWN EVENT";
}
