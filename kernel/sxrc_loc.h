/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the module's internal functions, by the file that defines
 * them (the ioctl handlers are in sxrc_methods.h).
 */
#ifndef SXRC_LOC_H
#define SXRC_LOC_H

/* main.c */
extern unsigned int sxrc_max_xrcd;
extern unsigned long sxrc_max_mr_pages;
struct sxrc_dev *sxrc_dev_get(u32 index);
void sxrc_dev_put(struct sxrc_dev *dev);
struct sxrc_dev *sxrc_dev_add(u32 index, struct net_device *ndev);
void sxrc_dev_remove(struct sxrc_dev *dev);
struct sxrc_dev *sxrc_dev_locked(u32 index);
void sxrc_devs_lock(void);
void sxrc_devs_unlock(void);
struct sxrc_dev *sxrc_dev_by_gid(const u8 *gid, const struct net *net);

/* The namespace of @dev's link's network device, NULL without one; RCU. */
static inline struct net *sxrc_dev_net(struct sxrc_dev *dev)
{
	struct net_device *ndev = rcu_dereference(dev->ndev);

	return ndev ? dev_net(ndev) : NULL;
}

struct sxrc_dev *sxrc_dev_by_ndev(const struct net_device *ndev);
struct sxrc_user *sxrc_user_get(struct sxrc_dev *dev, kuid_t uid);
void sxrc_user_put(struct sxrc_user *user);
struct sxrc_dev *sxrc_dev_by_lid(u16 lid);
struct sxrc_dev *sxrc_dev_by_guid(__be64 guid);
void sxrc_local_gid(const struct sxrc_dev *dev, u8 *gid);

/* link.c: devices attached to a network device */
void sxrc_link_init(struct sxrc_dev *dev, struct net_device *ndev);
void sxrc_link_release(struct sxrc_dev *dev);
bool sxrc_link_has_gid(struct sxrc_dev *dev, const u8 *gid);
int sxrc_link_gid_index(struct sxrc_dev *dev, const u8 *gid);
int sxrc_link_gid(struct sxrc_dev *dev, u32 index, u8 *gid);
int sxrc_link_add(struct net *net, const char *name, const char *ifname);
int sxrc_link_del(const char *name);
int sxrc_link_init_module(void);
void sxrc_link_exit_module(void);

/* netlink.c: the generic netlink family */
struct genl_family;
struct netlink_callback;
extern struct genl_family sxrc_nl_family;
int sxrc_nl_init(void);
void sxrc_nl_exit(void);

/* nl_res.c: the resource view, the family's SXRC_NL_CMD_RES_GET dump */
int sxrc_nl_start(struct netlink_callback *cb);
int sxrc_nl_dumpit(struct sk_buff *skb, struct netlink_callback *cb);

/* object.c: the object core */
extern const struct sxrc_type_info sxrc_types[];
u32 sxrc_type_limit(enum sxrc_obj_type type);
u32 sxrc_type_user_limit(enum sxrc_obj_type type);
int sxrc_obj_init(struct sxrc_call *call, struct sxrc_obj *obj,
		  enum sxrc_obj_type type, const struct sxrc_obj_ops *ops,
		  u64 user_cookie);
int sxrc_obj_init_shared(struct sxrc_ctx *ctx, struct sxrc_obj *obj,
			 enum sxrc_obj_type type,
			 const struct sxrc_obj_ops *ops);
void sxrc_obj_release_shared(struct sxrc_obj *obj);
struct sxrc_obj *sxrc_obj_get(struct sxrc_ctx *ctx, u32 handle,
			      enum sxrc_obj_type type);
void sxrc_obj_put(struct sxrc_obj *obj);
void sxrc_obj_drop(struct sxrc_obj *obj);
void sxrc_kref_put(struct kref *ref, void (*release)(struct kref *ref),
		   struct sxrc_late_put *late);
void sxrc_late_flush(void);
void sxrc_obj_unuse(struct sxrc_obj *obj);
void sxrc_obj_depend(struct sxrc_obj *obj);
void sxrc_obj_undepend(struct sxrc_obj *obj);
int sxrc_obj_destroy(struct sxrc_ctx *ctx, u32 handle, enum sxrc_obj_type type,
		     struct sxrc_obj **keep);
int sxrc_destroy_counted(struct sxrc_call *call, enum sxrc_obj_type type,
			 atomic_t *(*comp_events)(struct sxrc_obj *obj));
struct sxrc_obj *sxrc_obj_query_get(struct sxrc_ctx *ctx, u32 handle,
				    enum sxrc_obj_type type);
void sxrc_obj_publish(struct sxrc_obj *obj);
void sxrc_obj_abort(struct sxrc_obj *obj);
void sxrc_ctx_destroy_objects(struct sxrc_ctx *ctx);

/* uctx.c: contexts, the device file */
extern const struct file_operations sxrc_fops;
void sxrc_ctx_put(struct sxrc_ctx *ctx);
bool sxrc_ctx_member(struct sxrc_ctx *ctx);

/* dispatch.c: method calls and the doorbell */
long sxrc_invoke(struct sxrc_ctx *ctx, struct sxrc_ioctl_hdr __user *uhdr);
long sxrc_doorbell(struct sxrc_ctx *ctx, unsigned long arg);

/* event.c: the async event queue of a context */
void sxrc_ctx_events_flush(struct sxrc_ctx *ctx);
void sxrc_queue_event(struct sxrc_ctx *ctx, u32 event_type, u16 element_type,
		      u64 element, struct sxrc_obj *obj);
void sxrc_obj_event(struct sxrc_obj *obj, u32 event_type);
void sxrc_obj_kill_events(struct sxrc_obj *obj);
void sxrc_dev_event(struct sxrc_dev *dev, u32 event_type, u32 port_num);
ssize_t sxrc_event_read(struct file *file, char __user *buf, size_t len,
			loff_t *pos);
__poll_t sxrc_event_poll(struct file *file, struct poll_table_struct *wait);

/* device.c: queries and sysfs */
u16 sxrc_port_lid(struct sxrc_dev *dev);
extern const struct attribute_group *sxrc_dev_groups[];

/* ring.c: mapped rings */
struct sxrc_ring *sxrc_ring_alloc(struct sxrc_ctx *ctx, u32 entries,
				  u32 stride);
void sxrc_ring_put(struct sxrc_ring *ring);
void sxrc_ring_unmap(struct sxrc_ctx *ctx, struct sxrc_ring *ring);
void sxrc_wq_info(struct sxrc_ring *ring, struct sxrc_wq_info *info);
int sxrc_mmap(struct file *file, struct vm_area_struct *vma);

/* umem.c: the memory behind an MR */
struct sxrc_umem *sxrc_umem_get(struct sxrc_dev *dev, u64 addr, u64 length,
				bool writable);
struct sxrc_umem *sxrc_umem_get_dmabuf(struct sxrc_dev *dev, int fd,
				       u64 offset, u64 length);
void sxrc_umem_put(struct sxrc_umem *umem);
void sxrc_umem_use(struct sxrc_umem *umem);
void sxrc_umem_unuse(struct sxrc_umem *umem);
void sxrc_umem_quiesce(struct sxrc_umem *umem);
void sxrc_umem_idle(struct sxrc_umem *umem);

/* odp.c */
struct sxrc_umem *sxrc_odp_get(struct sxrc_dev *dev, u64 addr, u64 length,
			       bool writable);
void sxrc_odp_release(struct sxrc_umem *umem);
int sxrc_odp_prefault(struct sxrc_umem *umem, u64 off, u64 len, bool write,
		      bool fault);
int sxrc_odp_fault(struct sxrc_odp_win *w, struct sxrc_umem *umem, u64 off,
		   u64 end, bool write);
void sxrc_odp_lock(struct sxrc_umem *a, struct sxrc_umem *b);
void sxrc_odp_unlock(struct sxrc_umem *a, struct sxrc_umem *b);
bool sxrc_odp_valid(struct sxrc_odp_win *w);
struct page *sxrc_odp_page(struct sxrc_odp_win *w, unsigned long pgidx);

/* evq.c: event queues (async events, channels), and channels' files */
void sxrc_evq_init(struct sxrc_evq *q);
int sxrc_evq_wait(struct sxrc_evq *q, struct file *file);
__poll_t sxrc_evq_poll(struct sxrc_evq *q, struct file *file,
		       struct poll_table_struct *wait);
void sxrc_evfile_init(struct sxrc_evfile *evf, struct sxrc_dev *dev,
		      void (*free)(struct sxrc_evfile *evf));
void sxrc_evfile_put(struct sxrc_evfile *evf);
__poll_t sxrc_evfile_poll(struct file *file, struct poll_table_struct *wait);
int sxrc_evfile_release(struct inode *inode, struct file *file);
int sxrc_evfile_create(struct sxrc_call *call, struct sxrc_evfile *evf,
		       const char *name, const struct file_operations *fops);
struct sxrc_evfile *sxrc_evfile_get(struct sxrc_dev *dev, int fd,
				    const struct file_operations *fops);

/* cq.c */
int sxrc_cq_post(struct sxrc_cq *cq, const struct sxrc_cqe *cqe);

/* qp_state.c: transitions, the error state and its flush */
bool sxrc_qp_transition_ok(u32 type, u32 cur, u32 next, u32 mask);
void sxrc_qp_flush_locked(struct sxrc_qp *qp);
void sxrc_qp_mark_error(struct sxrc_qp *qp);
void sxrc_rq_flush(struct sxrc_qp *qp);

/* cm.c, cm_mad.c: the communication manager of a link */
void sxrc_cm_ctx_close(struct sxrc_ctx *ctx);
void sxrc_cm_free(struct sxrc_dev *dev);

/* mcast.c */
void sxrc_mcast_detach_all(struct sxrc_qp *qp);

/* ah.c */
int sxrc_check_ah(struct sxrc_dev *dev, const struct sxrc_ah_attr *ah);

/*
 * main.c: the workqueues of QP work (retries, left-over work, late
 * releases) and of received packets (wire.c).
 */
extern struct workqueue_struct *sxrc_wq;
extern struct workqueue_struct *sxrc_rx_wq;

/* sq.c: the send queue loop (the rest of the data path: engine.h) */
void sxrc_qp_init_engine(struct sxrc_qp *qp);
void sxrc_qp_stop_engine(struct sxrc_qp *qp);

/* wire.c, wire_req.c: RoCEv2 packets */
int sxrc_wire_start(struct sxrc_dev *dev);
void sxrc_wire_stop(struct sxrc_dev *dev);
void sxrc_wire_qp_stop(struct sxrc_qp *qp);
void sxrc_wire_qp_reset(struct sxrc_qp *qp);
void sxrc_wire_qp_free(struct sxrc_qp *qp);
struct sxrc_wire_qp *sxrc_wire_qp_get(struct sxrc_qp *qp);
void sxrc_wire_resp_flush(struct sxrc_qp *qp);
void sxrc_wire_resp_reset(struct sxrc_qp *qp);
int sxrc_sq_run(struct sxrc_qp *qp);
void sxrc_sq_lock(struct sxrc_qp *qp);
bool sxrc_sq_trylock(struct sxrc_qp *qp);
void sxrc_sq_unlock(struct sxrc_qp *qp);
void sxrc_sq_poll(struct sxrc_qp *qp);
void sxrc_qp_kick(struct sxrc_qp *qp);
void sxrc_qp_engine_ready(struct sxrc_qp *qp);

/* sqpoll.c: the send queue polling thread */
int sxrc_sqpoll_start(struct sxrc_dev *dev);
void sxrc_sqpoll_stop(struct sxrc_dev *dev);
int sxrc_sqpoll_prepare(struct sxrc_qp *qp);
void sxrc_sqpoll_add(struct sxrc_qp *qp);
void sxrc_sqpoll_del(struct sxrc_qp *qp);
void sxrc_sqpoll_doorbell(struct sxrc_qp *qp);

/* mr.c: keys */
struct sxrc_mr *sxrc_mr_lookup(struct sxrc_dev *dev, u32 key);

/* xrc.c */
void sxrc_xrcd_put(struct sxrc_xrcd *xrcd);
int sxrc_xrc_reg_new(struct sxrc_call *call, struct sxrc_xrcd_open *xopen,
		     struct sxrc_qp *qp, u64 user_cookie, bool first);
void sxrc_xrc_qp_event(struct sxrc_obj *obj, u32 event_type);
bool sxrc_xrc_qp_leave(struct sxrc_qp *qp, struct sxrc_xrc_reg *reg);
u32 sxrc_xrc_ctx_reg_handle(struct sxrc_qp *qp, struct sxrc_ctx *ctx);

/* qp.c, for xrc.c */
int sxrc_qp_do_modify(struct sxrc_qp *qp, const struct sxrc_qp_attr *a,
		      u32 mask);
void sxrc_qp_do_query(struct sxrc_qp *qp, struct sxrc_query_qp_out *out);

#endif /* SXRC_LOC_H */
