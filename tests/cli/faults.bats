#!/usr/bin/env bats
# tests/cli/faults.bats — fault injection and a soak of bounded size (issue
# 15): qpod, a VM pod's monitor or its QEMU SIGKILLed at random points of
# create, start, run and delete, in both modes; parallel lifecycle loops in
# both modes; a full state file system.  After each: `list` and `gc` work
# and agree, and once the client's recovery (`delete --force`) ran nothing
# is left (state, process, cgroup, mount, tap/veth, lease), while a pod of
# another root, running beside them on the same bridge, is untouched.
# Everything runs in a private network namespace.  The random points come
# from QPOD_FAULT_SEED (printed on failure); the size is fixed (~1.5 min).

load helpers

setup() {
	setup_common
	NS=qpf$$$BATS_TEST_NUMBER
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	SEED=${QPOD_FAULT_SEED:-$((RANDOM * 32768 + RANDOM))}
	RANDOM=$SEED
	TMPFS=
	# the other root's pod: a container on the same bridge, another ID prefix
	OTHER=$(mktemp -d /tmp/qpf-other.XXXXXX)
	OTHER_ID=qo$(printf '%04x%04x' "$RANDOM" "$$")
	nq "$OTHER" run -d --name "$OTHER_ID" --net bridge "$ROOTFS" -- sleep 600 </dev/null >/dev/null 2>&1 ||
		flunk "the other root's pod did not start"
	OTHER_PID=$(nq "$OTHER" state "$OTHER_ID" | jq -r .pid)
	OTHER_LINKS=$(links)
	OTHER_LEASES=$(cat "$OTHER/.net/ipam")
}

teardown() {
	echo "QPOD_FAULT_SEED=${SEED:-}" >&2
	if [ -n "${OTHER:-}" ]; then
		nq "$OTHER" delete --force "$OTHER_ID" >/dev/null 2>&1
		rm -rf "$OTHER"
	fi
	if [ -n "$TMPFS" ]; then
		local id
		for id in $(ls "$ROOT"); do fq delete --force "$id" >/dev/null 2>&1; done
		umount "$TMPFS" 2>/dev/null
	fi
	teardown_common
	if [ -n "${NS:-}" ]; then ip netns del "$NS" 2>/dev/null || true; fi
}

nq() { # ROOT ARGS...: qpod in the test's netns
	local r=$1
	shift
	nsenter --net="/run/netns/$NS" "$QPOD" --root "$r" "$@"
}

fq() { nq "$ROOT" "$@"; }

links() { # the netns's link names, sorted, on one line
	ip -n "$NS" -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort | tr '\n' ' '
}

other_intact() {
	kill -0 "$OTHER_PID" 2>/dev/null || flunk "the other root's pod died ($1)"
	assert_eq "$(nq "$OTHER" state "$OTHER_ID" | jq -r .status)" running "the other root's pod ($1)"
	assert_eq "$(cat "$OTHER/.net/ipam")" "$OTHER_LEASES" "the other root's leases ($1)"
	nsenter --net="/run/netns/$NS" "$QPOD" --root "$OTHER" exec "$OTHER_ID" true ||
		flunk "the other root's pod no longer execs ($1)"
}

# the common leftovers but the test's own tmpfs root
leftovers() {
	_leftovers | grep -v '^mount left: .* - tmpfs qpod-faults ' || true
}

# recover WHAT ID...: what a client does after a crash, then nothing of
# this root may be left and the other root must be as it was
recover() {
	local what=$1 id
	shift
	run --separate-stderr fq list --format json
	assert_status 0
	jq -e 'type == "array"' <<<"$output" >/dev/null || flunk "list is not a JSON array after $what: $output"
	local running
	running=$(jq -r '.[] | select(.status == "running") | .id' <<<"$output")
	run --separate-stderr fq gc
	[ "$status" -eq 0 ] || flunk "gc failed after $what: $stderr"
	# gc leaves running pods alone (one may stop on its own meanwhile, its
	# QEMU killed: it is still listed then, stopped)
	local listed
	listed=$(fq list --quiet)
	for id in $running; do
		grep -qx -- "$id" <<<"$listed" || flunk "gc removed running pod $id after $what"
	done
	for id in "$@"; do
		run --separate-stderr fq delete --force "$id"
		[ "$status" -eq 0 ] || [[ $stderr == *"does not exist"* ]] ||
			flunk "delete --force $id after $what: $stderr"
	done
	assert_eq "$(fq list --quiet)" "" "pods listed after $what"
	no_leftovers leftovers || flunk "left behind after $what (seed $SEED)"
	assert_eq "$(links)" "$OTHER_LINKS" "links after $what"
	assert_eq "$(cat "$ROOT/.net/ipam" 2>/dev/null)" "" "leases after $what"
	other_intact "$what"
}

# victims KIND ID CLIENT: the pids to kill — qpod (the client), the
# monitor (a qpod process of the pod other than the client), qemu
victims() {
	local kind=$1 id=$2 client=$3 p
	case $kind in
	qpod) echo "$client" ;;
	monitor | qemu)
		for p in $(pgrep -f -- "$id"); do
			[ "$p" = "$client" ] && continue
			case "$(cat "/proc/$p/comm" 2>/dev/null)" in
			qpod | memfd:qpod) [ "$kind" = monitor ] && echo "$p" ;;
			qemu-system*) [ "$kind" = qemu ] && echo "$p" ;;
			esac
		done
		;;
	esac
	return 0
}

# the qpod process under PID (the background job's subshell, timeout(1),
# nsenter, which execs qpod in place); none if it has not started or is gone
qpod_under() {
	local p
	for p in $(pgrep -P "$1"); do
		# (qpod re-executes itself from a memfd at times: util/exe_guard.h)
		if [[ "$(cat "/proc/$p/comm" 2>/dev/null)" == @(qpod|memfd:qpod) ]]; then
			echo "$p"
			return 0
		fi
		qpod_under "$p" && return 0
	done
	return 1
}

# kill_at KIND MODE STEP MAXDELAY_MS: STEP (create, start, run, run-d,
# delete, exec, replace: the last three of a running pod) of a fresh pod in MODE; after a random delay SIGKILL KIND; then
# recover
kill_at() {
	local kind=$1 mode=$2 step=$3 max=$4 id=$PREFIX-$RANDOM delay client
	local vm=() bundle_filter="$(helper_args sleep 600) | .process.terminal = false"
	if [ "$mode" = vm ]; then
		vm=(--mode vm --net bridge)
		bundle_filter="$bundle_filter | .annotations[\"qpod.mode\"] = \"vm\""
	fi
	delay=$((RANDOM % max))
	case $step in
	create | start) make_bundle "$BUNDLE" "$bundle_filter" ;;
	delete | exec | replace) fq run -d --name "$id" "${vm[@]}" "$ROOTFS" -- sleep 600 </dev/null >/dev/null 2>&1 ||
		flunk "run -d before the $step failed" ;;
	esac
	if [ "$step" = start ]; then
		fq create --bundle "$BUNDLE" "$id" </dev/null >/dev/null 2>&1 || flunk "create before start"
	fi
	case $step in
	create) timeout -k 5 90 nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" create --bundle "$BUNDLE" "$id" ;;
	start) timeout -k 5 90 nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" start "$id" ;;
	run) timeout -k 5 90 nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" run --rm --name "$id" "${vm[@]}" "$ROOTFS" -- sleep 2 ;;
	run-d) timeout -k 5 90 nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" run -d --name "$id" "${vm[@]}" "$ROOTFS" -- sleep 600 ;;
	delete) timeout -k 5 90 nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" delete --force "$id" ;;
	exec) timeout -k 5 90 nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" exec "$id" sh -c 'echo started; sleep 2' ;;
	replace) timeout -k 5 90 nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" replace "$id" -- sleep 600 ;;
	esac </dev/null >"$TEST_DIR/client.out" 2>&1 3>&- &
	client=$!
	sleep "$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 1000 }')"
	local qpod_pid v
	qpod_pid=$(qpod_under "$client" || true)
	v=$(victims "$kind" "$id" "${qpod_pid:-none}")
	# shellcheck disable=SC2086 # pids
	if [ -n "$v" ]; then kill -KILL $v 2>/dev/null || true; fi
	local rc=0
	wait "$client" || rc=$?
	[ "$rc" -ne 124 ] && [ "$rc" -ne 137 ] || [ "$kind" = qpod ] ||
		flunk "$step ($mode) hung after $kind was killed at ${delay} ms: $(cat "$TEST_DIR/client.out")"
	recover "SIGKILL of $kind at ${delay} ms into $step ($mode)" "$id"
}

@test "faults, containers: qpod killed at random points of create, start, run, exec and delete leaves nothing once recovered" {
	local step
	for step in create start run run-d delete exec create start run-d delete exec create start; do
		kill_at qpod container "$step" 20
	done
}

@test "faults, VM pods: qpod, the monitor or QEMU killed at random points of create, start, run, exec, replace and delete leaves nothing once recovered" {
	need_vm
	vm_env
	local kinds=(qpod monitor qemu)
	kill_at qpod vm run-d 1500
	kill_at monitor vm run-d 1500
	kill_at qemu vm run-d 1500
	kill_at "${kinds[RANDOM % 3]}" vm create 1500
	kill_at "${kinds[RANDOM % 3]}" vm start 300
	kill_at "${kinds[RANDOM % 3]}" vm run 1500
	kill_at "${kinds[RANDOM % 3]}" vm delete 150
	kill_at "${kinds[RANDOM % 3]}" vm exec 800
	kill_at "${kinds[RANDOM % 3]}" vm replace 800
}

@test "faults, templates: qpod or QEMU killed while a template is made leaves no half-made template; the next maker makes it whole" {
	need_vm
	vm_env
	local tcache=$TEST_DIR/cache kind client delay v
	mkdir -p "$tcache"
	ln -s "$(dirname "$(dirname "$VM_KERNEL")")" "$tcache/kernel"
	for kind in qpod qemu qpod; do
		QPOD_CACHE=$tcache timeout -k 5 90 "$QPOD" --root "$ROOT" template create --memory 160M \
			</dev/null >"$TEST_DIR/t.out" 2>&1 3>&- &
		client=$!
		delay=$((300 + RANDOM % 1200))
		sleep "$(awk -v d="$delay" 'BEGIN { printf "%.3f", d / 1000 }')"
		if [ "$kind" = qpod ]; then
			v=$(qpod_under "$client" || true)
		else
			v=$(pgrep -f -- "$tcache/templates/" | while read -r p; do
				[[ "$(cat "/proc/$p/comm" 2>/dev/null)" == qemu-system* ]] && echo "$p"; done || true)
		fi
		if [ -n "$v" ]; then kill -KILL $v 2>/dev/null || true; fi
		wait "$client" || true
		# QEMU dies with its maker; nothing half-made stays in the cache
		no_leftovers leftovers || flunk "left behind after killing the template's $kind at $delay ms"
		local stray
		stray=$(sleep 0.2; cd "$tcache/templates" && ls -A | grep -v -E '^[0-9a-f]{16}(\.lock|\.failed)?$' || true)
		if [ -n "$stray" ]; then
			run --separate-stderr env QPOD_CACHE="$tcache" "$QPOD" --root "$ROOT" template create --memory 160M
			assert_status 0
			stray=$(cd "$tcache/templates" && ls -A | grep -v -E '^[0-9a-f]{16}(\.lock|\.failed)?$' || true)
			assert_eq "$stray" "" "a killed maker's files after the next making (kill of $kind at $delay ms)"
		fi
		QPOD_CACHE=$tcache "$QPOD" template list | jq -r .key | while read -r k; do
			QPOD_CACHE=$tcache "$QPOD" template rm "$k" >/dev/null
		done
	done
	# and a clone of a template made after all that works
	run --separate-stderr env QPOD_CACHE="$tcache" "$QPOD" --root "$ROOT" run --rm --mode vm --boot template --memory 160M "$ROOTFS" -- echo clone-ok
	assert_status 0
	assert_eq "$output" clone-ok "a clone after the faults"
}

# loop MODE N TAG: N lifecycles (run -d on the bridge, exec, kill, delete)
lifecycle_loop() {
	local mode=$1 n=$2 tag=$3 i id
	for ((i = 0; i < n; i++)); do
		id=$PREFIX-$tag-$i
		fq run -d --name "$id" --mode "$mode" --net bridge "$ROOTFS" -- sleep 600 </dev/null >/dev/null 2>&1 ||
			{ echo "run -d $id failed"; return 1; }
		[ "$(fq exec "$id" echo ok 2>&1)" = ok ] || { echo "exec $id failed"; return 1; }
		fq kill "$id" KILL 2>&1 || { echo "kill $id failed"; return 1; }
		fq delete --force "$id" 2>&1 || { echo "delete $id failed"; return 1; }
	done
}

@test "soak: parallel lifecycle loops, containers and VM pods at once on one bridge, leave nothing" {
	need_vm
	vm_env
	local pids=() tags=() t rc failed=
	for t in c1 c2 c3; do
		lifecycle_loop container 6 "$t" >"$TEST_DIR/loop.$t" 2>&1 3>&- &
		pids+=($!) tags+=("$t")
	done
	for t in v1 v2; do
		lifecycle_loop vm 2 "$t" >"$TEST_DIR/loop.$t" 2>&1 3>&- &
		pids+=($!) tags+=("$t")
	done
	for i in "${!pids[@]}"; do
		rc=0
		wait "${pids[$i]}" || rc=$?
		[ "$rc" -eq 0 ] || failed+="loop ${tags[$i]}: $(cat "$TEST_DIR/loop.${tags[$i]}"); "
	done
	[ -z "$failed" ] || flunk "$failed"
	recover "the parallel loops"
}

# (a detached pod keeps the caller's stdio: files, not bats' pipes)
run_d_files() { # ID MODE
	timeout 60 nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" run -d --name "$1" --mode "$2" --net bridge \
		"$ROOTFS" -- sleep 600 </dev/null >"$TEST_DIR/cmd.out" 2>"$TEST_DIR/cmd.err" 3>&-
}

@test "a full state file system (a small tmpfs as --root): every start fails cleanly or works, nothing left, both modes" {
	need_vm
	vm_env
	mkdir -p "$ROOT"
	mount -t tmpfs -o size=512k,mode=0700 qpod-faults "$ROOT"
	TMPFS=$ROOT
	local free mode id
	for free in 0 4 16 64 200; do
		for mode in container vm; do
			id=$PREFIX-$mode-$free
			rm -f "$ROOT/.fill"
			# leave about FREE KiB
			dd if=/dev/zero of="$ROOT/.fill" bs=1k count=$((512 - free)) 2>/dev/null || true
			run run_d_files "$id" "$mode"
			if [ "$status" -ne 0 ]; then
				qp_file_stderr
				assert_qpod_error 125
			fi
			rm -f "$ROOT/.fill"
			recover "run -d ($mode) with ${free} KiB free" "$id"
			assert_eq "$(cd "$ROOT" && find . -mindepth 1 ! -path './.net*' ! -name '.lock*' | head -5)" "" \
				"files left in the state root ($mode, ${free} KiB free)"
		done
	done
}
