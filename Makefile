# SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
#
# softxrc top-level Makefile.
#
#   make                 module for KVER, userspace libraries, selftests
#   make KVER=<version>  the module for another installed kernel
#   make modules-all     the module for every kernel tools/kver --all lists
#   make demo            boot a guest and run an rdma-core program on softxrc0
#   make bench           benchmarks against rdma_rxe and memcpy, in a guest
#   make check           install what is missing, build, run the selftests
#                        on every installed Debian kernel
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

.PHONY: all module modules-all user selftests bench demo check checkpatch \
	sparse clean help

all: module user selftests

help:
	@sed -n '3,15p' $(TOP)/Makefile

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

# Benchmarks (not tests): softxrc against rdma_rxe and memcpy in one guest;
# the report lands in build/bench/results.txt.
bench: all
	$(MAKE) -C $(TOP)/bench BUILD=$(BUILD)
	$(TOP)/tools/bench --kernel $(KVER)

demo: all
	$(TOP)/tools/vm-run --kernel $(KVER) -- $(TOP)/tools/demo

check:
	$(TOP)/tools/deps
	$(MAKE) -C $(TOP) modules-all user selftests
	$(TOP)/tools/check

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
