/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the handlers of the ioctl methods, which dispatch.c calls
 * through its table (each takes the call's copied input and fills its
 * output).  Only dispatch.c and the files defining them include this.
 */
#ifndef SXRC_METHODS_H
#define SXRC_METHODS_H

struct sxrc_call;

/* object.c: the object core */
int sxrc_destroy_plain(struct sxrc_call *call);

/* device.c: queries and sysfs */
int sxrc_ctx_query(struct sxrc_call *call);
int sxrc_device_query(struct sxrc_call *call);
int sxrc_device_query_port(struct sxrc_call *call);
int sxrc_device_query_gid(struct sxrc_call *call);
int sxrc_device_query_pkey(struct sxrc_call *call);

/* pd.c */
int sxrc_pd_alloc(struct sxrc_call *call);
int sxrc_pd_query(struct sxrc_call *call);

/* mr.c */
int sxrc_mr_reg(struct sxrc_call *call);
int sxrc_mr_reg_dmabuf(struct sxrc_call *call);
int sxrc_mr_rereg(struct sxrc_call *call);
int sxrc_mr_query(struct sxrc_call *call);

/* odp.c */
int sxrc_mr_advise(struct sxrc_call *call);

/* mw.c */
int sxrc_mw_alloc(struct sxrc_call *call);

/* cq.c */
int sxrc_cq_create(struct sxrc_call *call);
int sxrc_cq_destroy(struct sxrc_call *call);
int sxrc_cq_resize(struct sxrc_call *call);
int sxrc_cq_notify(struct sxrc_call *call);
int sxrc_channel_create(struct sxrc_call *call);

/* qp.c */
int sxrc_qp_create(struct sxrc_call *call);
int sxrc_qp_destroy(struct sxrc_call *call);
int sxrc_qp_modify(struct sxrc_call *call);
int sxrc_qp_query(struct sxrc_call *call);

/* mcast.c */
int sxrc_qp_attach_mcast(struct sxrc_call *call);
int sxrc_qp_detach_mcast(struct sxrc_call *call);

/* ah.c */
int sxrc_ah_create(struct sxrc_call *call);

/* xrc.c */
int sxrc_xrcd_open(struct sxrc_call *call);
int sxrc_xrcd_close(struct sxrc_call *call);
int sxrc_xrcd_reg_qp(struct sxrc_call *call);
int sxrc_xrcd_unreg_qp(struct sxrc_call *call);
int sxrc_xrcd_modify_qp(struct sxrc_call *call);
int sxrc_xrcd_query_qp(struct sxrc_call *call);
int sxrc_qp_open(struct sxrc_call *call);

/* cm_ops.c, cm_chan.c: the communication manager of a link */
int sxrc_cm_channel_create(struct sxrc_call *call);
int sxrc_cm_create_id(struct sxrc_call *call);
int sxrc_cm_destroy_id(struct sxrc_call *call);
int sxrc_cm_listen(struct sxrc_call *call);
int sxrc_cm_send(struct sxrc_call *call);

/* srq.c */
int sxrc_srq_create(struct sxrc_call *call);
int sxrc_srq_destroy(struct sxrc_call *call);
int sxrc_srq_modify(struct sxrc_call *call);
int sxrc_srq_query(struct sxrc_call *call);

#endif /* SXRC_METHODS_H */
