#!/usr/bin/env bats
# tests/cli/cgroups.bats — memory, cpu and pids limits, on cgroup v1/hybrid
# and v2 hosts: the values land in the pod's cgroup, and the kernel enforces
# them (OOM kill, fork failure).  The pod's cgroup is gone after delete (the
# teardown asserts that).

load helpers

@test "--memory, --cpus and --pids are written to the pod's cgroup" {
	bg_qp run --rm --name "$ID" --memory 64M --cpus 0.5 --pids 20 "$ROOTFS" -- "$HELPER" sleep 30
	wait_for 200 status_is "$ID" running
	local f v
	f=$(cg_file memory memory.limit_in_bytes memory.max)
	assert_eq "$(cat "$f")" 67108864 "$f"
	f=$(cg_file cpu cpu.cfs_quota_us cpu.max)
	v=$(cat "$f")
	case $f in
	*cpu.max) assert_eq "$v" "50000 100000" "$f" ;;
	*) assert_eq "$v" 50000 "$f"
	   assert_eq "$(cat "${f%/*}/cpu.cfs_period_us")" 100000 "cpu.cfs_period_us" ;;
	esac
	f=$(cg_file pids pids.max pids.max)
	assert_eq "$(cat "$f")" 20 "$f"

	# every process of the pod is in the cgroup, and qpod ps says so
	local procs pid
	procs=$(cat "$(dirname "$(cg_file pids cgroup.procs cgroup.procs)")/cgroup.procs")
	run --separate-stderr qp ps "$ID"
	assert_status 0
	for pid in "${lines[@]}"; do
		grep -qx "$pid" <<<"$procs" || flunk "ps lists $pid, not in the cgroup ($procs)"
	done
	kill -TERM "$BG_PID"
	wait "$BG_PID" || true
}

@test "memory limit: allocating past --memory 32M is OOM-killed (137)" {
	run --separate-stderr qp run --rm --name "$ID" --memory 32M "$ROOTFS" -- "$HELPER" alloc 200
	assert_status 137
	assert_not_contains "$output" "allocated" "helper output"
}

@test "memory limit: allocating under the limit works" {
	run --separate-stderr qp run --rm --name "$ID" --memory 64M "$ROOTFS" -- "$HELPER" alloc 16
	assert_status 0
	assert_eq "$output" "allocated 16" "helper output"
}

@test "pids limit: a fork bomb under --pids 20 fails with EAGAIN" {
	run --separate-stderr qp run --rm --name "$ID" --pids 20 "$ROOTFS" -- "$HELPER" forkbomb 100
	assert_status 0
	assert_match "$output" '^forked [0-9]+ failed EAGAIN$' "forkbomb"
	local k
	k=$(awk '{ print $2 }' <<<"$output")
	[ "$k" -lt 20 ] || flunk "forked $k processes under a limit of 20"
}

@test "limits from the spec (linux.resources) of an OCI bundle" {
	make_bundle "$BUNDLE" "$(helper_args sleep 30) | .linux.resources = {
		\"memory\": {\"limit\": 50331648},
		\"cpu\": {\"quota\": 25000, \"period\": 100000},
		\"pids\": {\"limit\": 33}}"
	qp create "$ID" --bundle "$BUNDLE"
	local f
	f=$(cg_file memory memory.limit_in_bytes memory.max)
	assert_eq "$(cat "$f")" 50331648 "$f"
	f=$(cg_file pids pids.max pids.max)
	assert_eq "$(cat "$f")" 33 "$f"
	f=$(cg_file cpu cpu.cfs_quota_us cpu.max)
	case $f in
	*cpu.max) assert_eq "$(cat "$f")" "25000 100000" "$f" ;;
	*) assert_eq "$(cat "$f")" 25000 "$f" ;;
	esac
	qp delete --force "$ID"
}

@test "a pod without limits still gets its own cgroup, removed by delete" {
	make_bundle "$BUNDLE" "$(helper_args sleep 30)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	[ -n "$(pod_cgroup_dirs "$ID")" ] || flunk "no cgroup directory for $ID"
	local pid
	pid=$(pod_field "$ID" pid)
	assert_in_pod_cgroup "$pid"
	# an exec'd process moves itself in too: in the pod's cgroup namespace
	# its cgroup is "/" in every hierarchy (outside it would be "/..")
	run --separate-stderr qp exec "$ID" -- cat /proc/self/cgroup
	assert_status 0
	[ -n "$output" ] || flunk "no /proc/self/cgroup from exec"
	assert_eq "$(grep -v '^0::/$' <<<"$output" | grep -cv ':/$')" 0 "exec'd process outside the pod cgroup: $output"
	qp delete --force "$ID"
	assert_eq "$(pod_cgroup_dirs "$ID")" "" "cgroup dirs after delete"
}

@test "exec into a pod whose cgroup has no directory in systemd's hierarchy or the hybrid unified tree (an older qpod's) makes one there; delete removes it" {
	local h hs=()
	for h in systemd unified; do
		mountpoint -q "$CGROUP_FS/$h" && hs+=("$h")
	done
	[ "${#hs[@]}" -gt 0 ] || skip "no cgroup v1 named hierarchy or hybrid unified tree on this host (a pure v2 host has neither)"
	make_bundle "$BUNDLE" "$(helper_args sleep 30)"
	qp create "$ID" --bundle "$BUNDLE"
	qp start "$ID"
	local pid
	pid=$(pod_field "$ID" pid)
	for h in "${hs[@]}"; do
		[ -d "$CGROUP_FS/$h/qpod/$ID" ] || flunk "no $h directory for a new pod"
		echo "$pid" >"$CGROUP_FS/$h/cgroup.procs"
		rmdir "$CGROUP_FS/$h/qpod/$ID"
	done
	run --separate-stderr qp exec "$ID" -- true
	assert_status 0
	for h in "${hs[@]}"; do
		[ -d "$CGROUP_FS/$h/qpod/$ID" ] || flunk "exec did not make the pod's $h directory"
	done
	qp delete --force "$ID"
	assert_eq "$(pod_cgroup_dirs "$ID")" "" "cgroup dirs after delete"
}

# decoy_tenants: an empty cgroup "$PREFIX-tenant" at the root of every host
# hierarchy (v1 controllers, systemd's named one, the unified tree), removed
# by teardown; a pod must not see it
decoy_tenants() {
	local m
	DECOYS=()
	for m in $(awk '$9 ~ /^cgroup2?$/ && $5 ~ "^/sys/fs/cgroup(/[^/]+)?$" { print $5 }' /proc/self/mountinfo | sort -u); do
		mkdir "$m/$PREFIX-tenant" && DECOYS+=("$m/$PREFIX-tenant")
	done
	[ "${#DECOYS[@]}" -gt 0 ] || flunk "no cgroup hierarchy to plant a decoy in"
}

teardown() {
	local d
	for d in "${DECOYS[@]}"; do rmdir "$d" 2>/dev/null || true; done
	teardown_common
}

@test "the pod's /sys/fs/cgroup is its own cgroup, read-only, per host hierarchy (as under runc)" {
	decoy_tenants
	run --separate-stderr qp run --rm --name "$ID" --memory 48M --pids 77 "$ROOTFS" -- sh -c '
		if [ -f /sys/fs/cgroup/cgroup.controllers ]; then
			echo v2; cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max
		else
			echo v1; cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max
		fi
		find /sys/fs/cgroup -mindepth 2 -maxdepth 2 -type d | wc -l
		touch /sys/fs/cgroup/x 2>/dev/null && echo writable || echo read-only'
	assert_status 0
	local out=("${lines[@]}")
	if [ "${out[0]}" = v1 ]; then
		# every hierarchy the host has is there
		local h
		for h in $(awk '$9 ~ /^cgroup2?$/ && $5 ~ "^/sys/fs/cgroup/[^/]+$" { sub("/sys/fs/cgroup/", "", $5); print $5 }' /proc/self/mountinfo); do
			run qp run --rm "$ROOTFS" -- test -d "/sys/fs/cgroup/$h"
			assert_status 0
		done
	fi
	assert_eq "${out[1]}" $((48 * 1024 * 1024)) "the pod's memory limit, read inside"
	assert_eq "${out[2]}" 77 "the pod's pids limit, read inside"
	# no other tenant's cgroup directory (the decoys, in every hierarchy
	# including systemd's and the unified tree) is visible below the roots
	assert_eq "${out[3]}" 0 "cgroup directories below the pod's roots"
	assert_eq "${out[4]}" read-only "the cgroup view"
}

@test "without a cgroup namespace (podman's default on v1) the pod's /sys/fs/cgroup still shows its own cgroup" {
	make_bundle "$BUNDLE" '.process.args = ["sh", "-c", "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max; touch /sys/fs/cgroup/x 2>/dev/null && echo writable || echo read-only"]
		| .linux.namespaces = [.linux.namespaces[] | select(.type != "cgroup")]
		| .linux.cgroupsPath = "/qpod-test-parent/'"$ID"'"
		| .linux.resources.memory.limit = 50331648
		| .mounts = [.mounts[] | if .destination == "/sys/fs/cgroup" then .options = ["rprivate", "nosuid", "noexec", "nodev", "relatime", "ro"] else . end]'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "${lines[0]}" 50331648 "the pod's memory limit, read inside"
	assert_eq "${lines[1]}" read-only "the cgroup view"
	local d
	for d in /sys/fs/cgroup/*/qpod-test-parent /sys/fs/cgroup/qpod-test-parent; do
		[ -d "$d" ] && rmdir "$d" 2>/dev/null
	done
	true
}

@test "memory reservation, swappiness and disableOOMKiller are applied (v1 files; v2: memory.low, the rest refused)" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60) | .linux.resources.memory = {\"limit\": 134217728, \"reservation\": 67108864, \"swappiness\": 10, \"disableOOMKiller\": true}"
	if [ -f "$CGROUP_FS/memory/memory.swappiness" ]; then
		qp create "$ID" --bundle "$BUNDLE"
		assert_eq "$(cat "$(cg_file memory memory.soft_limit_in_bytes memory.low)")" 67108864 "reservation"
		assert_eq "$(cat "$(cg_file memory memory.swappiness memory.swappiness)")" 10 "swappiness"
		assert_contains "$(cat "$(cg_file memory memory.oom_control memory.oom_control)")" "oom_kill_disable 1" "OOM killer"
		qp delete --force "$ID"
	else
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
		assert_qpod_error 125
		assert_contains "$stderr" "no cgroup v2 equivalent"
		make_bundle "$BUNDLE" "$(helper_args sleep 60) | .linux.resources.memory = {\"reservation\": 67108864}"
		qp create "$ID" --bundle "$BUNDLE"
		assert_eq "$(cat "$(cg_file memory memory.soft_limit_in_bytes memory.low)")" 67108864 "reservation"
		qp delete --force "$ID"
	fi
	make_bundle "$BUNDLE" "$(helper_args true) | .linux.resources.memory.swappiness = 101"
	run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
	assert_qpod_error 125
	assert_contains "$stderr" "swappiness"
}

@test "linux.resources.unified: written on cgroup v2 (the unified tree), refused on v1, bad names refused" {
	local mode=v1
	[ -f "$CGROUP_FS/cgroup.controllers" ] && mode=v2
	make_bundle "$BUNDLE" "$(helper_args sleep 60) | .linux.resources.unified = {\"cgroup.max.depth\": \"3\"}"
	if [ $mode = v1 ]; then
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
		assert_qpod_error 125
		assert_contains "$stderr" "needs a cgroup v2 host"
	fi
	# the v2 path, for real, on the unified tree (mounted on hybrid hosts)
	if [ "$(stat -f -c %T "$CGROUP_FS/unified" 2>/dev/null)" = cgroup2fs ] || [ $mode = v2 ]; then
		[ $mode = v1 ] && export QPOD_CGROUP_ROOT=$CGROUP_FS/unified
		qp create "$ID" --bundle "$BUNDLE"
		local cg
		cg=$(pod_field "$ID" cgroup)
		assert_eq "$(cat "${QPOD_CGROUP_ROOT:-$CGROUP_FS}/${cg#/}/cgroup.max.depth")" 3 "cgroup.max.depth"
		qp delete --force "$ID"
		make_bundle "$BUNDLE" "$(helper_args true) | .linux.resources.unified = {\"memory.no_such_file\": \"1\"}"
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
		assert_qpod_error 125
		assert_contains "$stderr" "no file \"memory.no_such_file\""
		unset QPOD_CGROUP_ROOT
	fi
	local bad
	for bad in '{"../memory.max": "1"}' '{"memory/max": "1"}' '{"nodot": "1"}' '{"memory.max": 5}' '{"memory.max": "1\n2"}'; do
		make_bundle "$BUNDLE" "$(helper_args true) | .linux.resources.unified = $bad"
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
		assert_qpod_error 125
		assert_contains "$stderr" "linux.resources.unified" "error for $bad"
	done
	assert_eq "$(qp list --quiet)" "" "pods left"
}

# blkio_read FILE: the value of a weight file (v1 "200"; v2 "default 200")
# or the device lines of a throttle file in one form for both (v1
# "8:0 1048576"; v2 io.max "8:0 rbps=1048576 wbps=max ..." -> "8:0 1048576"
# for the key given as $2)
blkio_read() {
	case $1 in
	*weight) awk '$1 == "default" { print $2; exit } /^[0-9]+$/ { print; exit }' "$1" ;;
	*io.max) awk -v k="$2" '{ for (i = 2; i <= NF; i++) if ($i ~ "^" k "=" && $i !~ /=max$/) print $1, substr($i, length(k) + 2) }' "$1" ;;
	*) cat "$1" ;;
	esac
}

# what a weight of W reads back as in FILE (v2 io.weight: runc's 1..10000 scale)
blkio_weight_as() {
	case $2 in
	*/io.weight) echo $((1 + ($1 - 10) * 9999 / 990)) ;;
	*) echo "$1" ;;
	esac
}

@test "linux.resources.blockIO: throttles written and read back, updated; the weight applied where the kernel has CFQ/BFQ/iocost weights and refused by name where not" {
	local dev
	dev=$(lsblk -dno MAJ:MIN,TYPE 2>/dev/null | awk '$2 == "disk" { gsub(/ /, "", $1); print $1; exit }')
	[ -n "$dev" ] || skip "no block device on this host"
	host_has blkio_throttle || skip "this kernel has no block I/O throttling (CONFIG_BLK_DEV_THROTTLING: no blkio.throttle.* / io.max)"
	local maj=${dev%%:*} min=${dev##*:} weighted=0 wf rf wif
	host_has blkio_weight && weighted=1
	local throttles="throttleReadBpsDevice: [{major: $maj, minor: $min, rate: 1048576}],
		throttleWriteIOPSDevice: [{major: $maj, minor: $min, rate: 100}]"
	if [ $weighted = 0 ]; then
		# the weight alone cannot be applied: refused at create, by name, nothing left
		make_bundle "$BUNDLE" "$(helper_args sleep 60) | .linux.resources.blockIO = {weight: 200, $throttles}"
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
		assert_qpod_error 125
		assert_match "$stderr" 'linux.resources.blockIO.weight cannot be applied: .*(blkio.weight|io.bfq.weight)' "the weight, refused"
		[ ! -e "$ROOT/$ID" ] || flunk "state left after the refused weight"
		assert_eq "$(pod_cgroup_dirs "$ID")" "" "cgroup dirs left after the refused weight"
		make_bundle "$BUNDLE" "$(helper_args sleep 60) | .linux.resources.blockIO = {$throttles}"
	else
		make_bundle "$BUNDLE" "$(helper_args sleep 60) | .linux.resources.blockIO = {weight: 200, $throttles}"
	fi
	qp create "$ID" --bundle "$BUNDLE"
	rf=$(cg_file blkio blkio.throttle.read_bps_device io.max)
	wif=$(cg_file blkio blkio.throttle.write_iops_device io.max)
	assert_eq "$(blkio_read "$rf" rbps)" "$maj:$min 1048576" "read bps"
	assert_eq "$(blkio_read "$wif" wiops)" "$maj:$min 100" "write iops"
	if [ $weighted = 1 ]; then
		wf=$(cg_file blkio blkio.weight io.bfq.weight 2>/dev/null) || wf=$(cg_file blkio blkio.bfq.weight io.weight)
		assert_eq "$(blkio_read "$wf")" "$(blkio_weight_as 200 "$wf")" "weight ($wf)"
		qp update --blkio-weight 300 "$ID"
		assert_eq "$(blkio_read "$wf")" "$(blkio_weight_as 300 "$wf")" "weight after update"
	else
		run --separate-stderr qp update --blkio-weight 300 "$ID"
		assert_qpod_error 1
		assert_contains "$stderr" "blockIO.weight cannot be applied"
	fi
	echo "{\"blockIO\": {\"throttleReadBpsDevice\": [{\"major\": $maj, \"minor\": $min, \"rate\": 0}]}}" |
		qp update --resources - "$ID"
	assert_eq "$(blkio_read "$rf" rbps)" "" "rate 0 lifts the limit"
	assert_eq "$(blkio_read "$wif" wiops)" "$maj:$min 100" "write iops kept"
	run --separate-stderr qp update --blkio-weight 5 "$ID"
	assert_status 1
	assert_contains "$stderr" "blockIO.weight: must be in 10..1000"
	qp delete --force "$ID"
	# what cannot be applied is refused at create, naming it; nothing is left
	local bad
	for bad in "{throttleReadBpsDevice: [{major: 4095, minor: 4095, rate: 5}]}" \
		"{throttleReadBpsDevice: [{major: $maj, minor: $min}]}" "{weightDevice: [{major: $maj}]}"; do
		make_bundle "$BUNDLE" "$(helper_args true) | .linux.resources.blockIO = $bad"
		run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
		assert_qpod_error 125
		assert_contains "$stderr" "blockIO"
		[ ! -e "$ROOT/$ID" ] || flunk "state left after $bad"
		assert_eq "$(pod_cgroup_dirs "$ID")" "" "cgroup dirs left after $bad"
	done
	make_bundle "$BUNDLE" "$(helper_args true) | .linux.resources.blockIO = {leafWeight: 300}"
	run --separate-stderr qp create "$ID" --bundle "$BUNDLE"
	if [ -n "$(hf_v1_dir blkio)" ] && hf_cg_probe blkio io blkio.leaf_weight; then
		assert_status 0 # CFQ's kernels have it
		qp delete --force "$ID"
	else
		assert_qpod_error 125
		assert_contains "$stderr" "leafWeight"
	fi
}
