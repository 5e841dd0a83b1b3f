/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: helpers shared by the test programs.
 */
#ifndef SXRC_TEST_H
#define SXRC_TEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/udmabuf.h>

#include <rdma/softxrc-abi.h>

#include "sxrc_util.h"

#define SXRC_DEV	"/dev/infiniband/softxrc0"
#define SXRC_SYSFS	"/sys/class/misc/softxrc0"

/*
 * In a fixture's set-up: self->list and self->ctx from sxrc_open_dev(),
 * the test skipped when softxrc is not loaded.
 */
#define SXRC_FX_OPEN(self) do {						\
	int __ret = sxrc_open_dev(&(self)->list, &(self)->ctx);		\
									\
	if (__ret > 0)							\
		SKIP(return, "softxrc is not loaded");			\
	ASSERT_EQ(0, __ret);						\
} while (0)

/* Then self->pd, and self->cq of @cqe entries. */
#define SXRC_FX_PD_CQ(self, cqe) do {					\
	(self)->pd = ibv_alloc_pd((self)->ctx);				\
	ASSERT_NE(NULL, (self)->pd);					\
	(self)->cq = ibv_create_cq((self)->ctx, cqe, NULL, NULL, 0);	\
	ASSERT_NE(NULL, (self)->cq);					\
} while (0)

/* Or self->pd, and self->cqa and self->cqb of @cqe entries each. */
#define SXRC_FX_PD_CQ2(self, cqe) do {					\
	(self)->pd = ibv_alloc_pd((self)->ctx);				\
	ASSERT_NE(NULL, (self)->pd);					\
	(self)->cqa = ibv_create_cq((self)->ctx, cqe, NULL, NULL, 0);	\
	(self)->cqb = ibv_create_cq((self)->ctx, cqe, NULL, NULL, 0);	\
	ASSERT_NE(NULL, (self)->cqa);					\
	ASSERT_NE(NULL, (self)->cqb);					\
} while (0)

/* Then RC QPs self->a on cqa, self->b on cqb: @wr WRs, @sge SGEs. */
#define SXRC_FX_RC2(self, wr, sge) do {					\
	(self)->a = sxrc_qp_new((self)->pd, (self)->cqa, IBV_QPT_RC,	\
				wr, sge);				\
	(self)->b = sxrc_qp_new((self)->pd, (self)->cqb, IBV_QPT_RC,	\
				wr, sge);				\
	ASSERT_NE(NULL, (self)->a);					\
	ASSERT_NE(NULL, (self)->b);					\
} while (0)

/*
 * In a fixture's teardown: close self->ctx; whatever a test left
 * registered went with it (objects/mr back to self->mr_base).
 */
#define SXRC_FX_CLOSE_CTX(self) do {					\
	ibv_close_device((self)->ctx);					\
	EXPECT_EQ((self)->mr_base,					\
		  sxrc_wait_count("objects/mr", (self)->mr_base, 5000)); \
} while (0)

/* Raw SXRC_IOCTL_INVOKE: returns 0 or -errno. */
static inline int sxrc_call(int fd, uint16_t obj, uint16_t method,
			    const void *in, uint32_t in_len,
			    void *out, uint32_t out_len)
{
	struct sxrc_ioctl_hdr hdr = {
		.size = sizeof(hdr),
		.object_id = obj,
		.method_id = method,
		.in_len = in_len,
		.out_len = out_len,
		.in = (uintptr_t)in,
		.out = (uintptr_t)out,
	};

	return ioctl(fd, SXRC_IOCTL_INVOKE, &hdr) ? -errno : 0;
}

/* Raw SXRC_QP_MODIFY of QP @handle: 0 or -errno. */
static inline int sxrc_raw_modify_qp(int fd, uint32_t handle,
				     const struct sxrc_qp_attr *a,
				     uint32_t mask)
{
	struct sxrc_modify_qp_in in = { .handle = handle, .attr_mask = mask,
					.attr = *a };

	return sxrc_call(fd, SXRC_OBJ_QP, SXRC_QP_MODIFY, &in, sizeof(in),
			 NULL, 0);
}

/*
 * The raw RC QP @handle to RTS towards @dqpn (port 1, LID 1, remote
 * write), without the library: 0 or -errno.
 */
static inline int sxrc_raw_rc_connect(int fd, uint32_t handle, uint32_t dqpn)
{
	struct sxrc_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				  .qp_access_flags = IBV_ACCESS_REMOTE_WRITE };
	int ret;

	ret = sxrc_raw_modify_qp(fd, handle, &a, IBV_QP_STATE | IBV_QP_PORT |
				 IBV_QP_PKEY_INDEX | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_4096;
	a.dest_qp_num = dqpn;
	a.ah_attr.dlid = 1;
	a.ah_attr.port_num = 1;
	ret = sxrc_raw_modify_qp(fd, handle, &a, IBV_QP_STATE | IBV_QP_AV |
				 IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
				 IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
				 IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	return sxrc_raw_modify_qp(fd, handle, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
				  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

static inline int sxrc_pd_alloc(int fd, uint32_t *handle)
{
	struct sxrc_create_in in = { .user_cookie = 0x1234 };
	struct sxrc_handle_out out;
	int ret;

	ret = sxrc_call(fd, SXRC_OBJ_PD, SXRC_PD_ALLOC, &in, sizeof(in),
			&out, sizeof(out));
	if (!ret)
		*handle = out.handle;
	return ret;
}

static inline int sxrc_pd_dealloc(int fd, uint32_t handle)
{
	struct sxrc_handle_in in = { .handle = handle };

	return sxrc_call(fd, SXRC_OBJ_PD, SXRC_PD_DEALLOC, &in, sizeof(in),
			 NULL, 0);
}

/* Read an integer sysfs attribute of softxrc0, -1 if unreadable. */
static inline long sxrc_sysfs_long(const char *attr)
{
	char path[256];

	snprintf(path, sizeof(path), SXRC_SYSFS "/%s", attr);
	return sxrc_read_long(path, 0);
}

static inline int sxrc_sysfs_write(const char *attr, const char *val)
{
	char path[256];

	snprintf(path, sizeof(path), SXRC_SYSFS "/%s", attr);
	return sxrc_write_str(path, val);
}

/*
 * Wait up to @ms for an object count to reach @want: a closing fd is
 * released once the last reference is dropped, which for a killed
 * process happens while it exits.
 */
static inline long sxrc_wait_count(const char *attr, long want, int ms)
{
	long v = sxrc_sysfs_long(attr);

	while (v != want && ms > 0) {
		usleep(10000);
		ms -= 10;
		v = sxrc_sysfs_long(attr);
	}
	return v;
}

/* The @n attributes @attr into @v. */
static inline void sxrc_sysfs_longs(const char *const *attr, unsigned int n,
				    long *v)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		v[i] = sxrc_sysfs_long(attr[i]);
}

/*
 * sxrc_wait_count() for each of @n attributes: 0 once each equals
 * @want[i], else 1 + the index of the first that did not (its value in
 * *@got).
 */
static inline int sxrc_wait_counts(const char *const *attr, unsigned int n,
				   const long *want, int ms, long *got)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		*got = sxrc_wait_count(attr[i], want[i], ms);
		if (*got != want[i])
			return i + 1;
	}
	return 0;
}

/* A page that is mapped but cannot be touched: every access faults. */
static inline void *sxrc_bad_ptr(void)
{
	static void *page;

	if (!page)
		page = mmap(NULL, 4096, PROT_NONE,
			    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return page;
}

#define SXRC_BAD_PTR	sxrc_bad_ptr()

/*
 * A udmabuf of @size bytes over a sealed memfd: returns the dma-buf fd
 * (and the memfd in *@memfd), or -errno; -ENOENT when the kernel has no
 * /dev/udmabuf (CONFIG_UDMABUF).
 */
static inline int sxrc_udmabuf(size_t size, int *memfd)
{
	struct udmabuf_create c = { .flags = UDMABUF_FLAGS_CLOEXEC,
				    .size = size };
	int dev, mfd, fd, err;

	dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (dev < 0)
		return -errno;
	mfd = memfd_create("sxrc_udmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (mfd < 0 || ftruncate(mfd, size) ||
	    fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		err = -errno;
		goto out;
	}
	c.memfd = mfd;
	fd = ioctl(dev, UDMABUF_CREATE, &c);
	err = fd < 0 ? -errno : fd;
out:
	close(dev);
	if (err < 0) {
		if (mfd >= 0)
			close(mfd);
	} else {
		*memfd = mfd;
	}
	return err;
}

#endif /* SXRC_TEST_H */
