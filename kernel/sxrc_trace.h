/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc tracepoints: the data path and the pinning of user memory, as
 * perf, bpftrace and tracefs users see them (events/softxrc/).
 *
 * sxrc_doorbell        a doorbell ran a send queue: WQEs pending
 * sxrc_send_wqe        one send WQE finished executing (any status)
 * sxrc_cqe             a successful completion reached a CQ
 * sxrc_cqe_err         an error completion (flushes included) reached a CQ
 * sxrc_xrc_reg         a context registered with an XRC receive QP
 * sxrc_xrc_unreg       a registration went; last says the QP goes too
 * sxrc_mr_pin          an MR's pages were pinned
 * sxrc_mr_unpin        they were unpinned
 *
 * Every event names the device; pid is the thread group that caused it
 * (for an unpin, whoever dropped the last reference).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM softxrc

#if !defined(SXRC_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SXRC_TRACE_H

#include <linux/sched.h>
#include <linux/tracepoint.h>

#include "sxrc.h"

/* Device names are NUL-terminated within struct sxrc_dev's name[]. */
#define SXRC_TRACE_DEV_LEN sizeof_field(struct sxrc_dev, name)

TRACE_EVENT(sxrc_doorbell,
	    TP_PROTO(const struct sxrc_qp *qp, u32 pending),
	    TP_ARGS(qp, pending),
	    TP_STRUCT__entry(__array(char, dev, SXRC_TRACE_DEV_LEN)
			     __field(u32, qpn)
			     __field(u32, pending)),
	    TP_fast_assign(memcpy(__entry->dev, qp->obj.ctx->dev->name, SXRC_TRACE_DEV_LEN);
			   __entry->qpn = qp->qpn;
			   __entry->pending = pending;),
	    TP_printk("%s qpn=%u pending=%u", __entry->dev, __entry->qpn,
		      __entry->pending));

TRACE_EVENT(sxrc_send_wqe,
	    TP_PROTO(const struct sxrc_qp *qp, const struct sxrc_send_wqe *wqe,
		     u32 status, u32 byte_len),
	    TP_ARGS(qp, wqe, status, byte_len),
	    TP_STRUCT__entry(__array(char, dev, SXRC_TRACE_DEV_LEN)
			     __field(u32, qpn)
			     __field(u64, wr_id)
			     __field(u32, opcode)
			     __field(u32, send_flags)
			     __field(u32, status)
			     __field(u32, byte_len)),
	    TP_fast_assign(memcpy(__entry->dev, qp->obj.ctx->dev->name, SXRC_TRACE_DEV_LEN);
			   __entry->qpn = qp->qpn;
			   __entry->wr_id = wqe->wr_id;
			   __entry->opcode = wqe->opcode;
			   __entry->send_flags = wqe->send_flags;
			   __entry->status = status;
			   __entry->byte_len = byte_len;),
	    TP_printk("%s qpn=%u wr_id=0x%llx opcode=%u flags=0x%x status=%u len=%u",
		      __entry->dev, __entry->qpn, __entry->wr_id, __entry->opcode,
		      __entry->send_flags, __entry->status, __entry->byte_len));

DECLARE_EVENT_CLASS(sxrc_cqe_class,
		    TP_PROTO(const struct sxrc_cq *cq, const struct sxrc_cqe *cqe),
		    TP_ARGS(cq, cqe),
		    TP_STRUCT__entry(__array(char, dev, SXRC_TRACE_DEV_LEN)
				     __field(u32, cq)
				     __field(u32, qpn)
				     __field(u64, wr_id)
				     __field(u32, opcode)
				     __field(u32, status)
				     __field(u32, byte_len)),
		    TP_fast_assign(memcpy(__entry->dev, cq->obj.ctx->dev->name, SXRC_TRACE_DEV_LEN);
				   __entry->cq = cq->obj.handle;
				   __entry->qpn = cqe->qp_num;
				   __entry->wr_id = cqe->wr_id;
				   __entry->opcode = cqe->opcode;
				   __entry->status = cqe->status;
				   __entry->byte_len = cqe->byte_len;),
		    TP_printk("%s cq=%u qpn=%u wr_id=0x%llx opcode=%u status=%u len=%u",
			      __entry->dev, __entry->cq, __entry->qpn, __entry->wr_id,
			      __entry->opcode, __entry->status, __entry->byte_len));

DEFINE_EVENT(sxrc_cqe_class, sxrc_cqe,
	     TP_PROTO(const struct sxrc_cq *cq, const struct sxrc_cqe *cqe),
	     TP_ARGS(cq, cqe));

DEFINE_EVENT(sxrc_cqe_class, sxrc_cqe_err,
	     TP_PROTO(const struct sxrc_cq *cq, const struct sxrc_cqe *cqe),
	     TP_ARGS(cq, cqe));

DECLARE_EVENT_CLASS(sxrc_xrc_class,
		    TP_PROTO(const struct sxrc_qp *qp, u32 handle, bool last),
		    TP_ARGS(qp, handle, last),
		    TP_STRUCT__entry(__array(char, dev, SXRC_TRACE_DEV_LEN)
				     __field(unsigned long, ino)
				     __field(u32, qpn)
				     __field(u32, handle)
				     __field(pid_t, pid)
				     __field(bool, last)),
		    TP_fast_assign(memcpy(__entry->dev, qp->obj.ctx->dev->name, SXRC_TRACE_DEV_LEN);
				   __entry->ino = qp->xrcd->inode ? qp->xrcd->inode->i_ino : 0;
				   __entry->qpn = qp->qpn;
				   __entry->handle = handle;
				   __entry->pid = current->tgid;
				   __entry->last = last;),
		    TP_printk("%s ino=%lu qpn=%u handle=%u pid=%d last=%d",
			      __entry->dev, __entry->ino, __entry->qpn, __entry->handle,
			      __entry->pid, __entry->last));

DEFINE_EVENT(sxrc_xrc_class, sxrc_xrc_reg,
	     TP_PROTO(const struct sxrc_qp *qp, u32 handle, bool last),
	     TP_ARGS(qp, handle, last));

DEFINE_EVENT(sxrc_xrc_class, sxrc_xrc_unreg,
	     TP_PROTO(const struct sxrc_qp *qp, u32 handle, bool last),
	     TP_ARGS(qp, handle, last));

DECLARE_EVENT_CLASS(sxrc_umem_class,
		    TP_PROTO(const struct sxrc_umem *umem),
		    TP_ARGS(umem),
		    TP_STRUCT__entry(__array(char, dev, SXRC_TRACE_DEV_LEN)
				     __field(u64, addr)
				     __field(u64, length)
				     __field(unsigned long, npages)
				     __field(unsigned long, nruns)
				     __field(bool, writable)
				     __field(pid_t, pid)),
		    TP_fast_assign(memcpy(__entry->dev, umem->dev->name, SXRC_TRACE_DEV_LEN);
				   __entry->addr = umem->addr;
				   __entry->length = umem->length;
				   __entry->npages = umem->npages;
				   __entry->nruns = umem->nruns;
				   __entry->writable = umem->writable;
				   __entry->pid = current->tgid;),
		    TP_printk("%s addr=0x%llx length=%llu pages=%lu runs=%lu writable=%d pid=%d",
			      __entry->dev, __entry->addr, __entry->length,
			      __entry->npages, __entry->nruns, __entry->writable,
			      __entry->pid));

DEFINE_EVENT(sxrc_umem_class, sxrc_mr_pin,
	     TP_PROTO(const struct sxrc_umem *umem),
	     TP_ARGS(umem));

DEFINE_EVENT(sxrc_umem_class, sxrc_mr_unpin,
	     TP_PROTO(const struct sxrc_umem *umem),
	     TP_ARGS(umem));

#endif /* SXRC_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sxrc_trace
#include <trace/define_trace.h>
