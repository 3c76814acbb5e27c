#!/usr/bin/env bats
# tests/cli/state_trust.bats — the state root and what is read from it are
# trusted only when they are the caller's (issue 15): a root or state file
# another user could write is refused; a pid or cgroup named by a state is
# acted on only when it is the pod's own; damaged state is shown as broken
# and never makes gc kill what it cannot identify.

load helpers

setup() {
	setup_common
	VICTIM_PID=
	VICTIM_CG=
	NS=
}

teardown() {
	[ -n "$VICTIM_PID" ] && kill -KILL "$VICTIM_PID" 2>/dev/null && wait "$VICTIM_PID" 2>/dev/null
	if [ -n "$VICTIM_CG" ] && [ -d "$VICTIM_CG" ]; then
		rmdir "$VICTIM_CG" 2>/dev/null
	fi
	if [ -n "${NS:-}" ]; then
		for id in $(cd "$TEST_DIR/cwd/rel" 2>/dev/null && ls); do
			nsenter --net="/run/netns/$NS" "$QPOD" --root "$TEST_DIR/cwd/rel" delete --force "$id" >/dev/null 2>&1
		done
		ip netns del "$NS" 2>/dev/null
	fi
	if [ -d "$ROOT" ]; then
		chown 0:0 "$ROOT"
		chmod 0700 "$ROOT"
		rm -rf "$ROOT/fake"
		# a test that failed with a damaged state: repair it, so that the
		# teardown's delete --force finds the pod and its cgroup
		local good
		for good in "$ROOT"/*/.state.good; do
			[ -f "$good" ] && rm -f "${good%/*}/state.json" && mv "$good" "${good%/*}/state.json"
		done
	fi
	teardown_common
}

# A process that is not qpod's, in a cgroup of its own: what a forged state
# would name.  $VICTIM_PID, $VICTIM_CG (a host dir), $VICTIM_CG_PATH (as a
# state names it), $VICTIM_START (field 22 of its stat).
start_victim() {
	sleep 600 </dev/null >/dev/null 2>&1 3>&- &
	VICTIM_PID=$!
	local base=$CGROUP_FS/pids
	[ -d "$base" ] || base=$CGROUP_FS # pure v2
	VICTIM_CG_PATH=$PREFIX-victim
	VICTIM_CG=$base/$VICTIM_CG_PATH
	mkdir "$VICTIM_CG"
	echo "$VICTIM_PID" >"$VICTIM_CG/cgroup.procs"
	local rest fields
	rest=$(cat "/proc/$VICTIM_PID/stat")
	# shellcheck disable=SC2206
	fields=(${rest##*) })
	VICTIM_START=${fields[19]}
}

# plant_pod ID CGROUP [CGROUPS_PATH]: a pod dir as a forger would write it:
# a state naming the victim, a config (with linux.cgroupsPath when given)
plant_pod() {
	local id=$1 cg=$2 cgp=${3:-}
	mkdir -p "$ROOT/$id"
	touch "$ROOT/$id/.qpod-pod"
	if [ -n "$cgp" ]; then
		make_bundle "$TEST_DIR/fb" ".linux.cgroupsPath = \"$cgp\""
	else
		make_bundle "$TEST_DIR/fb"
	fi
	cp "$TEST_DIR/fb/config.json" "$ROOT/$id/config.json"
	jq -n --arg id "$id" --arg cg "$cg" --argjson pid "$VICTIM_PID" --argjson start "$VICTIM_START" \
		--arg rootfs "$ROOTFS" \
		'{id: $id, status: "running", pid: $pid, pid_start: $start, bundle: null,
		  rootfs: $rootfs, mode: "container", created: "2026-01-01T00:00:00Z",
		  cgroup: $cg, owner: "0"}' >"$ROOT/$id/state.json"
}

assert_victim_untouched() {
	kill -0 "$VICTIM_PID" 2>/dev/null || flunk "the victim process was killed"
	[ -d "$VICTIM_CG" ] || flunk "the victim's cgroup was removed"
}

@test "a state root owned by another user, or writable by others, is refused with one line" {
	mkdir -p "$ROOT"
	chown nobody "$ROOT"
	run --separate-stderr qp list
	assert_qpod_error 125
	assert_match "$stderr" '^qpod: list: state root ".*" is owned by uid [0-9]+, not by the caller \(uid 0\): refused$'
	chown 0 "$ROOT"
	chmod 0777 "$ROOT"
	run --separate-stderr qp list
	assert_qpod_error 125
	assert_contains "$stderr" "is writable by group or others (mode 0777): refused"
	chmod 0755 "$ROOT"
	run --separate-stderr qp list
	assert_status 0
}

@test "the issue's forgery: nobody plants fake/state.json in a 0777 root; delete --force kills nothing, removes nothing" {
	start_victim
	mkdir -p "$ROOT"
	chmod 0777 "$ROOT"
	plant_pod fake "$VICTIM_CG_PATH" "$VICTIM_CG_PATH"
	chown -R nobody "$ROOT"
	run --separate-stderr qp delete --force fake
	assert_qpod_error 125
	assert_contains "$stderr" "refused"
	assert_victim_untouched
	# the same files in a private root, but owned by another user
	chown 0 "$ROOT"
	chmod 0700 "$ROOT"
	run --separate-stderr qp delete --force fake
	assert_qpod_error 125
	assert_contains "$stderr" "owned by uid"
	assert_victim_untouched
	# group-writable state.json
	chown -R 0 "$ROOT"
	chmod g+w "$ROOT/fake/state.json"
	run --separate-stderr qp delete --force fake
	assert_qpod_error 125
	assert_contains "$stderr" "state.json is writable by group or others"
	assert_victim_untouched
}

@test "a state naming a pid outside the pod's cgroup, or a cgroup not the pod's, is not acted on" {
	start_victim
	mkdir -p "$ROOT"
	# the pod's own cgroup is qpod/fake: the victim's is refused by name
	plant_pod fake "$VICTIM_CG_PATH"
	run --separate-stderr qp delete --force fake
	assert_qpod_error 125
	assert_contains "$stderr" "state.json names cgroup \"$VICTIM_CG_PATH\", not the pod's own \"qpod/fake\""
	assert_victim_untouched
	# the right cgroup name, but the victim is not in it: not the pod's pid
	plant_pod fake qpod/fake
	run --separate-stderr qp state fake
	assert_status 0
	assert_eq "$(jq -r .status <<<"$output")" stopped "status of a pod whose pid is not its own"
	run --separate-stderr qp delete --force fake
	assert_status 0
	assert_victim_untouched
	[ ! -e "$ROOT/fake" ] || flunk "the pod dir is still there"
}

@test "a relative --root is resolved once, absolutely: a detached vm pod's lease is under the same root as its state" {
	need_vm
	command -v python3 >/dev/null || skip "python3 is not installed (the fake QEMU)"
	NS=qpst$$$BATS_TEST_NUMBER
	ip netns add "$NS"
	mkdir -p "$TEST_DIR/cwd"
	make_bundle "$BUNDLE" '.annotations = {"qpod.mode": "vm", "qpod.vm.boot": "cold", "qpod.net": "bridge"}'
	cd "$TEST_DIR/cwd"
	# a guest that says hello: create completes (the VM waits for RUN)
	# (the monitor keeps the caller's stdio: files, not bats' pipes)
	env QPOD_QEMU="$BATS_TEST_DIRNAME/fake-qemu.py" FAKE_GUEST=hello QPOD_KERNEL="$VM_KERNEL" \
		QPOD_ACCEL=tcg nsenter --net="/run/netns/$NS" "$QPOD" --root rel create "$ID" --bundle "$BUNDLE" \
		</dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err" 3>&- ||
		flunk "create failed: $(cat "$TEST_DIR/pod.err")"
	cd /
	[ -d "$TEST_DIR/cwd/rel/$ID" ] || flunk "no state under the relative root"
	grep -q "$ID" "$TEST_DIR/cwd/rel/.net/ipam" || flunk "the lease is not under the same root:" \
		"$(ls -la "$TEST_DIR/cwd/rel/.net" /rel/.net 2>&1)"
	nsenter --net="/run/netns/$NS" "$QPOD" --root "$TEST_DIR/cwd/rel" delete --force "$ID"
	nsenter --net="/run/netns/$NS" "$QPOD" --root "$TEST_DIR/cwd/rel" gc >/dev/null
	ip netns del "$NS"
	NS=
	ROOT=$TEST_DIR/cwd/rel # for the teardown's checks
}

# damage_state ID HOW: replace the pod's state.json (kept in .state.good)
damage_state() {
	local f=$ROOT/$1/state.json
	[ -f "$ROOT/$1/.state.good" ] || cp "$f" "$ROOT/$1/.state.good"
	rm -f "$f"
	case $2 in
	truncated) head -c 40 "$ROOT/$1/.state.good" >"$f" ;;
	garbage) printf '\001\002 not json at all' >"$f" ;;
	symlink) ln -s "$ROOT/$1/.state.good" "$f" ;;
	huge) head -c 100M /dev/zero | tr '\0' ' ' >"$f" ;;
	esac
}

@test "unreadable state (truncated, garbage, symlink, 100 MB): list shows the pod broken, parseable; gc kills and removes nothing of it" {
	make_bundle "$BUNDLE" "$(helper_args sleep 120)"
	qp_detached run -d "$ID" --bundle "$BUNDLE"
	make_bundle "$TEST_DIR/b2" "$(helper_args sleep 120) | .linux.cgroupsPath = \"/qpod/$ID2-custom\""
	qp_detached run -d "$ID2" --bundle "$TEST_DIR/b2"
	local pid1 pid2 how id
	pid1=$(pod_field "$ID" pid)
	pid2=$(pod_field "$ID2" pid)
	for how in truncated garbage symlink huge; do
		damage_state "$ID" "$how"
		damage_state "$ID2" "$how"
		run --separate-stderr qp list --format json
		assert_status 0
		for id in "$ID" "$ID2"; do
			assert_eq "$(jq -r --arg id "$id" '.[] | select(.id == $id) | .status' <<<"$output")" broken "$how: $id in list --format json"
		done
		run --separate-stderr qp list
		assert_status 0
		assert_match "$(grep "^$ID " <<<"$output")" "^$ID +0 +broken " "$how: the table row"
		run --separate-stderr qp gc
		assert_status 0
		assert_contains "$output" "left alone: pod \"$ID\""
		assert_contains "$output" "removed 0 abandoned pod(s)"
		kill -0 "$pid1" || flunk "$how: gc killed the pod with the default cgroup"
		kill -0 "$pid2" || flunk "$how: gc killed the pod with a custom cgroup"
		[ -d "$ROOT/$ID2" ] || flunk "$how: gc removed the state dir of a pod it cannot read"
		[ -n "$(pod_cgroup_dirs "$ID2-custom")" ] || flunk "$how: the custom cgroup is gone"
	done
	for id in "$ID" "$ID2"; do
		rm -f "$ROOT/$id/state.json"
		mv "$ROOT/$id/.state.good" "$ROOT/$id/state.json"
	done
	assert_eq "$(pod_field "$ID2" status)" running "after the repair"
}

@test "a pod whose creator died mid-create reads as stopped in state, list and start alike" {
	make_bundle "$BUNDLE" "$(helper_args true)"
	qp create "$ID" --bundle "$BUNDLE" </dev/null >/dev/null 2>&1
	# what a creator killed before it finished leaves: status creating
	jq '.status = "creating" | .pid = 0' "$ROOT/$ID/state.json" >"$TEST_DIR/s.json"
	cp "$TEST_DIR/s.json" "$ROOT/$ID/state.json"
	assert_eq "$(pod_field "$ID" status)" stopped "state"
	assert_eq "$(qp list --format json | jq -r '.[0].status')" stopped "list"
	run --separate-stderr qp start "$ID"
	assert_qpod_error 125
	assert_contains "$stderr" "is stopped, not created"
}
