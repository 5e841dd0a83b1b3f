// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * softxrc userspace library: the host's other RDMA devices.
 *
 * The drop-in library replaces rdma-core's libibverbs.so.1 in the
 * process, so the host's other devices (a ConnectX, an rdma_rxe link)
 * are reached through the system's own copy of rdma-core, loaded by its
 * real path with dlmopen(LM_ID_NEWLM) into a link-map namespace of its
 * own.  There its providers (librxe-rdmav34.so ...), which link against
 * libibverbs.so.1, bind to the system library and never to this one, and
 * nothing it defines can interpose on the application's symbols.
 * ibv_get_device_list() appends that library's devices to softxrc's;
 * every exported verb given another device's object calls the system
 * library's function of the same name (SXU_FORWARD() in sxu.h).  Objects
 * of the system library carry their own ops tables, so the header's
 * inline verbs (ibv_post_send, ibv_poll_cq ...) reach its provider
 * without passing through here.
 *
 * $SOFTXRC_SYSTEM_VERBS names the library to load instead of the
 * distribution's; empty or "none" loads none (softxrc's devices alone).
 * It is ignored in set-id programs.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sxu.h"
#include "softxrc-private.h"

#ifndef SXU_MULTIARCH
#define SXU_MULTIARCH "x86_64-linux-gnu"
#endif

static const char *const sxu_sys_paths[] = {
	"/usr/lib/" SXU_MULTIARCH "/libibverbs.so.1",	/* Debian, Ubuntu */
	"/usr/lib64/libibverbs.so.1",			/* Fedora, SUSE */
	"/usr/lib/libibverbs.so.1",			/* Arch */
};

static pthread_once_t sxu_sys_once = PTHREAD_ONCE_INIT;
static void *sxu_sys_handle;

/* A library that is not there is no news; one that fails to load is. */
static void *sxu_sys_open(const char *path)
{
	void *h;

	if (access(path, R_OK))
		return NULL;
	h = dlmopen(LM_ID_NEWLM, path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		sxu_log("cannot load %s, the host's other RDMA devices are not listed: %s\n",
			 path, dlerror());
		return NULL;
	}
	/* A copy of this library (installed over the system's) is not it. */
	if (dlsym(h, "ibv_open_xrc_domain")) {
		sxu_log("%s is softxrc's own library: not loaded\n", path);
		dlclose(h);
		return NULL;
	}
	return h;
}

static void sxu_sys_load(void)
{
	const char *env = secure_getenv("SOFTXRC_SYSTEM_VERBS");

	if (env) {
		if (*env && strcmp(env, "none"))
			sxu_sys_handle = sxu_sys_open(env);
		return;
	}
	for (size_t i = 0; i < SXU_ARRAY_SIZE(sxu_sys_paths); i++) {
		sxu_sys_handle = sxu_sys_open(sxu_sys_paths[i]);
		if (sxu_sys_handle)
			return;
	}
}

bool sxu_sys_loaded(void)
{
	pthread_once(&sxu_sys_once, sxu_sys_load);
	return sxu_sys_handle;
}

void *sxu_sys_lookup(const char *name, _Atomic(void *) *cache)
{
	void *fn = atomic_load_explicit(cache, memory_order_acquire);

	if (fn || !sxu_sys_loaded())
		return fn;
	fn = dlsym(sxu_sys_handle, name);
	if (fn)
		atomic_store_explicit(cache, fn, memory_order_release);
	return fn;
}

/*
 * May the host have other RDMA devices?  Not without the kernel's uverbs
 * (no /sys/class/infiniband_verbs): then the system library is not even
 * loaded, as it would find nothing and complain on stderr.
 */
bool sxu_sys_present(void)
{
	char path[IBV_SYSFS_PATH_MAX], buf[16];

	snprintf(path, sizeof(path), "%s/class/infiniband_verbs",
		 ibv_get_sysfs_path());
	if (sxu_read_sysfs(path, "abi_version", buf, sizeof(buf)) <= 0)
		return false;
	return sxu_sys_loaded();
}

/* The system library's device list, or NULL. */
struct ibv_device **sxu_sys_device_list(int *num)
{
	struct ibv_device **list = NULL;

	if (sxu_sys_present())
		list = SXU_FORWARD(ibv_get_device_list, NULL, num);
	if (!list || *num < 0)
		*num = 0;
	return list;
}

SXU_EXPORT bool softxrc_device_is_ours(const struct ibv_device *dev)
{
	return sxu_device_is_ours(dev);
}

SXU_EXPORT void *softxrc_sys_dlopen(const char *path)
{
	Lmid_t lmid;
	void *h;

	if (!sxu_sys_present() ||
	    dlinfo(sxu_sys_handle, RTLD_DI_LMID, &lmid))
		return NULL;
	h = dlmopen(lmid, path, RTLD_NOW | RTLD_LOCAL);
	if (!h)
		sxu_log("cannot load %s: %s\n", path, dlerror());
	return h;
}
