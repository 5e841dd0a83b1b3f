# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# softxrc top-level Makefile.
#
#   make                 module for KVER, userspace libraries, selftests,
#                        the test ground's programs (make tools)
#   make KVER=<version>  the module for another installed kernel
#   make modules-all     the module for every kernel tools/kver --all lists
#   make demo            boot a guest and run an rdma-core program on softxrc0
#   make bench           benchmarks against rdma_rxe and memcpy, in a guest
#                        (bench/bench), then across two guests
#                        (bench/bench-wire) and MPI across them
#                        (bench/bench-mpi-wire)
#   make check           install what is missing, build, run the selftests
#                        on every installed Debian kernel (tools/check),
#                        then softxrc on the first kernel against rdma_rxe
#                        on the last across two guests (tools/check-wire
#                        --pair sx-rxe) beside the last; 8-9 minutes,
#                        each guest with one vCPU
#   make check-full      make check and the MPI, fabric and host-device
#                        tests, MPICH ch4:ofi built once (cached), and
#                        softxrc against softxrc across two guests (CI)
#   make check-debug     the suite + 10^5-call fuzz + 60-round soak +
#                        fault injection on a KASAN/lockdep/kmemleak kernel
#                        built (once, cached) from linux-source-6.1 (CI)
#   make check-wire      two guests, Debian's programs across the link
#                        (tools/check-wire; WIRE_PAIR=sx-rxe by default,
#                        or rxe-rxe, sx-sx)
#   make install         module, library, headers, man pages (DESTDIR, PREFIX;
#                        HOSTWIDE=1: the libraries for every program)
#   make uninstall       the reverse
#   make dkms-install    register the module with DKMS (rebuilt per kernel)
#   make checkpatch      checkpatch.pl --strict over the kernel and uapi code
#   make sparse          the module through sparse (C=2)
#
# The module is built in build/<KVER>/, a tree of symlinks to the sources,
# so that one checkout serves several kernels without cleaning in between.

TOP    := $(abspath $(dir $(lastword $(MAKEFILE_LIST))))
BUILD  := $(TOP)/build
KVER   ?= $(shell $(TOP)/tools/kver)
KDIR   ?= /lib/modules/$(KVER)/build
KOBJ   := $(BUILD)/$(KVER)
KSRCS  := $(wildcard $(TOP)/kernel/*.c $(TOP)/kernel/*.h) $(TOP)/Kbuild
UAPI   := $(wildcard $(TOP)/uapi/rdma/*.h)
LINUX_SOURCE ?= $(firstword $(wildcard /usr/src/linux-source-6.1.tar.xz))

.PHONY: all module modules-all user selftests tools bench demo check check-full \
	check-debug check-wire checkpatch \
	sparse clean help install uninstall dkms-install

all: module user selftests tools

# The comment at the top of this file, from its first line of text after
# the SPDX line to its end.
help:
	@awk '/SPDX-License-Identifier/ { next } !/^#/ { exit } \
		{ sub(/^# ?/, "") } p || $$0 != "" { p = 1; print }' $(TOP)/Makefile

module: $(KOBJ)/softxrc.ko

define ktree
	@mkdir -p $(KOBJ)/kernel
	@ln -sfn $(TOP)/Kbuild $(KOBJ)/Kbuild
	@ln -sfn $(TOP)/uapi $(KOBJ)/uapi
	@for f in $(TOP)/kernel/*.c $(TOP)/kernel/*.h; do \
		ln -sfn $$f $(KOBJ)/kernel/; done
endef

$(KOBJ)/softxrc.ko: $(KSRCS) $(UAPI)
	$(ktree)
	$(MAKE) -C $(KDIR) M=$(KOBJ) modules

modules-all:
	@for v in $$($(TOP)/tools/kver --all); do \
		$(MAKE) -C $(TOP) --no-print-directory KVER=$$v module || exit 1; \
	done

user:
	$(MAKE) -C $(TOP)/user BUILD=$(BUILD)

selftests: user
	$(MAKE) -C $(TOP)/selftests BUILD=$(BUILD) LINUX_SOURCE=$(LINUX_SOURCE)
	$(MAKE) -C $(TOP)/selftests/mpi BUILD=$(BUILD)

# The test ground's programs (tools/Makefile): the two-host transfer.
tools:
	$(MAKE) -C $(TOP)/tools BUILD=$(BUILD)

# Benchmarks (not tests): softxrc against rdma_rxe and memcpy in one guest;
# the report lands in build/bench/results.txt; then the two across two
# guests, build/bench/wire.txt; then MPI across two guests (Open MPI over
# UCX on softxrc and on rdma_rxe, and over TCP), build/bench/mpi-wire.txt.
bench: all
	$(MAKE) -C $(TOP)/bench BUILD=$(BUILD)
	$(TOP)/bench/bench --kernel $(KVER)
	$(TOP)/bench/bench-wire --kernel $(KVER) --no-build
	$(TOP)/bench/bench-mpi-wire --kernel $(KVER) --no-build

demo: all
	$(TOP)/tools/vm-run --kernel $(KVER) -- $(TOP)/tools/guest/demo

# The builds use every CPU: they are a good part of the run's time.
NPROC := $(shell nproc 2>/dev/null || echo 1)

check:
	$(TOP)/tools/deps
	$(MAKE) -C $(TOP) -j$(NPROC) modules-all user selftests tools
	$(TOP)/tools/check

# A failed MPICH build fails its tests (SXRC_MPI_REQUIRE), not the run.
check-full:
	$(TOP)/tools/deps
	-$(TOP)/tools/mpich-ofi >/dev/null
	$(MAKE) -C $(TOP) -j$(NPROC) modules-all user selftests tools
	$(TOP)/tools/check --full

check-debug:
	$(TOP)/tools/deps
	$(MAKE) -C $(TOP) -j$(NPROC) user selftests
	$(TOP)/tools/check-debug

# The interop matrix between two guests: softxrc (guest a) with rdma_rxe
# (guest b) unless WIRE_PAIR says otherwise.
WIRE_PAIR ?= sx-rxe

check-wire: module user tools
	$(TOP)/tools/check-wire --kernel $(KVER) --pair $(WIRE_PAIR)

# kernel/compat.h alone tests LINUX_VERSION_CODE, as an out-of-tree module
# serving several kernels must; checkpatch's advice for in-tree code does
# not apply to it.
CHECKPATCH = $(BUILD)/checkpatch/checkpatch.pl --strict --no-tree --terse \
	     --ignore FILE_PATH_CHANGES,SPDX_LICENSE_TAG

checkpatch: $(BUILD)/checkpatch/checkpatch.pl
	$(CHECKPATCH) -f $(filter-out %/compat.h,$(wildcard $(TOP)/kernel/*.[ch])) \
		$(UAPI)
	$(CHECKPATCH) --ignore LINUX_VERSION_CODE,CONSTANT_COMPARISON \
		-f $(TOP)/kernel/compat.h

$(BUILD)/checkpatch/checkpatch.pl: $(LINUX_SOURCE)
	@mkdir -p $(BUILD)/checkpatch
	tar -C $(BUILD)/checkpatch --strip-components=2 -xf $(LINUX_SOURCE) \
		linux-source-6.1/scripts/checkpatch.pl \
		linux-source-6.1/scripts/spelling.txt \
		linux-source-6.1/scripts/const_structs.checkpatch
	@touch $@

sparse:
	$(ktree)
	$(MAKE) -C $(KDIR) M=$(KOBJ) C=2 W=1 modules

clean:
	rm -rf $(BUILD)

# ----------------------------------------------------------------------
# Installation.  The library goes to a private directory: programs use it
# when asked (LD_LIBRARY_PATH, pkg-config's rpath, or the opt-in ld.so
# snippet installed with the documentation), never by surprise.

VERSION    := 0.5
DESTDIR    ?=
PREFIX     ?= /usr/local
LIBDIR     ?= $(PREFIX)/lib/softxrc
INCLUDEDIR ?= $(PREFIX)/include
MANDIR     ?= $(PREFIX)/share/man
DOCDIR     ?= $(PREFIX)/share/doc/softxrc
PCDIR      ?= $(PREFIX)/lib/pkgconfig
UDEVDIR    ?= /etc/udev/rules.d
MODDIR     := /lib/modules/$(KVER)/updates
SUBST      = sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' \
		 -e 's|@INCLUDEDIR@|$(INCLUDEDIR)|g' -e 's|@VERSION@|$(VERSION)|g'

install: module user
	install -D -m 0644 $(KOBJ)/softxrc.ko $(DESTDIR)$(MODDIR)/softxrc.ko
	install -D -m 0755 $(BUILD)/lib/libibverbs.so.1 \
		$(DESTDIR)$(LIBDIR)/libibverbs.so.1
	ln -sf libibverbs.so.1 $(DESTDIR)$(LIBDIR)/libibverbs.so
	install -D -m 0755 $(BUILD)/lib/librdmacm.so.1 \
		$(DESTDIR)$(LIBDIR)/librdmacm.so.1
	ln -sf librdmacm.so.1 $(DESTDIR)$(LIBDIR)/librdmacm.so
	install -D -m 0644 $(TOP)/user/include/infiniband/softxrc_xrc.h \
		$(DESTDIR)$(INCLUDEDIR)/infiniband/softxrc_xrc.h
	install -D -m 0644 $(TOP)/user/include/infiniband/softxrc.h \
		$(DESTDIR)$(INCLUDEDIR)/infiniband/softxrc.h
	install -D -m 0644 $(TOP)/uapi/rdma/softxrc-abi.h \
		$(DESTDIR)$(INCLUDEDIR)/rdma/softxrc-abi.h
	install -D -m 0644 $(TOP)/uapi/rdma/softxrc-netlink.h \
		$(DESTDIR)$(INCLUDEDIR)/rdma/softxrc-netlink.h
	install -d $(DESTDIR)$(MANDIR)/man3 $(DESTDIR)$(PCDIR) $(DESTDIR)$(DOCDIR)
	install -m 0644 $(TOP)/Documentation/man/*.3 $(DESTDIR)$(MANDIR)/man3/
	install -D -m 0644 $(TOP)/Documentation/man/softxrc.8 \
		$(DESTDIR)$(MANDIR)/man8/softxrc.8
	install -D -m 0755 $(BUILD)/bin/softxrc $(DESTDIR)$(PREFIX)/sbin/softxrc
	$(SUBST) $(TOP)/packaging/softxrc-verbs.pc.in > \
		$(DESTDIR)$(PCDIR)/softxrc-verbs.pc
	$(SUBST) $(TOP)/packaging/softxrc.ld.so.conf > \
		$(DESTDIR)$(DOCDIR)/softxrc.ld.so.conf
	install -m 0644 $(TOP)/packaging/softxrc.conf.modprobe \
		$(DESTDIR)$(DOCDIR)/softxrc.conf.modprobe
	install -D -m 0644 $(TOP)/packaging/90-softxrc.rules \
		$(DESTDIR)$(UDEVDIR)/90-softxrc.rules
	install -m 0644 $(TOP)/README.md $(TOP)/Documentation/*.rst \
		$(DESTDIR)$(DOCDIR)/
ifneq ($(HOSTWIDE),)
	install -D -m 0644 $(DESTDIR)$(DOCDIR)/softxrc.ld.so.conf \
		$(DESTDIR)/etc/ld.so.conf.d/softxrc.conf
	@if [ -z "$(DESTDIR)" ]; then ldconfig; fi
endif
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

uninstall:
	rm -f $(DESTDIR)$(MODDIR)/softxrc.ko
	rm -rf $(DESTDIR)$(LIBDIR) $(DESTDIR)$(DOCDIR)
	if [ -f $(DESTDIR)/etc/ld.so.conf.d/softxrc.conf ]; then \
		rm -f $(DESTDIR)/etc/ld.so.conf.d/softxrc.conf; \
		[ -n "$(DESTDIR)" ] || ldconfig; \
	fi
	rm -f $(DESTDIR)$(INCLUDEDIR)/infiniband/softxrc_xrc.h \
	      $(DESTDIR)$(INCLUDEDIR)/infiniband/softxrc.h \
	      $(DESTDIR)$(INCLUDEDIR)/rdma/softxrc-abi.h \
	      $(DESTDIR)$(INCLUDEDIR)/rdma/softxrc-netlink.h \
	      $(DESTDIR)$(PCDIR)/softxrc-verbs.pc \
	      $(DESTDIR)$(UDEVDIR)/90-softxrc.rules
	rm -f $(patsubst $(TOP)/Documentation/man/%,$(DESTDIR)$(MANDIR)/man3/%,\
		$(wildcard $(TOP)/Documentation/man/*.3))
	rm -f $(DESTDIR)$(MANDIR)/man8/softxrc.8 $(DESTDIR)$(PREFIX)/sbin/softxrc
	@if [ -z "$(DESTDIR)" ]; then depmod -a $(KVER); fi

# The module's sources into /usr/src/softxrc-VERSION, for DKMS.
dkms-install:
	rm -rf /usr/src/softxrc-$(VERSION)
	install -d /usr/src/softxrc-$(VERSION)
	cp -r $(TOP)/Kbuild $(TOP)/kernel $(TOP)/uapi /usr/src/softxrc-$(VERSION)/
	$(SUBST) $(TOP)/packaging/dkms.conf > /usr/src/softxrc-$(VERSION)/dkms.conf
	dkms add -m softxrc -v $(VERSION)
	dkms build -m softxrc -v $(VERSION)
	dkms install -m softxrc -v $(VERSION)
