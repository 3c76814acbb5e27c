#!/usr/bin/env bats
# tests/cli/cgroup_v2.bats — qpod's cgroup v2 code on a real, pure cgroup v2
# host.  This machine is hybrid (v1 controllers + an empty unified tree), so
# the file boots one qpod microVM whose guest-init mounts only cgroup2, with
# every controller of the guest kernel (memory, pids, cpu, io) enabled, and
# runs qpod itself there: the host's /usr, the build dir, the busybox rootfs
# and this directory are shared read-only (directory binds of the VM bundle
# become 9p shares; /etc too, for ld.so.cache and the alternatives links).  The guest's script (cgroup_v2_guest.sh) starts
# container pods and prints what it sees; the tests below assert on those
# lines: limits (memory.max, pids.max, cpu.max, read inside the pod), devices
# (the eBPF program), the freezer (cgroup.freeze) and OOM (memory.events).
# The VM runs once (setup_file; TCG here, whatever the KVM probe picks) and
# is gone when the workload ends; the last test asserts that.

load helpers

load v2_guest

setup_file() { v2_guest_run cgroup_v2_guest.sh; }
teardown_file() { v2_guest_cleanup; }

# guest KEY: the value the guest printed for KEY ("" if none)
guest() {
	sed -n "s/^$1: //p" "$GUEST_OUT" | head -n 1
}

# guest_has KEY NEEDLE...: each needle is in KEY's value
guest_has() {
	local key=$1 v n
	shift
	v=$(guest "$key")
	for n in "$@"; do
		assert_contains "$v" "$n" "$key" || { echo "guest stderr:" >&2; tail -n 20 "$GUEST_ERR" >&2; return 1; }
	done
}

@test "cgroup v2 guest: the VM ran the script to its end, on a pure cgroup2 host" {
	assert_eq "$(cat "$BATS_FILE_TMPDIR/v2/rc")" 0 "qpod run of the VM (stderr: $(tail -n 5 "$GUEST_ERR"))"
	assert_eq "$(guest done)" yes "the script's last line"
	assert_eq "$(guest mounts)" "cgroup2 /sys/fs/cgroup" "the guest's cgroup mounts"
	local c
	for c in memory pids cpu io; do
		assert_match " $(guest root-subtree-control) " " $c " "root cgroup.subtree_control"
	done
}

@test "cgroup v2 guest: the suite's host detection sees a pure v2 host and what its kernel has (io throttling, no io weight, no swap accounting), as qpod does" {
	# the guest kernel (kernel-config/guest.config) has BLK_DEV_THROTTLING,
	# no iocost or BFQ, and no CONFIG_SWAP (so no memory.swap.max); qpod's
	# io.max, its weight refusal and its swap refusal below agree with that
	local p
	p=$(guest profile)
	assert_match "$p" '^v2 v1=\[\] has=\[' "layout"
	assert_contains "$p" "blkio_throttle" "io.max detected"
	assert_not_contains "$p" "blkio_weight" "no io.weight / io.bfq.weight"
	assert_not_contains "$p" "swap_accounting" "no memory.swap.max"
	assert_eq "$(guest probe-left)" "" "probe cgroups left"
}

@test "cgroup v2 guest: memory.max, pids.max and cpu.max from the spec, read inside the pod" {
	assert_eq "$(guest limits-inside)" "33554432|20|50000 100000|rc=0"
}

@test "cgroup v2 guest: pids.max is enforced (a fork bomb gets EAGAIN)" {
	assert_match "$(guest forkbomb)" '^forked [0-9]+ failed EAGAIN\|rc=0$' "forkbomb"
}

@test "cgroup v2 guest: --memory, --cpus, --pids land in the pod's cgroup, removed by delete" {
	assert_match "$(guest friendly-cgroup)" '^41943040\|25000 100000\|30\|.*memory.*' "memory.max|cpu.max|pids.max|controllers"
	assert_contains "$(guest friendly-cgroup)" pids
	assert_eq "$(guest friendly-cgroup-after-delete)" gone
}

@test "cgroup v2 guest: a fresh state root's first command runs through the overlay view of qpod's binary (layers by path on this 6.1 kernel), not the memfd fallback" {
	assert_contains "$(guest exe-guard)" "exe guard: a read-only overlayfs view of /qpod/qpod"
}

@test "cgroup v2 guest: the pod's process is cloned straight into its cgroup (clone3, CLONE_INTO_CGROUP)" {
	assert_match "$(guest clone-into-cgroup)" '^pod process [0-9]+ cloned into its cgroup \(CLONE_INTO_CGROUP\)\|0::/$' \
		"qpod --debug, then /proc/self/cgroup in the pod's cgroup namespace"
}

@test "cgroup v2 guest: default pod: mknod works, loop-control and loop0 cannot be opened, null/zero can (eBPF)" {
	local v
	v=$(guest devices-default)
	guest_has devices-default mknod-ok null-ok zero-ok n2-ok "rc=0"
	assert_eq "$(grep -o 'Operation not permitted' <<<"$v" | wc -l)" 2 "EPERM count in: $v"
}

@test "cgroup v2 guest: allow rules for c 10:237 and b 7:0 let the opens reach the (absent) drivers" {
	local v
	v=$(guest devices-allowed)
	guest_has devices-allowed mknod-ok null-ok "rc=0"
	assert_not_contains "$v" "Operation not permitted" "devices-allowed"
	# this guest kernel has no loop driver: the open gets past the cgroup and fails there
	assert_match "$v" "No such device" "devices-allowed"
}

@test "cgroup v2 guest: pause freezes the cgroup (cgroup.freeze 1, frozen 1, nothing runs); resume thaws it" {
	assert_eq "$(guest frz-before)" "status=running freeze=0"
	guest_has frz-paused "status=paused" "freeze=1" "frozen 1" "counter=still"
	guest_has frz-resumed "status=running" "freeze=0" "frozen 0" "counter-moves=yes"
}

@test "cgroup v2 guest: a memory hog in a 16M pod is OOM-killed (137), memory.events counts it, events reports it" {
	assert_eq "$(guest oom-run)" "rc=137"
	assert_eq "$(guest oom-hog)" "hog=137"
	assert_match "$(guest oom-memory-events)" '^oom [1-9][0-9]*\|oom_kill [1-9][0-9]*$' "memory.events"
	assert_eq "$(guest oom-event)" 1 "{\"type\":\"oom\"} lines of qpod events"
}

@test "cgroup v2 guest: reservation -> memory.low, shares -> cpu.weight; update rewrites the limits; events --stats reads them" {
	assert_eq "$(guest upd-created)" "33554432|16777216|20" "memory.max|memory.low|cpu.weight (shares 512)"
	assert_eq "$(guest upd-update)" "rc=0"
	assert_eq "$(guest upd-updated)" "50331648|15|20000 100000" "memory.max|pids.max|cpu.max after update"
	assert_eq "$(guest upd-stats)" "[50331648,15,true,true,true]" "memory limit, pids limit, usage > 0, pids > 0, cpu > 0"
	# an exec'd process is in the pod's cgroup (its root, in the cgroup namespace)
	assert_eq "$(guest upd-exec-cgroup)" "0::/|1" "/proc/self/cgroup of an exec; pod processes after it"
}

@test "cgroup v2 guest: without swap accounting a swap limit is refused, not ignored; no swap and unlimited are fine" {
	assert_match "$(guest upd-swap)" '^qpod: .*memory.swap: the kernel does not account swap per cgroup \(no memory.swap.max\).*\|rc=1$' "update --memory-swap"
	assert_eq "$(guest upd-noswap)" "rc=0|rc=0" "swap = limit, swap = -1"
}

@test "cgroup v2 guest: linux.resources.unified is written; a file the cgroup lacks is refused" {
	assert_eq "$(guest unified)" "20971520|7|rc=0" "memory.high|pids.max"
	assert_match "$(guest unified-missing)" 'unified: the pod.s cgroup has no file "hugetlb.2MB.max".*\|rc=125$'
}

@test "cgroup v2 guest: blockIO: io.max is written (a device the guest lacks is refused by name); a weight without io.bfq.weight or io.weight is refused" {
	assert_match "$(guest blkio-absent)" 'blockIO.throttleReadBpsDevice: no block device 4095:4095: write "4095:4095 rbps=1048576" to io.max.*\|rc=125$'
	assert_match "$(guest blkio-weight)" 'blockIO.weight cannot be applied: the pod.s cgroup has no io.bfq.weight or io.weight.*\|rc=125$'
}

@test "cgroup v2 guest: a nested cgroupsPath gets its controllers through every level; removed by delete" {
	assert_eq "$(guest nested)" "25165824|9|rc=0" "memory.max|pids.max inside"
	assert_eq "$(guest nested-after-delete)" gone
}

@test "cgroup v2 guest: kill --all KILL of a paused pod (cgroup.kill) stops it; delete works" {
	assert_eq "$(guest kill-paused)" "rc=0"
	assert_eq "$(guest kill-paused-after)" "status=stopped procs=0"
	assert_eq "$(guest kill-delete)" "rc=0"
}

@test "cgroup v2 guest: nothing left in the guest, and no QEMU or state left on the host" {
	assert_eq "$(guest pods-left)" "" "pods left in the guest"
	assert_eq "$(guest cgroups-left)" "" "cgroups left in the guest"
	assert_v2_guest_gone
}
