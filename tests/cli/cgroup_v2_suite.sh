#!/bin/bash
# tests/cli/cgroup_v2_suite.sh — runs as the workload of the pure cgroup v2
# microVM that tests/cli/cgroup_v2.bats boots (after cgroup_v2_guest.sh):
# the host suite's own cgroup test files, unchanged, on a v2 host.  Prints
# their TAP between "tap-begin FILE" and "tap-end FILE rc=N" lines for the
# bats file to assert on.  Usage: cgroup_v2_suite.sh FILE.bats...
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export QPOD=/qpod/qpod QPOD_BUILD=/qpod QPOD_ROOTFS=/tmp/rootfs
[ -d /tmp/rootfs ] || cp -a /busybox /tmp/rootfs
# bats reads process substitutions through /dev/fd, which the guest lacks
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd
for f in "$@"; do
	echo "tap-begin $f"
	bats --tap "/t/$f" 2>&1
	echo "tap-end $f rc=$?"
done
