/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * softxrc selftests: the fixture of the tests that run Debian's own
 * programs (sxrc_rdmacore_test, sxrc_cmutils_test) as a server and a
 * client process over the drop-in libraries.
 */
#ifndef SXRC_PROG_H
#define SXRC_PROG_H

#include <stdlib.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sxrc_test.h"

FIXTURE(prog) {
	int unused;
};

FIXTURE_SETUP(prog)
{
	if (access(SXRC_DEV, F_OK))
		SKIP(return, "softxrc is not loaded");
	/* The programs exchange their QP numbers over TCP on loopback. */
	if (system("ip link set lo up 2>/dev/null"))
		TH_LOG("could not bring lo up");
}

FIXTURE_TEARDOWN(prog)
{
}

#endif /* SXRC_PROG_H */
