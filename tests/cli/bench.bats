#!/usr/bin/env bats
# tests/cli/bench.bats — `qpod bench start|replace|memory` end to end, kept
# short (one run each): the JSON follows the result format (docs/REPORTS.md)
# with real samples, `qpod report` reads it back, and bad input is refused.
# Timings are not asserted, only that they were measured.

load helpers

setup() {
	setup_common
	vm_env
}

# qpod ARGS in the background, SIGINT once a process matches PATTERN: it
# must fail and say "interrupted"
interrupt_when() {
	local pattern=$1
	shift
	(exec "$QPOD" "$@") >"$TEST_DIR/bg.out" 2>"$TEST_DIR/bg.err" </dev/null 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
	wait_for 300 pgrep -f -- "$pattern"
	kill -INT "$BG_PID"
	wait "$BG_PID" && flunk "an interrupted qpod $* exited 0"
	assert_contains "$(cat "$TEST_DIR/bg.err")" "interrupted"
}

@test "bench start: container and vm, JSON result with samples and phases" {
	need_vm
	run --separate-stderr "$QPOD" bench start --mode both --runs 2 --warmup 0 --format json --image "$ROOTFS"
	assert_status 0
	echo "$output" >"$TEST_DIR/start.json"
	jq -e '.tool == "qpod" and .scenario == "start" and .mode == "both" and (.accel | test("^(kvm|tcg)$"))' \
		"$TEST_DIR/start.json" >/dev/null || flunk "header: $output"
	for name in qpod-container qpod-vm qpod-vm-cold qpod-vm-spare; do
		jq -e --arg n "$name" '[.results[] | select(.name == $n and .metric == "start_ms" and .n == 2 and .min > 0 and (.samples | length) == 2)] | length == 1' \
			"$TEST_DIR/start.json" >/dev/null || flunk "$name start_ms missing"
	done
	# vm pods side by side: the default (a template's clone), a cold boot
	# and a pod that took a spare
	jq -e '.phases["qpod-vm"].restore > 0 and (.phases["qpod-vm"] | has("kernel") | not) and
		.phases["qpod-vm-spare"].take > 0 and (.phases["qpod-vm-spare"] | has("restore") | not) and
		.phases["qpod-vm-cold"].kernel > 0 and .phases["qpod-vm-cold"].vmm_init > 0 and
		(.phases["qpod-vm-cold"].firmware | type) == "number" and .phases["qpod-container"].namespaces > 0' "$TEST_DIR/start.json" >/dev/null ||
		flunk "phases: $(jq -c .phases "$TEST_DIR/start.json")"
	run "$QPOD" report "$TEST_DIR/start.json"
	assert_status 0
	assert_contains "$output" "run_to_exit_ms"
}

@test "bench start --baseline: runc, crun and runsc rows, each measured or carrying its reason" {
	run --separate-stderr "$QPOD" bench start --mode container --baseline --runs 1 --warmup 0 --format json --image "$ROOTFS"
	assert_status 0
	echo "$output" >"$TEST_DIR/peers.json"
	for name in runc crun runsc; do
		jq -e --arg n "$name" '[.results[] | select(.name == $n and .metric == "run_to_exit_ms")] | length == 1' \
			"$TEST_DIR/peers.json" >/dev/null || flunk "no $name row: $output"
		# measured (one sample, no reason) or not (a reason, no sample): never both, never neither
		jq -e --arg n "$name" '.results[] | select(.name == $n) |
			(.n == 1 and .min > 0 and .reason == null) or (.n == 0 and (.reason | type) == "string" and (.reason | length) > 0)' \
			"$TEST_DIR/peers.json" >/dev/null || flunk "$name: $(jq -c --arg n "$name" '.results[] | select(.name == $n)' "$TEST_DIR/peers.json")"
	done
	# qpod's row runs the peers' bundle, and says so
	jq -e '.params.container_form == "qpod run --bundle: the bundle the peers run"' "$TEST_DIR/peers.json" >/dev/null ||
		flunk "params: $(jq -c .params "$TEST_DIR/peers.json")"
	# runsc's platform is its own default, named in the result
	if jq -e '.results[] | select(.name == "runsc") | .n == 1' "$TEST_DIR/peers.json" >/dev/null; then
		jq -e '(.params.runsc_platform | test("^(ptrace|systrap|kvm)$")) and .params.runsc_network == "none"' \
			"$TEST_DIR/peers.json" >/dev/null || flunk "params: $(jq -c .params "$TEST_DIR/peers.json")"
	fi
	# a reason is shown by qpod report, in the row's note
	local reason
	reason=$(jq -r '[.results[] | select(.reason) | .reason][0] // empty' "$TEST_DIR/peers.json")
	run --separate-stderr "$QPOD" report "$TEST_DIR/peers.json"
	assert_status 0
	assert_match "$output" "ratio vs runc"
	[ -z "$reason" ] || assert_contains "$output" "$reason"
	# nothing left: no sandbox, no state under the bench's roots
	pgrep -f "runsc-sandbox.*qpod-bench|runsc.*\.bench-runsc" && flunk "a runsc process outlived the bench"
	return 0
}

@test "bench workload --baseline: runc, crun and runsc rows per test, each measured or carrying its reason" {
	run --separate-stderr "$QPOD" bench workload --baseline --targets host,runc,crun,runsc --tests syscall,vol_write,tcp_rr,tcp_stream_out \
		--runs 1 --duration 0.2 --format json --image "$ROOTFS"
	assert_status 0
	echo "$output" >"$TEST_DIR/wl.json"
	local peer
	for peer in runc crun runsc; do
		jq -e --arg p "$peer" '[.results[] | select(.target == $p and .test == "syscall")] | length >= 1 and
			all((.n == 1 and .min > 0 and .reason == null) or (.n == 0 and (.reason | length) > 0))' \
			"$TEST_DIR/wl.json" >/dev/null || flunk "$peer syscall: $(jq -c --arg p "$peer" '[.results[] | select(.target == $p)]' "$TEST_DIR/wl.json")"
		# the volume tests run under the peers too (the volume bind-mounted in their bundle)
		jq -e --arg p "$peer" '[.results[] | select(.target == $p and .test == "vol_write")] | length >= 1 and
			all((.n == 1 and .min > 0 and .reason == null) or
			    (.n == 0 and (.reason | length) > 0 and (.reason | test("not run under a peer") | not)))' \
			"$TEST_DIR/wl.json" >/dev/null || flunk "$peer vol_write: $(jq -c --arg p "$peer" '[.results[] | select(.target == $p)]' "$TEST_DIR/wl.json")"
		# the network tests too: the server pod in a namespace the bench
		# made with a veth (both ways); a peer that runs here at all
		# (its syscall row) runs them, or says why not
		local test
		for test in tcp_rr tcp_stream_out; do
			jq -e --arg p "$peer" --arg t "$test" '
				([.results[] | select(.target == $p and .test == "syscall" and .n == 1)] | length) as $runs |
				[.results[] | select(.target == $p and .test == $t and .metric == "score")] | length == 1 and
				all((.n == 1 and .min > 0 and .reason == null) or
				    ($runs == 0 and .n == 0 and (.reason | length) > 0) or
				    ($p == "runsc" and .n == 0 and (.reason | test("runsc run --detach"))))' \
				"$TEST_DIR/wl.json" >/dev/null ||
				flunk "$peer $test: $(jq -c --arg p "$peer" '[.results[] | select(.target == $p)]' "$TEST_DIR/wl.json")"
		done
	done
	# where runc runs at all (its syscall row), its network figures exist
	jq -e '([.results[] | select(.target == "runc" and .test == "syscall" and .n == 1)] | length) == 0 or
		([.results[] | select(.target == "runc" and (.test == "tcp_rr" or .test == "tcp_stream_out") and .n == 1)] | length == 2)' \
		"$TEST_DIR/wl.json" >/dev/null || flunk "runc's network rows: $(jq -c '[.results[] | select(.target == "runc")]' "$TEST_DIR/wl.json")"
	# and nothing of the server pods is left
	! pgrep -f '/bench/netbench server' >/dev/null || flunk "a peer's server pod is still running"
	run --separate-stderr "$QPOD" report "$TEST_DIR/wl.json"
	assert_status 0
	assert_contains "$output" "runc"
}

@test "bench replace: warm and cold replaces of a vm pod" {
	need_vm
	run --separate-stderr "$QPOD" bench replace --runs 1 --warmup 0 --format json --image "$ROOTFS"
	assert_status 0
	for name in warm cold; do
		jq -e --arg n "$name" '[.results[] | select(.name == $n and .metric == "replace_ms" and .n == 1 and .min > 0)] | length == 1' \
			<<<"$output" >/dev/null || flunk "$name replace_ms missing: $output"
	done
	pgrep -f "bench-replace-vm" && flunk "the bench pod is still running"
	return 0
}

@test "bench: bad input" {
	run --separate-stderr "$QPOD" bench
	assert_qpod_error
	run --separate-stderr "$QPOD" bench sprint
	assert_qpod_error
	assert_contains "$stderr" 'unknown scenario "sprint"'
	run --separate-stderr "$QPOD" bench start --runs 0
	assert_qpod_error
	assert_contains "$stderr" "--runs must be"
	run --separate-stderr "$QPOD" bench start --format yaml
	assert_qpod_error
	run --separate-stderr "$QPOD" bench start --mode fast
	assert_qpod_error
	run --separate-stderr "$QPOD" bench start --accel warp
	assert_qpod_error
	assert_contains "$stderr" "--accel must be auto, kvm or tcg"
	run --separate-stderr "$QPOD" bench memory --memory 1K
	assert_qpod_error
	assert_contains "$stderr" "at least 16M"
	run --separate-stderr "$QPOD" bench memory --memory 1P
	assert_qpod_error
	run --separate-stderr "$QPOD" bench memory --memory 1000T
	assert_qpod_error
	assert_contains "$stderr" "more than this host's RAM"
	run --separate-stderr "$QPOD" bench start --image /no/such/rootfs
	assert_qpod_error
	assert_contains "$stderr" "/no/such/rootfs"
	# --baseline where it would change nothing is refused, not ignored
	run --separate-stderr "$QPOD" bench memory --baseline
	assert_qpod_error
	assert_contains "$stderr" "--baseline is for start, workload and memory --mode container"
	run --separate-stderr "$QPOD" bench replace --baseline
	assert_qpod_error
	assert_contains "$stderr" "--baseline is for"
}

@test "bench memory: container pods' cgroup usage" {
	run --separate-stderr "$QPOD" bench memory --mode container --runs 2 --format json --image "$ROOTFS"
	assert_status 0
	jq -e '[.results[] | select(.name == "container" and .metric == "cgroup_usage_mb" and .n == 2 and .min > 0)] | length == 1' \
		<<<"$output" >/dev/null || flunk "cgroup usage missing: $output"
}

@test "bench memory --baseline: qpod's and each peer's idle pod, host PSS measured or a reason; nothing left" {
	run --separate-stderr "$QPOD" bench memory --mode container --baseline --runs 1 --format json --image "$ROOTFS"
	assert_status 0
	echo "$output" >"$TEST_DIR/mem.json"
	local name
	for name in container runc crun runsc; do
		jq -e --arg n "$name" '[.results[] | select(.name == $n and .metric == "host_pss_mb")] | length == 1 and
			all((.n == 1 and .min > 0 and .reason == null) or (.n == 0 and (.reason | length) > 0))' \
			"$TEST_DIR/mem.json" >/dev/null || flunk "$name: $(jq -c --arg n "$name" '[.results[] | select(.name == $n)]' "$TEST_DIR/mem.json")"
	done
	pgrep -f "runsc.*qpod-bench\.[A-Za-z0-9]+/\.bench-mem" && flunk "a runsc sandbox of the bench outlived it"
	# runsc leaves a detached pod's cgroup at delete: the bench removes it
	local left
	left=$(find /sys/fs/cgroup -maxdepth 3 -type d -name 'bench-mem-*' 2>/dev/null)
	[ -z "$left" ] || flunk "cgroups left:" "$left"
	return 0
}

@test "density --baseline: qpod's container and each peer as many idle pods, each row measured or a reason; nothing left" {
	run --separate-stderr qp density --mode container --max 2 --baseline --format json --image "$ROOTFS"
	assert_status 0
	echo "$output" >"$TEST_DIR/density.json"
	jq -e '.count == 2 and .params.baseline == "runc,crun,runsc"' "$TEST_DIR/density.json" >/dev/null ||
		flunk "header: $(jq -c '{count, params}' "$TEST_DIR/density.json")"
	local name metric
	# "container": qpod run -d, timed as the peers are; runsc is the density the issue asks for
	for name in container runc crun runsc; do
		for metric in start_ms host_pss_mb per_pod_host_mb pods; do
			jq -e --arg n "$name" --arg m "$metric" '[.results[] | select(.name == $n and .metric == $m)] | length == 1 and
				all((.n >= 1 and .reason == null) or (.n == 0 and (.reason | length) > 0))' \
				"$TEST_DIR/density.json" >/dev/null ||
				flunk "$name $metric: $(jq -c --arg n "$name" '[.results[] | select(.name == $n)]' "$TEST_DIR/density.json")"
		done
		# a peer that ran started as many pods as qpod did, each timed
		jq -e --arg n "$name" '[.results[] | select(.name == $n and .metric == "start_ms")][0] |
			.reason != null or (.n == 2 and .min > 0)' "$TEST_DIR/density.json" >/dev/null || flunk "$name: start_ms"
	done
	pgrep -f "runsc.*density-peer" && flunk "a runsc sandbox of the density run outlived it"
	local left
	left=$(find /sys/fs/cgroup -maxdepth 3 -type d -name 'density-peer-*' 2>/dev/null)
	[ -z "$left" ] || flunk "cgroups left:" "$left"
	[ -z "$(ls -A "$ROOT")" ] || flunk "state left in the root: $(ls -A "$ROOT")"
	run --separate-stderr qp report "$TEST_DIR/density.json"
	assert_status 0
	assert_contains "$output" "runsc"
}

@test "density --baseline: Ctrl-C among the peers still writes qpod's rows, partial, and leaves nothing" {
	interrupt_when "\.density-peer-" --root "$ROOT" density --mode container --max 3 --baseline --format json \
		--output "$TEST_DIR/partial.json" --image "$ROOTFS"
	jq -e '.partial == true and .count == 3 and ([.results[] | select(.name == "qpod" and .metric == "start_ms" and .n == 3)] | length == 1)' \
		"$TEST_DIR/partial.json" >/dev/null || flunk "partial result: $(cat "$TEST_DIR/partial.json" 2>&1)"
	sleep 1
	pgrep -f "density-peer" && flunk "a peer's pod outlived the density run"
	local left
	left=$(find /sys/fs/cgroup -maxdepth 3 -type d -name 'density-peer-*' 2>/dev/null)
	[ -z "$left" ] || flunk "cgroups left:" "$left"
	return 0
}

@test "bench: an image that cannot run the workload stops the bench with the pod's error" {
	mkdir -p "$TEST_DIR/empty"
	run --separate-stderr "$QPOD" bench start --mode container --runs 2 --image "$TEST_DIR/empty"
	assert_qpod_error
	assert_contains "$stderr" "/bin/true"
}

@test "bench: Ctrl-C in the middle tears every pod down and keeps partial results" {
	need_vm
	interrupt_when "replace bench-replace-vm" bench replace --runs 500 --warmup 0 --format json \
		--output "$TEST_DIR/partial.json" --image "$ROOTFS"
	jq -e '.partial == true and ([.results[] | select(.name == "warm" and .metric == "replace_ms")] | length == 1)' \
		"$TEST_DIR/partial.json" >/dev/null || flunk "partial result: $(cat "$TEST_DIR/partial.json" 2>&1)"
	pgrep -f "bench-replace-vm" && flunk "the bench pod is still running"
	return 0
}

# workload_results UNIT TARGETS TESTS (after `run ... --format json`): one
# result of one run, above 0, in UNIT, for each target and test (words)
workload_results() {
	local t x
	for t in $2; do
		for x in $3; do
			jq -e --arg t "$t" --arg x "$x" --arg u "$1" '[.results[] | select(.target == $t and .test == $x and .n == 1 and .min > 0 and .unit == $u)] | length == 1' \
				<<<"$output" >/dev/null || flunk "$t $x missing: $output"
		done
	done
	echo "$output" >"$TEST_DIR/w.json"
}

@test "bench workload: host and container, syscall and fork, in the seeds' layout" {
	run --separate-stderr "$QPOD" bench workload --targets host,container --tests syscall,fork --runs 1 --duration 0.2 --format json --image "$ROOTFS"
	assert_status 0
	workload_results ops/s "host container" "syscall fork"
	run "$QPOD" report "$TEST_DIR/w.json"
	assert_status 0
	run "$QPOD" bench workload --targets host,container --tests syscall --runs 1 --duration 0.2 --image "$ROOTFS"
	assert_status 0
	assert_contains "$output" "Microbenchmarks (OpenVZ's table)"
	assert_match "$output" "container +[0-9]+ \([0-9]+-[0-9]+\) [0-9.]+%"
}

@test "bench workload: tcp_stream both ways (tcp_stream_out: the pod's client sends to a server on the host side), host and container" {
	run --separate-stderr "$QPOD" bench workload --targets host,container --tests tcp_stream,tcp_stream_out --runs 1 --duration 0.3 --format json --image "$ROOTFS"
	assert_status 0
	workload_results Mbit/s "host container" "tcp_stream tcp_stream_out"
	run "$QPOD" report "$TEST_DIR/w.json"
	assert_status 0
	assert_contains "$output" "stream out"
}

@test "bench workload: vm int, and tcp_rr through the bridge of a private netns" {
	need_vm
	run --separate-stderr "$QPOD" bench workload --targets vm --tests int,tcp_rr --runs 1 --duration 0.3 --format json --image "$ROOTFS"
	assert_status 0
	jq -e '[.results[] | select(.target == "vm" and .min > 0)] | length == 2' <<<"$output" >/dev/null ||
		flunk "vm results: $output"
	# the bridge was made in the bench's own network namespace, not here
	ip link show qpod0 >/dev/null 2>&1 && flunk "a qpod0 bridge appeared in the host's namespace"
	return 0
}

# what a vm-netns run may leave behind, none of which may be there: its
# namespace's holder (a fork of the bench: the same command line, which
# names OUT), a QEMU of a bench root that is gone, the client's veth
vm_netns_left() { # OUT
	local q parent root
	pgrep -f -- "--output $1" && echo "a process of the bench outlived it"
	for q in $(pgrep -x qemu-system-x86); do
		parent=$(awk '{ print $4 }' "/proc/$q/stat" 2>/dev/null) || continue
		root=$(tr '\0' '\n' <"/proc/$parent/cmdline" 2>/dev/null | grep -A1 -x -- --root | tail -n 1)
		case $root in /tmp/qpod-bench.*) [ -d "$root" ] || echo "QEMU $q of the removed root $root" ;; esac
	done
	ip link show qpb-cl0 2>/dev/null
	return 0
}

@test "bench workload: vm-netns, the VM pod on the CNI path (a namespace with a veth, mirrored): tcp_stream both ways and tcp_rr, the links' MTU and offloads and the NIC's backend named, nothing left" {
	need_vm
	local out=$TEST_DIR/netns.json nic
	run --separate-stderr "$QPOD" bench workload --targets container,vm-netns --tests tcp_stream,tcp_stream_out,tcp_rr,syscall \
		--runs 1 --duration 0.3 --format json --output "$out" --image "$ROOTFS"
	assert_status 0
	output=$(cat "$out")
	workload_results Mbit/s "container vm-netns" "tcp_stream tcp_stream_out"
	workload_results trans/s "container vm-netns" "tcp_rr"
	# a test without network is not vm-netns's: a row with the reason
	jq -e '[.results[] | select(.target == "vm-netns" and .test == "syscall" and .n == 0 and (.reason | test("not a network test")))] | length == 1' \
		"$out" >/dev/null || flunk "vm-netns syscall: $output"
	# the links each path crossed: the client's veth, the pod's veth and
	# qpod's tap in the pod's namespace; the bridge and the container's veth
	local link='^%s mtu [0-9]+ qlen [0-9]+ qdisc [a-z_-]+ tso (on|off) gso (on|off) gro (on|off) tx-csum (on|off) rx-csum (on|off) sg (on|off)$'
	for k in vm-netns.veth:qpb-cl0 vm-netns.pod-veth:eth0 vm-netns.pod-tun:qp-tap0 container.bridge:qpod0 container.veth:qp[0-9a-f]+; do
		jq -e --arg k "net.${k%%:*}" --arg re "$(printf "$link" "${k#*:}")" '.params[$k] | test($re)' "$out" >/dev/null ||
			flunk "param net.${k%%:*}: $(jq -c .params "$out")"
	done
	# the VM's NIC backend, as its state said; none for a container
	nic=$(if [ "$(jq -r .accel "$out")" = kvm ] && [ -c /dev/vhost-net ]; then echo vhost-net; elif [ "$(jq -r .accel "$out")" = kvm ]; then echo "userspace: no /dev/vhost-net"; else echo "userspace: TCG"; fi)
	jq -e --arg n "$nic" '.params["nic.vm-netns"] == $n and (.params | has("nic.container") | not)' "$out" >/dev/null ||
		flunk "nic params (want $nic): $(jq -c .params "$out")"
	run "$QPOD" report "$out"
	assert_status 0
	assert_match "$output" "vm-netns +[0-9]"
	assert_eq "$(vm_netns_left "$out")" "" "left by the bench"
}

@test "bench workload: vm-netns interrupted (Ctrl-C) while its pod serves, or failing to boot, leaves no namespace, veth or QEMU" {
	need_vm
	interrupt_when "run bench-net --bundle" bench workload --targets vm-netns --tests tcp_stream --runs 3 --duration 5 \
		--format json --output "$TEST_DIR/int.json" --image "$ROOTFS"
	sleep 1
	assert_eq "$(vm_netns_left "$TEST_DIR/int.json")" "" "left by the interrupted bench"
	# a VM that cannot boot: the target fails, its namespace still goes
	run --separate-stderr env QPOD_KERNEL=/no/such/vmlinux "$QPOD" bench workload --targets vm-netns --tests tcp_rr \
		--runs 1 --duration 0.2 --format json --output "$TEST_DIR/fail.json" --image "$ROOTFS"
	[ "$status" -ne 0 ] || flunk "a vm-netns pod that cannot boot must fail the bench"
	assert_contains "$stderr" "/no/such/vmlinux"
	assert_eq "$(vm_netns_left "$TEST_DIR/fail.json")" "" "left by the failed bench"
}

@test "bench workload: bad input, and a target that cannot start" {
	run --separate-stderr "$QPOD" bench workload --tests ctxsw,bogus
	assert_qpod_error
	assert_contains "$stderr" 'unknown "bogus"'
	run --separate-stderr "$QPOD" bench workload --targets host,cloud
	assert_qpod_error
	run --separate-stderr "$QPOD" bench workload --duration 0
	assert_qpod_error
	assert_contains "$stderr" "--duration must be"
	run --separate-stderr "$QPOD" bench workload --duration -1
	assert_qpod_error
	run --separate-stderr "$QPOD" bench start --tests int
	assert_qpod_error
	# no warm-up runs: refused, not ignored
	run --separate-stderr "$QPOD" bench workload --warmup 2
	assert_qpod_error
	assert_contains "$stderr" "no --warmup"
	run --separate-stderr "$QPOD" bench workload --targets host --tests syscall --runs 1 --duration 0.1 --format json --image "$ROOTFS"
	assert_status 0
	jq -e '.params.warmup == 0 and .params.duration == 0.1' <<<"$output" >/dev/null || flunk "params: $output"

	# the vm cannot start (no kernel): reported, and the host's figure is still there
	run --separate-stderr env QPOD_KERNEL=/no/such/vmlinux "$QPOD" bench workload --targets host,vm --tests syscall \
		--runs 1 --duration 0.2 --format json --image "$ROOTFS"
	[ "$status" -ne 0 ] || flunk "a failed target must make the exit status non-zero"
	assert_contains "$stderr" "vm syscall"
	assert_contains "$stderr" "/no/such/vmlinux"
	jq -e '.partial == true and ([.results[] | select(.target == "host")] | length == 1)' <<<"$output" >/dev/null ||
		flunk "host result missing: $output"
}

# has RESULT-JSON TARGET TEST METRIC UNIT: one result with one positive sample
has_result() {
	jq -e --arg t "$2" --arg x "$3" --arg m "$4" --arg u "$5" \
		'[.results[] | select(.target == $t and .test == $x and .metric == $m and .unit == $u and .n == 1 and .min > 0)] | length == 1' \
		"$1" >/dev/null || flunk "$2 $3 $4 [$5] missing: $(jq -c '[.results[] | [.target, .test, .metric, .unit, .n, .min]]' "$1")"
}

@test "bench workload: file I/O (root, volume), http and rr under load on host and container; the seeds' tables and the index" {
	run --separate-stderr "$QPOD" bench workload --targets host,container \
		--tests file_write,file_create,vol_read,vol_copy,http,rr_idle,rr_busy_pod --runs 1 --duration 0.2 \
		--format json --image "$ROOTFS"
	assert_status 0
	echo "$output" >"$TEST_DIR/w.json"
	for t in host container; do
		has_result "$TEST_DIR/w.json" "$t" file_write score MB/s
		has_result "$TEST_DIR/w.json" "$t" file_create score files/s
		has_result "$TEST_DIR/w.json" "$t" vol_read score MB/s
		has_result "$TEST_DIR/w.json" "$t" vol_copy score MB/s
		has_result "$TEST_DIR/w.json" "$t" http score req/s
		for m in p50_us p99_us; do
			has_result "$TEST_DIR/w.json" "$t" http "$m" us
			has_result "$TEST_DIR/w.json" "$t" rr_idle "$m" us
			has_result "$TEST_DIR/w.json" "$t" rr_busy_pod "$m" us
		done
	done
	# a percentile is not below the median
	jq -e '[.results[] | select(.metric == "p99_us")] as $p | [.results[] | select(.metric == "p50_us")] as $m |
		[range($p | length)] | all(. as $i | $p[$i].min >= $m[$i].min)' "$TEST_DIR/w.json" >/dev/null ||
		flunk "p99 below p50"
	# the eaters and servers are gone with their pods
	pgrep -f "intbench --duration 86400" && flunk "a CPU eater outlived the bench"
	pgrep -f "httpd -f -p" && flunk "an httpd outlived the bench"
	run "$QPOD" report "$TEST_DIR/w.json"
	assert_status 0
	assert_contains "$output" "Response time under load"
	assert_contains "$output" "HTTP (the thesis's Siege runs)"
	assert_contains "$output" "File I/O on the pod's root"
	assert_contains "$output" "File I/O on a scratch volume"
	assert_match "$output" "Index \(host = 10 for each test, geometric mean per target\): host 10.00 \(7 tests\), container [0-9]+\.[0-9]+ \(7 tests\)"
	run "$QPOD" report --format html "$TEST_DIR/w.json"
	assert_status 0
	assert_contains "$output" "<h3>In the seeds' layout</h3>"
	assert_contains "$output" "Index (host = 10"
}

@test "bench workload: vm file I/O on its 9p root and a 9p volume, and http" {
	need_vm
	run --separate-stderr "$QPOD" bench workload --targets vm --tests file_write,vol_create,http --runs 1 \
		--duration 0.2 --format json --image "$ROOTFS"
	assert_status 0
	echo "$output" >"$TEST_DIR/w.json"
	has_result "$TEST_DIR/w.json" vm file_write score MB/s
	has_result "$TEST_DIR/w.json" vm vol_create score files/s
	has_result "$TEST_DIR/w.json" vm http score req/s
	has_result "$TEST_DIR/w.json" vm http p99_us us
}

@test "bench consolidate: container pods, N = 1 and 2, in OpenVZ's layout and as curves" {
	command -v xmllint >/dev/null || skip "xmllint not installed (tools/deps.sh installs libxml2-utils)"
	run --separate-stderr "$QPOD" bench consolidate --mode container --pods 2 --duration 0.3 --format json --image "$ROOTFS"
	assert_status 0
	echo "$output" >"$TEST_DIR/c.json"
	jq -e '.scenario == "consolidate" and .mode == "container" and .stop_reason == "max" and .params.pods == 2 and
		.params.reserve_mb > 0' "$TEST_DIR/c.json" >/dev/null || flunk "header: $output"
	for m in aggregate_int_dmips aggregate_stream_gbs aggregate_rr_rate worst_p50_us worst_p99_us; do
		jq -e --arg m "$m" '[.results[] | select(.name == "container" and .metric == $m and .n == 2 and .min > 0)] | length == 1' \
			"$TEST_DIR/c.json" >/dev/null || flunk "$m missing: $output"
	done
	pgrep -f "bench-cons-" && flunk "a consolidation pod outlived the bench"
	run "$QPOD" report "$TEST_DIR/c.json"
	assert_status 0
	assert_contains "$output" "Consolidation (OpenVZ's vConsolidate / LAMP)"
	assert_match "$output" "container pods"
	run "$QPOD" report --format svg --output "$TEST_DIR/svg" "$TEST_DIR/c.json"
	assert_status 0
	assert_contains "$output" "aggregate_int_dmips"
	xmllint --noout "$TEST_DIR"/svg/*.svg
}

@test "bench consolidate: one vm pod" {
	need_vm
	run --separate-stderr "$QPOD" bench consolidate --mode vm --pods 1 --duration 0.3 --format json --image "$ROOTFS"
	assert_status 0
	jq -e '[.results[] | select(.name == "vm" and .n == 1 and .min > 0)] | length == 5' <<<"$output" >/dev/null ||
		flunk "vm results: $output"
	pgrep -f "bench-cons-vm" && flunk "a consolidation vm outlived the bench"
	return 0
}

@test "bench consolidate: bad input" {
	run --separate-stderr "$QPOD" bench consolidate --runs 2
	assert_qpod_error
	assert_contains "$stderr" "no --runs, --warmup or --baseline"
	run --separate-stderr "$QPOD" bench consolidate --pods 0
	assert_qpod_error
	assert_contains "$stderr" "--pods must be 1..64"
	run --separate-stderr "$QPOD" bench consolidate --pods 65
	assert_qpod_error
	run --separate-stderr "$QPOD" bench start --pods 2
	assert_qpod_error
	assert_contains "$stderr" "--pods is for bench consolidate"
	run --separate-stderr "$QPOD" bench start --duration 1
	assert_qpod_error
	assert_contains "$stderr" "--duration is for bench workload and consolidate"
	run --separate-stderr "$QPOD" bench consolidate --tests int
	assert_qpod_error
}

# ---- bench cri: pods through containerd's CRI -----------------------------------

need_cri() {
	local b
	for b in containerd ctr containerd-shim-runc-v2 runc protoc unshare; do
		command -v "$b" >/dev/null || skip "$b is not installed (tools/deps.sh)"
	done
	/usr/bin/python3 -c 'import grpc, google.protobuf' 2>/dev/null || skip "python3-grpcio is not installed"
	[ -x /usr/lib/cni/bridge ] || skip "CNI plugins are not installed (containernetworking-plugins)"
}

# What a bench cri run could leave: its private dir (/tmp/qpod-cri.*), the
# processes naming it (containerd, shims, qpod, QEMU), mounts under it (the
# pods' rootfs, shm, network namespaces), the pods' cgroup parent
# (qpod-bench-*), /run/containerd if it was not there before. One line each.
cri_leftovers() {
	local d m
	for d in /tmp/qpod-cri.*; do
		[ -e "$d" ] || continue
		grep -qxF "$d" "$TEST_DIR/cri-dirs-before" 2>/dev/null && continue
		echo "dir left: $d"
		grep -laF "$d" /proc/[0-9]*/cmdline 2>/dev/null | sed 's|^|process left: |'
		awk -v p="$d" 'index($5, p) == 1 { print "mount left: " $5 }' /proc/self/mountinfo
	done
	for m in /sys/fs/cgroup/*/qpod-bench-* /sys/fs/cgroup/qpod-bench-*; do
		[ -e "$m" ] || continue
		# another bench cri's, running beside this test
		grep -qxF "/tmp/qpod-cri.${m##*/qpod-bench-}" "$TEST_DIR/cri-dirs-before" && continue
		echo "cgroup left: $m"
	done
	# /run/containerd/s is every containerd 1.6's: only when no other runs
	[ -e "$TEST_DIR/had-run-containerd" ] || [ -s "$TEST_DIR/cri-dirs-before" ] || [ ! -e /run/containerd ] ||
		pgrep -x containerd >/dev/null || echo "/run/containerd left"
	return 0
}

# shims of a bench cri that started after cri_before
new_cri_shims() {
	local f d
	for f in $(grep -laF containerd-shim /proc/[0-9]*/cmdline 2>/dev/null); do
		d=$(tr '\0' '\n' <"$f" 2>/dev/null | grep -o '^/tmp/qpod-cri\.[^/]*' | head -n 1)
		[ -n "$d" ] && ! grep -qxF "$d" "$TEST_DIR/cri-dirs-before" && echo "$f"
	done
	return 0
}

cri_before() {
	ls -d /tmp/qpod-cri.* >"$TEST_DIR/cri-dirs-before" 2>/dev/null || :
	[ -e /run/containerd ] && touch "$TEST_DIR/had-run-containerd"
	return 0
}

@test "bench cri: runc, qpod and qpod-vm through a private containerd: rows, phases, report, nothing left" {
	need_cri
	need_vm
	cri_before
	run --separate-stderr "$QPOD" bench cri --runs 1 --warmup 0 --format json --output "$TEST_DIR/cri.json" --image "$ROOTFS"
	assert_status 0
	jq -e '.scenario == "cri" and .params.handlers == "runc,qpod,qpod-vm" and .params.cri_socket == "private containerd" and (.partial | not)' \
		"$TEST_DIR/cri.json" >/dev/null || flunk "header: $(jq -c '{scenario, params, partial}' "$TEST_DIR/cri.json")"
	# every handler: start and stop of one pod, memory of pods of 1, 2 and 4 containers
	for name in runc qpod qpod-vm; do
		for metric in start_ms stop_ms mem_1c_mb mem_2c_mb mem_4c_mb pss_1c_mb pss_2c_mb pss_4c_mb; do
			jq -e --arg n "$name" --arg m "$metric" \
				'[.results[] | select(.name == $n and .metric == $m and .n == 1 and (.samples | length) == 1)] | length == 1' \
				"$TEST_DIR/cri.json" >/dev/null || flunk "$name $metric missing: $(jq -c .results "$TEST_DIR/cri.json")"
		done
		# the pod's processes, the shim's included, have a PSS
		jq -e --arg n "$name" '[.results[] | select(.name == $n and (.metric | test("^pss_")) and .min > 1)] | length == 3' \
			"$TEST_DIR/cri.json" >/dev/null || flunk "$name pss: $(jq -c .results "$TEST_DIR/cri.json")"
		# the runtime's own share and the rest, from the kernel's process events
		jq -e --arg n "$name" '[.results[] | select(.name == $n and (.metric == "runtime_ms" or .metric == "containerd_shim_ms") and .n == 1 and .min > 0)] | length == 2' \
			"$TEST_DIR/cri.json" >/dev/null || flunk "$name runtime_ms, containerd_shim_ms: $(jq -c .results "$TEST_DIR/cri.json")"
		# the start's phases only (the report stacks them into the start)
		jq -e --arg n "$name" '.phases[$n] | .run_pod_sandbox > 0 and .create_container > 0 and .start_container > 0 and
			(has("wait_running")) and (keys | length) == 4' "$TEST_DIR/cri.json" >/dev/null ||
			flunk "$name phases: $(jq -c .phases "$TEST_DIR/cri.json")"
	done
	# runc first: the ratios' base
	jq -e '.results[0].name == "runc"' "$TEST_DIR/cri.json" >/dev/null || flunk "runc is not the first row"
	run "$QPOD" report "$TEST_DIR/cri.json"
	assert_status 0
	assert_contains "$output" "qpod-vm"
	assert_contains "$output" "run_pod_sandbox"
	run "$QPOD" report --format html --output "$TEST_DIR/cri.html" "$TEST_DIR/cri.json"
	assert_status 0
	grep -q "Pod start through the CRI" "$TEST_DIR/cri.html" || flunk "no CRI section in the page"
	grep -q "<svg" "$TEST_DIR/cri.html" || flunk "no chart in the page"
	no_leftovers cri_leftovers
}

@test "bench cri: --parallel 2 starts the pods at once: per-pod starts, p90 and wall" {
	need_cri
	cri_before
	run --separate-stderr "$QPOD" bench cri --parallel 2 --handlers qpod,runc --format json --image "$ROOTFS"
	assert_status 0
	for name in runc qpod; do
		jq -e --arg n "$name" '[.results[] | select(.name == $n)] as $r |
			($r[] | select(.metric == "start_ms") | .n == 2) and ($r[] | select(.metric == "stop_ms") | .n == 2) and
			($r[] | select(.metric == "start_p90_ms") | .n == 1) and ($r[] | select(.metric == "wall_ms") | .n == 1) and
			($r[] | select(.metric == "runtime_ms") | .n == 2 and .min > 0)' \
			<<<"$output" >/dev/null || flunk "$name rows: $output"
	done
	jq -e '.params.parallel == 2 and .params.runs == 1 and .params.handlers == "runc,qpod"' <<<"$output" >/dev/null ||
		flunk "params: $(jq -c .params <<<"$output")"
	no_leftovers cri_leftovers
}

@test "bench cri --spares 1: qpod-vm sandboxes from the handler's spares; no spare, holder or QEMU is left" {
	need_cri
	need_vm
	cri_before
	run --separate-stderr "$QPOD" bench cri --runs 2 --warmup 0 --spares 1 --handlers runc,qpod-vm --format json --image "$ROOTFS"
	assert_status 0
	jq -e '.params.spares == 1 and ([.results[] | select(.name == "qpod-vm" and .metric == "start_ms" and .n == 2)] | length == 1)' \
		<<<"$output" >/dev/null || flunk "result: $(jq -c '{params, results: [.results[] | {name, metric, n}]}' <<<"$output")"
	no_leftovers cri_leftovers
	run --separate-stderr "$QPOD" bench cri --spares 0
	assert_status 125
	assert_contains "$stderr" "--spares must be 1..32"
}

@test "bench cri: SIGTERM in the middle removes pods, containerd and its dir, and keeps what was measured" {
	need_cri
	cri_before
	"$QPOD" bench cri --runs 200 --warmup 0 --handlers runc,qpod --format json --output "$TEST_DIR/part.json" \
		--image "$ROOTFS" 2>"$TEST_DIR/err" &
	local pid=$! i shims=
	BG_PIDS+=("$pid")
	# until the bench's shims run: its pods are starting
	for i in $(seq 1 600); do
		shims=$(new_cri_shims)
		[ -n "$shims" ] && break
		sleep 0.1
	done
	[ -n "$shims" ] || flunk "no shim of the bench appeared: $(cat "$TEST_DIR/err")"
	sleep 5
	kill -TERM "$pid"
	local status=0
	wait "$pid" || status=$?
	assert_eq "$status" 125 "exit status"
	assert_contains "$(cat "$TEST_DIR/err")" "qpod: bench cri: interrupted"
	jq -e '.partial and ([.results[] | select(.metric == "start_ms")] | length) >= 1' "$TEST_DIR/part.json" >/dev/null ||
		flunk "partial result: $(cat "$TEST_DIR/part.json")"
	no_leftovers cri_leftovers
}

@test "bench cri: an endpoint that does not answer, an unknown handler, bad options: one line, nothing left" {
	need_cri
	cri_before
	# a socket nobody listens on
	/usr/bin/python3 -c 'import socket, sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$TEST_DIR/dead.sock"
	run --separate-stderr "$QPOD" bench cri --runs 1 --cri-socket "$TEST_DIR/dead.sock" --image "$ROOTFS"
	assert_qpod_error
	assert_contains "$stderr" "qpod: bench cri: CRI endpoint $TEST_DIR/dead.sock does not answer"
	[ -z "$output" ] || flunk "a result for nothing measured: $output"
	run --separate-stderr "$QPOD" bench cri --runs 1 --cri-socket "$TEST_DIR/none.sock" --image "$ROOTFS"
	assert_qpod_error
	assert_contains "$stderr" "no such socket"
	# the private containerd starts, has no such handler, and goes
	run --separate-stderr "$QPOD" bench cri --runs 1 --handlers runc,nosuch --image "$ROOTFS"
	assert_qpod_error
	assert_contains "$stderr" 'handler "nosuch" is not configured'
	assert_contains "$stderr" "configured: runc, qpod, qpod-vm"
	no_leftovers cri_leftovers
	run --separate-stderr "$QPOD" bench cri --handlers 'runc,,qpod'
	assert_qpod_error
	assert_contains "$stderr" "empty entry"
	run --separate-stderr "$QPOD" bench cri --mode vm
	assert_qpod_error
	assert_contains "$stderr" "bench cri: no --mode"
	run --separate-stderr "$QPOD" bench start --parallel 2
	assert_qpod_error
	assert_contains "$stderr" "are for bench cri"
	run --separate-stderr "$QPOD" bench cri --parallel 0
	assert_qpod_error
	assert_contains "$stderr" "--parallel must be"
}
