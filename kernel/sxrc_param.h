/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: parameters and limits of a device that are not module
 * parameters (those are in main.c).
 */
#ifndef SXRC_PARAM_H
#define SXRC_PARAM_H

#include <linux/bits.h>
#include <linux/types.h>

#define SXRC_DRV_NAME		"softxrc"
#define SXRC_MAX_DEVICES	8
#define SXRC_FW_VER		((1ULL << 32) | (0 << 16) | 0)
#define SXRC_PKEY_DEFAULT	0xffff
#define SXRC_GID_TBL_LEN	1
#define SXRC_LINK_GID_TBL_LEN	16	/* a link's port */
#define SXRC_PKEY_TBL_LEN	1

/* Device limits that are not module parameters. */
#define SXRC_MAX_QP_WR		16384
#define SXRC_MAX_SGE		32
#define SXRC_MAX_INLINE		512
#define SXRC_MAX_CQE		BIT(20)
#define SXRC_MAX_RD_ATOM	128
#define SXRC_MAX_MCAST_GRP	256
#define SXRC_MAX_MCAST_QP	256
#define SXRC_QPN_MAX		((1U << 24) - 1)
#define SXRC_PSN_MASK		((1U << 24) - 1)
/* A Q_Key with the top bit set is privileged (CAP_NET_RAW). */
#define SXRC_QKEY_PRIVILEGED	0x80000000U
#define SXRC_MR_INDEX_MAX	((1U << 24) - 1)
/* Page indices of an MR are 32 bits. */
#define SXRC_MAX_MR_SIZE	((u64)(U32_MAX - 1) << PAGE_SHIFT)

#endif /* SXRC_PARAM_H */
