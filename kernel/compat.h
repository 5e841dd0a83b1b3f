/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc: the few kernel API differences between the kernels softxrc
 * builds for (6.1 and later).
 */
#ifndef SXRC_COMPAT_H
#define SXRC_COMPAT_H

#include <linux/mm.h>
#include <linux/version.h>

#if LINUX_VERSION_CODE < KERNEL_VERSION(6, 3, 0)
/* 6.3 made vm_flags read-only and added accessors. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

#endif /* SXRC_COMPAT_H */
