#!/usr/bin/env bats
# tests/cli/density.bats — `qpod density`, bounded so CI stays fast: a vm run
# of 4 pods and a container run of 20 complete and clean up (the common
# teardown asserts no QEMU, state dir, cgroup or process is left), a tiny
# reserve stops with "reserve", a bridge pre-filled to the kernel's port
# limit in a private netns stops with "bridge-full", Ctrl-C tears
# everything down, and bad input is refused.

load helpers

setup() {
	setup_common
	vm_env
}

teardown() {
	teardown_common
	if [ -n "${NS:-}" ]; then ip netns del "$NS" 2>/dev/null || true; fi
}

pods_at_least() { [ "$(ls "$ROOT" 2>/dev/null | wc -l)" -ge "$1" ]; }

@test "density: vm --max 4 starts, measures and tears down four pods" {
	need_vm
	# --accel decides for the run and its pods (the environment's QPOD_ACCEL aside)
	run --separate-stderr env -u QPOD_ACCEL "$QPOD" --root "$ROOT" density --max 4 --memory 128M --format json \
		--image "$ROOTFS" --accel tcg
	assert_status 0
	assert_contains "$stderr" "stopped: max"
	jq -e '.scenario == "density" and .count == 4 and .stop_reason == "max" and .accel == "tcg"' <<<"$output" >/dev/null || flunk "$output"
	for m in start_ms host_mem_available_mb rss_mb guest_used_mb; do
		jq -e --arg m "$m" '[.results[] | select(.metric == $m and .n == 4)] | length == 1' <<<"$output" >/dev/null ||
			flunk "$m: 4 samples expected"
	done
	jq -e '[.results[] | select(.metric == "per_pod_host_mb" and .n == 1)] | length == 1' <<<"$output" >/dev/null || flunk "per_pod_host_mb"
	# what the idle pods cost in CPU: per pod (percent of one CPU), and the host's busy share
	jq -e '[.results[] | select(.metric == "idle_cpu_pct" and .n == 4 and .min >= 0 and .max <= 100)] | length == 1' \
		<<<"$output" >/dev/null || flunk "idle_cpu_pct: $output"
	jq -e '[.results[] | select(.metric == "host_cpu_busy_pct" and .n == 1 and .min >= 0 and .max <= 100)] | length == 1' \
		<<<"$output" >/dev/null || flunk "host_cpu_busy_pct: $output"
	assert_eq "$(qp list --quiet)" "" "pods left"
	echo "$output" >"$TEST_DIR/d.json"
	run qp report --format svg --output "$TEST_DIR/svg" "$TEST_DIR/d.json"
	assert_status 0
	assert_contains "$output" "per-pod"
}

@test "density: container --max 20, and --keep leaves them for qpod list" {
	run --separate-stderr qp density --mode container --max 20 --format json --image "$ROOTFS"
	assert_status 0
	jq -e '.count == 20 and .stop_reason == "max" and ([.results[] | select(.metric == "cgroup_usage_mb" and .n == 20)] | length == 1)' \
		<<<"$output" >/dev/null || flunk "$output"
	assert_eq "$(qp list --quiet)" "" "pods left"
	run --separate-stderr qp density --mode container --max 2 --keep --format json --image "$ROOTFS"
	assert_status 0
	assert_eq "$(qp list --quiet | wc -l)" 2 "kept pods"
}

@test "density: a reserve just under MemAvailable stops with the reserve reason" {
	local avail
	avail=$(awk '/^MemAvailable:/ { print int($2 / 1024) - 2 }' /proc/meminfo)
	run --separate-stderr qp density --mode container --reserve "${avail}M" --format json --image "$ROOTFS"
	assert_status 0
	assert_contains "$stderr" "stopped: reserve"
	jq -e '.stop_reason == "reserve"' <<<"$output" >/dev/null || flunk "$output"
}

@test "density: a bridge already at the kernel's port limit stops with the network reason" {
	need_vm
	NS=qpd$$$BATS_TEST_NUMBER
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	ip -n "$NS" link add qpod0 type bridge
	for i in $(seq 1 1023); do echo "link add v$i master qpod0 type veth peer name w$i"; done >"$TEST_DIR/fill"
	ip -n "$NS" -batch "$TEST_DIR/fill"
	run --separate-stderr nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" density --net bridge \
		--subnet 10.99.0.0/22 --max 3 --format json --image "$ROOTFS"
	assert_status 0
	assert_contains "$stderr" "stopped: bridge-full"
	jq -e '.stop_reason == "bridge-full" and .count == 0' <<<"$output" >/dev/null || flunk "$output"
}

@test "density: Ctrl-C in the middle tears every pod down" {
	(exec "$QPOD" --root "$ROOT" density --mode container --max 100000 --format json --output "$TEST_DIR/i.json" --image "$ROOTFS") \
		>"$TEST_DIR/d.out" 2>"$TEST_DIR/d.err" </dev/null 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
	wait_for 200 pods_at_least 5
	kill -INT "$BG_PID"
	wait "$BG_PID" || flunk "density after Ctrl-C: exit $? ($(cat "$TEST_DIR/d.err"))"
	assert_contains "$(cat "$TEST_DIR/d.err")" "stopped: interrupted"
	jq -e '.stop_reason == "interrupted" and .count >= 5' "$TEST_DIR/i.json" >/dev/null || flunk "$(cat "$TEST_DIR/i.json")"
	assert_eq "$(qp list --quiet)" "" "pods left"
}

@test "density: bad input" {
	run --separate-stderr qp density --max 0
	assert_qpod_error
	run --separate-stderr qp density --memory 0
	assert_qpod_error
	run --separate-stderr qp density --reserve 100000T
	assert_qpod_error
	run --separate-stderr qp density --reserve 1T
	assert_qpod_error
	assert_contains "$stderr" "not less than this host's RAM"
	run --separate-stderr qp density --parallel 0
	assert_qpod_error
	run --separate-stderr qp density --accel warp
	assert_qpod_error
	assert_contains "$stderr" "--accel must be auto, kvm or tcg"
	run --separate-stderr qp density --mode cloud
	assert_qpod_error
	run --separate-stderr qp density --subnet 10.0.0.0/16
	assert_qpod_error
}

@test "density --ksm: merging on for the run, reported, the host's settings restored" {
	need_vm
	host_has ksm || skip "this kernel has no KSM (CONFIG_KSM: no /sys/kernel/mm/ksm/run)"
	local before
	before=$(cat /sys/kernel/mm/ksm/run):$(cat /sys/kernel/mm/ksm/pages_to_scan)
	run --separate-stderr qp density --max 2 --memory 128M --ksm --format json --image "$ROOTFS"
	assert_status 0
	jq -e '.count == 2 and ([.results[] | select(.metric == "ksm_saved_mb" and .n == 1 and .min >= 0)] | length == 1)' \
		<<<"$output" >/dev/null || flunk "$output"
	assert_eq "$(cat /sys/kernel/mm/ksm/run):$(cat /sys/kernel/mm/ksm/pages_to_scan)" "$before" "KSM settings"
}
