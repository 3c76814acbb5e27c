# Makefile — qpod's one entry point: build, check, demo, bench.
#   make         configure and build (it installs nothing: a missing Debian
#                package is named; `make deps` installs them)
#   make check   the whole test suite (unit, CLI, integration); ends "N passed, M failed"
#   make demo    the main job: a container pod from a busybox rootfs, end to end
#   make bench   benchmarks; figures go to docs/BENCHMARKS.md
#   make install [DESTDIR=D] [PREFIX=/usr/local]   and  make uninstall (same vars)
# Sources are found by wildcard: a new .c under runtime/ joins the library.

-include config.mk
# the report's geometric mean (runtime/report/workload_index.c) needs libm
PKG_LIBS += -lm

# CFLAGS and LDFLAGS reach every binary: qpod, the unit tests, the test
# helper, the bench tools and guest-init (which keeps -Os -s after them: its
# size is boot time).  The static ones (helper, bench, guest-init) cannot
# take a sanitizer; SANITIZE=1 (make check-sanitize, into build-san) adds
# ASan+UBSan to the host binaries only.
B ?= build
WARN := -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers -Wshadow -Wformat=2
CFLAGS ?= -O2 -g
ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer
endif
QP_CFLAGS := $(CFLAGS) $(SAN_FLAGS) $(WARN) -std=gnu11 -D_GNU_SOURCE -fstack-protector-strong \
	-D_FORTIFY_SOURCE=2 -include config.h -Iruntime -I. $(PKG_CFLAGS) -MMD -MP
QP_LDFLAGS := $(CFLAGS) $(SAN_FLAGS) $(LDFLAGS)

# guest-init/: the channel (channel.c, codec.c, run_mount.c, run_route.c) and tinyinit
# are shared with the runtime (modules.c is in the library for its unit
# test); every other file there belongs to the guest binary only.
GI_SHARED := guest-init/channel.c guest-init/codec.c guest-init/run_mount.c guest-init/run_route.c guest-init/tinyinit.c guest-init/modules.c
# runtime/'s folders are one or two deep (host/cgroup/, vm/qemu/, ...);
# runtime/vm/tradvm/ is a program of its own (TRADVM below).
LIB_SRCS := $(filter-out runtime/main.c runtime/vm/tradvm/%,$(wildcard runtime/*.c runtime/*/*.c runtime/*/*/*.c)) $(GI_SHARED)
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/%.o)
UNIT_SRCS := $(wildcard tests/unit/test_*.c)
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/%)
HELPER := $(B)/tests/helper/qpod-testhelper
TRADVM := $(B)/tools/qpod-tradvm
GUEST_INIT := $(B)/guest-init/qpod-init
GUEST_CC ?= $(shell command -v musl-gcc 2>/dev/null || echo $(CC))
GI_SRCS := $(wildcard guest-init/*.c) runtime/util/error.c
BENCH_TOOLS := ctxsw forkbench execbench syscallbench intbench fpbench stream netbench httpbench fileio
BENCH_BINS := $(BENCH_TOOLS:%=$(B)/tools/bench/%)

MANPAGE := $(B)/qpod.8

# qboot/: qpod's own firmware (qboot/main.c), 32-bit freestanding code in a
# 64 KiB ROM image; none of the host's CFLAGS (no sanitizer, no -g: it is
# a ROM) reach it.
FIRMWARE := $(B)/qboot/qpod-firmware.bin
FW_SRCS := $(wildcard qboot/*.c qboot/*.S)
FW_OBJS := $(patsubst %,$(B)/%.o,$(basename $(FW_SRCS)))
FW_CFLAGS := -m32 -march=i686 -Os -std=gnu11 $(WARN) -Werror -ffreestanding -fno-pic -fno-pie \
	-fno-stack-protector -fcf-protection=none -fno-asynchronous-unwind-tables -mgeneral-regs-only \
	-Iqboot -MMD -MP

.PHONY: all check check-bins sanitize-bins demo bench clean distclean deps fuzz fuzz-bins kernel install uninstall
all: $(B)/qpod $(B)/qpod-libvirt $(HELPER) $(GUEST_INIT) $(FIRMWARE) $(TRADVM) $(UNIT_BINS) $(BENCH_BINS) $(MANPAGE)

$(B)/qboot/%.o: qboot/%.c
	@mkdir -p $(dir $@)
	$(CC) $(FW_CFLAGS) -c -o $@ $<
$(B)/qboot/%.o: qboot/%.S
	@mkdir -p $(dir $@)
	$(CC) $(FW_CFLAGS) -c -o $@ $<
$(B)/qboot/qpod-firmware.elf: $(FW_OBJS) qboot/fw.ld
	$(CC) -m32 -nostdlib -static -no-pie -Wl,-T,qboot/fw.ld -Wl,--build-id=none -o $@ $(FW_OBJS)
$(FIRMWARE): $(B)/qboot/qpod-firmware.elf
	objcopy -O binary $< $@.tmp
	@test "$$(stat -c %s $@.tmp)" = 65536 || { echo "qpod: firmware: $@ is not 64 KiB"; rm -f $@.tmp; exit 1; }
	mv $@.tmp $@

deps:
	@tools/deps.sh

# The bootstrap (Debian packages, tools/deps.sh) belongs to make deps, check
# and demo (and so to .ci/run, which runs make check); any other goal only
# checks that the packages are there.  Make re-reads config.mk once written.
DEPS := tools/deps.sh $(if $(filter deps check demo,$(MAKECMDGOALS)),,--check)
configure: configure.ac
	@$(DEPS)
	autoreconf -fi
config.mk config.h: configure config.mk.in
	@$(DEPS)
	./configure --quiet

$(B)/%.o: %.c config.h
	@mkdir -p $(dir $@)
	$(CC) $(QP_CFLAGS) -c -o $@ $<

$(B)/libqpod.a: $(LIB_OBJS)
	@rm -f $@
	ar rcs $@ $^

# The debug info goes to qpod.debug (gdb finds it by the debuglink): where
# no overlayfs view can be made, run, create and exec copy the binary into a
# sealed memfd before they touch a pod (runtime/util/exe_guard.h), and the
# binary without -g is a third of it.
# qpod is a static PIE where configure found every archive (QPOD_STATIC;
# not with a sanitizer): no dynamic loader at its two execs.  It cannot
# dlopen() libvirt then, so qpod-libvirt, the same objects linked
# dynamically (libseccomp & co. as QPOD_LIBS says), runs a libvirt pod's
# run/create (runtime/vm/libvirt/libvirt_handoff.c).  ld's warnings about
# dlopen and getaddrinfo in a static link name code the static qpod never
# runs (the handoff comes first; libnl's name lookups are not called).
QP_STATIC_LINK := $(if $(SAN_FLAGS),,$(QPOD_STATIC))
QP_DYN_LIBS := $(if $(QPOD_LIBS),$(QPOD_LIBS) -lm,$(PKG_LIBS))
# $(call link_qpod,OUTPUT,LINK FLAGS AND LIBRARIES)
define link_qpod
	$(CC) $(QP_LDFLAGS) -o $(1).tmp $(B)/runtime/main.o $(B)/libqpod.a $(2)
	objcopy --only-keep-debug $(1).tmp $(1).debug
	objcopy --strip-debug --add-gnu-debuglink=$(1).debug $(1).tmp
	mv $(1).tmp $(1)
endef
$(B)/qpod: $(B)/runtime/main.o $(B)/libqpod.a config.mk
	$(call link_qpod,$@,$(if $(QP_STATIC_LINK),$(QP_STATIC_LINK) -lseccomp -lcap -lnl-route-3 -lnl-3 -lyajl_s -lm -pthread,$(QP_DYN_LIBS)))
$(B)/qpod-libvirt: $(B)/runtime/main.o $(B)/libqpod.a config.mk
	$(call link_qpod,$@,$(QP_DYN_LIBS))

$(B)/tests/%: tests/unit/%.c $(B)/libqpod.a config.h
	@mkdir -p $(dir $@)
	$(CC) $(QP_CFLAGS) $(LDFLAGS) $(CMOCKA_CFLAGS) -o $@ $< $(B)/libqpod.a $(PKG_LIBS) $(CMOCKA_LIBS)

# The multi-call helper that runs inside pods: static, no libc surprises.
$(HELPER): tests/helper/testhelper.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -Wall -static $(LDFLAGS) -o $@ $<

# The traditional-VM baseline runner (QEMU -M pc + Debian's cloud kernel).
$(TRADVM): runtime/vm/tradvm/qpod-tradvm.c $(B)/libqpod.a config.h
	@mkdir -p $(dir $@)
	$(CC) $(QP_CFLAGS) $(LDFLAGS) -o $@ $< $(B)/libqpod.a $(PKG_LIBS)

# Workload benchmarks (tools/bench/README.md): static, so the same binary
# runs on the host, in any rootfs and in a microVM guest.
$(B)/tools/bench/%: tools/bench/%.c tools/bench/benchlib.c tools/bench/benchlib.h
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -static -std=gnu11 -D_GNU_SOURCE $(WARN) $(LDFLAGS) -o $@ $< tools/bench/benchlib.c -lm

# PID 1 of a microVM pod: static, small (musl when musl-gcc is installed).
$(GUEST_INIT): $(GI_SRCS) $(wildcard guest-init/*.h) config.h
	@mkdir -p $(dir $@)
	$(GUEST_CC) $(CFLAGS) -static -Os -s -std=gnu11 -D_GNU_SOURCE $(WARN) -Iruntime -I. $(LDFLAGS) -o $@ $(GI_SRCS) -pthread

# The microVM guest kernel, cached outside the clone by (version, fragment
# hash): built once (~3 min on 2 cores), then "kernel up to date".
kernel:
	@kernel-config/build.sh

# qpod(8) from the binary's own --help texts (tools/mkman.sh)
$(MANPAGE): $(B)/qpod tools/mkman.sh
	tools/mkman.sh $(B)/qpod >$@.tmp && mv $@.tmp $@

# The installed layout (util/paths.h: qpod finds PREFIX/lib/qpod beside
# PREFIX/bin/qpod, so any PREFIX and a DESTDIR staging tree both work):
#   PREFIX/bin/qpod
#   PREFIX/lib/qpod/{qpod-init,vmlinux,cmdline.txt,qpod-tradvm,qpod-firmware.bin,qpod-libvirt}
#   PREFIX/lib/qpod/cri/{cri.py,runtime_v1.proto,bench_cri.py,proc_events.py}  (bench cri's driver)
#   PREFIX/share/man/man8/qpod.8
#   PREFIX/share/bash-completion/completions/qpod
# The guest kernel is the cached build of `make kernel` (built first if
# missing, ~3 min); the default firmware is qboot/'s build (qboot and
# seabios are QEMU's, Debian's qemu-system-data).
PREFIX ?= /usr/local
BINDIR := $(PREFIX)/bin
QPOD_LIBDIR := $(PREFIX)/lib/qpod
MAN8DIR := $(PREFIX)/share/man/man8
COMPDIR := $(PREFIX)/share/bash-completion/completions
KERNEL_BUILT = $(or $(QPOD_CACHE),/var/cache/qpod)/kernel/current/vmlinux
CRI_FILES := tools/cri/cri.py tools/cri/runtime_v1.proto tools/cri/bench_cri.py tools/cri/proc_events.py
INSTALLED := $(BINDIR)/qpod $(QPOD_LIBDIR)/qpod-init $(QPOD_LIBDIR)/vmlinux \
	$(QPOD_LIBDIR)/cmdline.txt $(QPOD_LIBDIR)/qpod-tradvm $(QPOD_LIBDIR)/qpod-firmware.bin $(QPOD_LIBDIR)/qpod-libvirt \
	$(MAN8DIR)/qpod.8 $(COMPDIR)/qpod $(CRI_FILES:tools/cri/%=$(QPOD_LIBDIR)/cri/%)

install: $(B)/qpod $(B)/qpod-libvirt $(GUEST_INIT) $(FIRMWARE) $(TRADVM) $(MANPAGE) kernel
	install -D -m 0755 $(B)/qpod $(DESTDIR)$(BINDIR)/qpod
	install -D -m 0755 $(GUEST_INIT) $(DESTDIR)$(QPOD_LIBDIR)/qpod-init
	install -D -m 0644 $(KERNEL_BUILT) $(DESTDIR)$(QPOD_LIBDIR)/vmlinux
	install -D -m 0644 kernel-config/cmdline.txt $(DESTDIR)$(QPOD_LIBDIR)/cmdline.txt
	install -D -m 0755 $(TRADVM) $(DESTDIR)$(QPOD_LIBDIR)/qpod-tradvm
	install -D -m 0755 $(B)/qpod-libvirt $(DESTDIR)$(QPOD_LIBDIR)/qpod-libvirt
	install -D -m 0644 $(FIRMWARE) $(DESTDIR)$(QPOD_LIBDIR)/qpod-firmware.bin
	install -D -m 0644 $(MANPAGE) $(DESTDIR)$(MAN8DIR)/qpod.8
	install -D -m 0644 tools/qpod.bash-completion $(DESTDIR)$(COMPDIR)/qpod
	install -D -m 0755 tools/cri/cri.py $(DESTDIR)$(QPOD_LIBDIR)/cri/cri.py
	install -D -m 0644 tools/cri/runtime_v1.proto $(DESTDIR)$(QPOD_LIBDIR)/cri/runtime_v1.proto
	install -D -m 0755 tools/cri/bench_cri.py $(DESTDIR)$(QPOD_LIBDIR)/cri/bench_cri.py
	install -D -m 0644 tools/cri/proc_events.py $(DESTDIR)$(QPOD_LIBDIR)/cri/proc_events.py

uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(QPOD_LIBDIR)/cri 2>/dev/null
	-rmdir $(DESTDIR)$(QPOD_LIBDIR) 2>/dev/null

check:
	@tools/deps.sh
	@$(MAKE) --no-print-directory check-bins
	@FUZZ_SECONDS=$(FUZZ_SECONDS) tests/run.sh

demo:
	@tools/deps.sh
	@$(MAKE) --no-print-directory all
	@tools/demo.sh

bench: all
	@tools/bench-start.sh 20
	@tools/bench-net.sh 20
	@tools/bench-vm.sh 10
	@tools/bench-all.sh 20

# Fuzz targets (tests/fuzz/fuzz_*.c, libFuzzer + ASan + UBSan), each with
# its seed corpus in tests/fuzz/corpus/NAME (committed; new finds go to a
# scratch dir, never into the clone).  make check runs
# each for FUZZ_SECONDS (default 2: tests/run.sh's "fuzz/" lines); make
# fuzz runs them FUZZ_LONG (300 s each); tests/fuzz/run.sh sets each
# target's -max_len (the channel's: a whole 64 KiB frame).
FUZZ_CC := $(CLANG) -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	-D_GNU_SOURCE -include config.h -Iruntime -I. $(PKG_CFLAGS)
FUZZ_UTIL := $(wildcard runtime/util/*.c)
FUZZ_SPEC_SRCS := $(wildcard runtime/spec/*.c) $(FUZZ_UTIL)
FUZZ_TARGETS := spec resources channel state ipam result
fuzz_srcs_spec := $(FUZZ_SPEC_SRCS)
fuzz_srcs_resources := $(FUZZ_SPEC_SRCS)
fuzz_srcs_channel := guest-init/channel.c guest-init/codec.c guest-init/run_mount.c guest-init/run_route.c runtime/util/error.c runtime/util/log.c
fuzz_srcs_state := runtime/state.c runtime/oci_state.c $(FUZZ_SPEC_SRCS)
fuzz_srcs_ipam := runtime/net/ipam.c runtime/state.c runtime/oci_state.c $(FUZZ_SPEC_SRCS)
fuzz_srcs_result := $(wildcard runtime/result/*.c) $(FUZZ_UTIL)
FUZZ_SECONDS ?= 2
FUZZ_LONG ?= 300

.SECONDEXPANSION:
$(B)/fuzz/fuzz_%: tests/fuzz/fuzz_%.c $$(fuzz_srcs_$$*) config.h $(wildcard runtime/*.h runtime/*/*.h runtime/*/*/*.h guest-init/*.h)
	@test "$(CLANG)" != no || { echo "qpod: fuzz: clang not found (apt-get install clang)"; exit 1; }
	@mkdir -p $(dir $@)
	$(FUZZ_CC) -o $@ $< $(fuzz_srcs_$*) $(PKG_LIBS)

fuzz-bins: $(FUZZ_TARGETS:%=$(B)/fuzz/fuzz_%)

fuzz: fuzz-bins
	@tests/fuzz/run.sh $(B)/fuzz $(FUZZ_LONG) $(FUZZ_TARGETS)

# The host binaries with ASan+UBSan, in build-san: tests/run.sh runs the
# unit tests and a subset of the CLI tests on them (its "san/" lines).
sanitize-bins: $(B)/qpod $(HELPER) $(GUEST_INIT) $(UNIT_BINS)

check-bins: all kernel
	@mkdir -p build-san
	@$(MAKE) --no-print-directory B=build-san SANITIZE=1 sanitize-bins >build-san/build.log 2>&1 || \
		{ tail -20 build-san/build.log; echo "qpod: check: the sanitized build failed"; exit 1; }
	@if [ "$(CLANG)" != no ]; then $(MAKE) --no-print-directory fuzz-bins >$(B)/fuzz-build.log 2>&1 || \
		{ tail -20 $(B)/fuzz-build.log; echo "qpod: check: the fuzz targets failed to build"; exit 1; }; fi

clean:
	rm -rf $(B) build-san
distclean: clean
	rm -rf config.mk config.h config.log config.status configure autom4te.cache aclocal.m4

-include $(LIB_OBJS:.o=.d) $(B)/runtime/main.d $(FW_OBJS:.o=.d)
