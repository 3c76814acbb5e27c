# tests/cli/helpers.bash — what every CLI test file loads (`load helpers`):
#   - $QPOD (build/qpod), $ROOTFS (the cached busybox rootfs), $HELPER (the
#     test helper's path inside the pod),
#   - per test: $TEST_DIR, $ROOT (a private --root), unique pod IDs $ID and
#     $ID2 (both start with $PREFIX), `qp` = qpod --root $ROOT,
#   - make_bundle DIR [JQ-FILTER]: `qpod spec` with root.path set to $ROOTFS,
#   - teardown: force-deletes the test's pods, then ASSERTS that nothing is
#     left behind (state dirs, cgroups, mounts, processes); a leftover fails
#     the test,
#   - small assertions that say what they expected.
# tests/run.sh exports QPOD, QPOD_BUILD and QPOD_ROOTFS; run alone, the
# defaults below find the build and the cache.

bats_require_minimum_version 1.5.0
# shellcheck disable=SC2034,SC2154 # variables used by the test files; bats sets status etc.

REPO=$(cd "$BATS_TEST_DIRNAME/../.." && pwd)
QPOD_BUILD=${QPOD_BUILD:-$REPO/build}
# the channel protocol's version, for fake-qemu.py (which runs in QEMU's
# jail, where the source tree is not visible)
FAKE_PROTO_VERSION=$(sed -n 's/^#define QP_PROTO_VERSION \([0-9]*\).*/\1/p' "$REPO/guest-init/protocol.h" 2>/dev/null)
export FAKE_PROTO_VERSION
QPOD=${QPOD:-$QPOD_BUILD/qpod}
ROOTFS=${QPOD_ROOTFS:-${QPOD_CACHE:-/var/cache/qpod}/rootfs-busybox}
HELPER=/bin/qpod-testhelper
CGROUP_FS=/sys/fs/cgroup
# host_has FEATURE and the host's cgroup layout: one detection for the
# tests and the profile tests/run.sh prints
# shellcheck source=tests/cli/host_features.bash
. "$BATS_TEST_DIRNAME/host_features.bash"

# ---- assertions -------------------------------------------------------------

flunk() {
	printf '%s\n' "$@" >&2
	return 1
}

assert_eq() { # ACTUAL EXPECTED [WHAT]
	[ "$1" = "$2" ] || flunk "${3:-value}: expected '$2'" "${3:-value}: actual   '$1'"
}

assert_match() { # STRING ERE [WHAT]
	[[ $1 =~ $2 ]] || flunk "${3:-value}: expected to match /$2/" "${3:-value}: actual '$1'"
}

assert_contains() { # HAYSTACK NEEDLE [WHAT]
	[[ $1 == *"$2"* ]] || flunk "${3:-value}: expected to contain '$2'" "${3:-value}: actual '$1'"
}

assert_not_contains() { # HAYSTACK NEEDLE [WHAT]
	[[ $1 != *"$2"* ]] || flunk "${3:-value}: must not contain '$2'" "${3:-value}: actual '$1'"
}

assert_status() { # EXPECTED (after `run`)
	[ "$status" -eq "$1" ] ||
		flunk "exit status: expected $1, got $status" "stdout: ${output:-}" "stderr: ${stderr:-}"
}

# After `run --separate-stderr qp ...` of a command that must fail as qpod
# itself: exit status EXPECTED (default 125) and exactly one stderr line
# "qpod: ...".
assert_qpod_error() {
	local want=${1:-125}
	assert_status "$want"
	[ "${#stderr_lines[@]}" -eq 1 ] ||
		flunk "stderr: expected one line, got ${#stderr_lines[@]}:" "$stderr"
	assert_match "${stderr_lines[0]}" '^qpod: .+' "stderr"
}

# ---- running qpod -------------------------------------------------------------

qp() {
	"$QPOD" --root "$ROOT" "$@"
}

# make_bundle DIR [JQ-FILTER]: DIR/config.json from `qpod spec`, root.path =
# the cached rootfs (absolute), then the filter ($rootfs is bound in it).
make_bundle() {
	local dir=$1 filter=${2:-.}
	mkdir -p "$dir"
	"$QPOD" spec >"$dir/config.default.json" || flunk "qpod spec failed"
	jq --arg rootfs "$ROOTFS" ".root.path = \$rootfs | $filter" "$dir/config.default.json" \
		>"$dir/config.json" || flunk "make_bundle: jq filter failed: $filter"
}

# qp_detached ARGS...: a qpod command that leaves a pod behind it (create,
# run --detach). The pod keeps the caller's stdio, as with runc, so under
# `run` (which reads a pipe to EOF) it gets files instead.
qp_detached() {
	qp "$@" </dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err"
}

# `run qp_stdio_files ARGS...` then `qp_file_stderr`: a command that must
# fail, but whose pod, should it be created after all, holds no pipe of
# bats' (which would hang the test instead of failing it); its stderr lines
# land in $stderr / $stderr_lines as after `run --separate-stderr`.
qp_stdio_files() {
	qp "$@" </dev/null >"$TEST_DIR/cmd.out" 2>"$TEST_DIR/cmd.err"
}
qp_file_stderr() {
	stderr=$(cat "$TEST_DIR/cmd.err")
	mapfile -t stderr_lines <"$TEST_DIR/cmd.err"
}

# the same inside the network namespace $NS (tests/cli/net.bats)
qp_detached_ns() {
	nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" "$@" </dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err"
}

# jq filter: process.args = the helper with ARGS
helper_args() {
	local a out='["'"$HELPER"'"'
	for a in "$@"; do
		out+=",$(jq -n --arg a "$a" '$a')"
	done
	echo ".process.args = $out]"
}

# pod_field ID FIELD: one field of `qpod state`
pod_field() {
	qp state "$1" | jq -r ".$2"
}

# wait_for TRIES CMD...: retry CMD every 50 ms until it succeeds.
wait_for() {
	local tries=$1 i
	shift
	for ((i = 0; i < tries; i++)); do
		"$@" >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	flunk "timed out waiting for: $*"
}

status_is() { [ "$(pod_field "$1" status 2>/dev/null)" = "$2" ]; }

# Start `qp ARGS...` in the background, output in $TEST_DIR/bg.out (stdout)
# and bg.err; its PID in $BG_PID (teardown kills it if the test did not).
# fd 3 is bats' own: a background job holding it would hang bats.
bg_qp() {
	# exec: $BG_PID must be qpod itself, not a subshell that would take
	# (or, for SIGINT in a background job, ignore) the test's signals
	(exec "$QPOD" --root "$ROOT" "$@") >"$TEST_DIR/bg.out" 2>"$TEST_DIR/bg.err" </dev/null 3>&- &
	BG_PID=$!
	BG_PIDS+=("$BG_PID")
}

# host cgroup directories of pod ID (v1 controllers, unified, or pure v2)
pod_cgroup_dirs() {
	local d
	for d in "$CGROUP_FS"/*/qpod/"$1" "$CGROUP_FS"/qpod/"$1"; do
		[ -d "$d" ] && echo "$d"
	done
	return 0
}

# cg_file CONTROLLER V1FILE V2FILE: the host path of a cgroup file of pod $ID
# (cgroup path from `qpod state`), v1 controller first, then unified/v2.
cg_file() {
	local cg f
	cg=$(pod_field "$ID" cgroup)
	[ -n "$cg" ] && [ "$cg" != null ] || flunk "qpod state has no cgroup path"
	cg=${cg#/}
	# v1: the hierarchy that holds the controller, wherever it is mounted
	# (/sys/fs/cgroup/cpu,cpuacct on hosts that co-mount without aliases)
	local v1
	v1=$(hf_v1_dir "$1")
	for f in ${v1:+"$v1/$cg/$2"} "$CGROUP_FS/$1/$cg/$2" "$CGROUP_FS/$cg/$3" "$CGROUP_FS/unified/$cg/$3"; do
		if [ -f "$f" ]; then
			echo "$f"
			return 0
		fi
	done
	flunk "no $2 / $3 for cgroup $cg under $CGROUP_FS"
}

# PID is in the pod's cgroup in every hierarchy (v1: each controller's;
# v2: the unified one), not only in one: named hierarchies (name=systemd)
# are not the pod's, nor a hybrid host's empty unified tree.
assert_in_pod_cgroup() {
	local pid=$1 ctl path n=0 lines
	lines=$(grep -c . "/proc/$pid/cgroup")
	while IFS=: read -r _ ctl path; do
		case $ctl in name=*) continue ;; esac
		[ -z "$ctl" ] && [ "$lines" -gt 1 ] && continue
		[[ $path == */qpod/$ID ]] || flunk "pid $pid: ${ctl:-unified} is $path, not qpod/$ID" "$(cat "/proc/$pid/cgroup")"
		n=$((n + 1))
	done <"/proc/$pid/cgroup"
	[ "$n" -gt 0 ] || flunk "pid $pid is in no cgroup hierarchy" "$(cat "/proc/$pid/cgroup")"
}

# ---- setup / teardown ------------------------------------------------------------

setup() { setup_common; }
teardown() { teardown_common; }

setup_common() {
	[ "$(id -u)" = 0 ] || skip "the CLI tests need root"
	[ -x "$QPOD" ] || flunk "$QPOD not built (make)"
	if [ ! -x "$ROOTFS/bin/busybox" ] || [ ! -x "$ROOTFS$HELPER" ]; then
		flunk "test rootfs missing: tools/mkrootfs.sh $ROOTFS"
	fi
	TEST_DIR=$(mktemp -d "${BATS_TEST_TMPDIR:-/tmp}/qt.XXXXXX")
	ROOT=$TEST_DIR/state
	PREFIX=qt$(printf '%04x%04x' "$RANDOM" "$$")-$BATS_TEST_NUMBER
	ID=$PREFIX-a
	ID2=$PREFIX-b
	BUNDLE=$TEST_DIR/bundle
	BG_PIDS=()
	TEST_START_TICKS=$(awk -v hz="$(getconf CLK_TCK)" '{ printf "%d", $1 * hz }' /proc/uptime)
}

# Every problem found, one line each, on stdout.
_leftovers() {
	local d pid target rest fields f

	# state dirs (qpod's own dot entries such as .net are not pods)
	if [ -d "$ROOT" ]; then
		for d in "$ROOT"/*; do
			[ -e "$d" ] && echo "state dir left: $d"
		done
	fi
	# cgroups named after the test's pods
	for d in "$CGROUP_FS"/*/qpod/"$PREFIX"* "$CGROUP_FS"/qpod/"$PREFIX"*; do
		[ -e "$d" ] && echo "cgroup left: $d"
	done
	# mounts in the host namespace
	if grep -qF -e "$TEST_DIR" /proc/self/mountinfo; then
		grep -F -e "$TEST_DIR" /proc/self/mountinfo | sed 's/^/mount left: /'
	fi
	# processes: recorded pod pids, cmdline naming the test dir or a pod ID,
	# cwd or root in the test dir, or root in the rootfs and started during
	# this test outside any other qpod cgroup
	for pid in "${TEARDOWN_PIDS[@]}"; do
		[ -r "/proc/$pid/stat" ] || continue
		rest=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
		# shellcheck disable=SC2206
		fields=(${rest##*) })
		[ "${fields[0]}" != Z ] && echo "process left: pod pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null))"
	done
	grep -laF -e "$TEST_DIR" -e "$PREFIX" /proc/[0-9]*/cmdline >"$TEST_DIR/.cmdlines" 2>/dev/null
	while IFS= read -r f; do
		pid=${f#/proc/}
		pid=${pid%/cmdline}
		if [ "$pid" = $$ ] || [ "$pid" = "$BASHPID" ]; then continue; fi
		target=$(tr '\0' ' ' <"$f" 2>/dev/null) || continue
		[[ $target == grep* ]] && continue # the grep above, in a subshell
		[ -n "$target" ] && echo "process left: $pid ($target)"
	done <"$TEST_DIR/.cmdlines"
	# one find for all cwd/root links: "/proc/PID/cwd TARGET"
	find /proc/[0-9]*/cwd /proc/[0-9]*/root -maxdepth 0 -printf '%p %l\n' 2>/dev/null |
		while read -r f target; do
			pid=${f#/proc/}
			pid=${pid%%/*}
			if [[ $target == "$TEST_DIR"* ]]; then
				echo "process left: $pid (${f##*/} $target)"
			elif [ "${f##*/}" = root ] && [ "$target" = "$ROOTFS" ]; then
				# another pod's process (a benchmark, the demo) is not ours
				if grep -q "/qpod/" "/proc/$pid/cgroup" 2>/dev/null &&
					! grep -q "/qpod/$PREFIX" "/proc/$pid/cgroup" 2>/dev/null; then
					continue
				fi
				rest=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
				# shellcheck disable=SC2206 # split the fields after "pid (comm) "
				fields=(${rest##*) })
				# field 22 (starttime) is index 19 here
				if [ "${fields[19]:-0}" -ge "$TEST_START_TICKS" ]; then
					echo "process left: $pid (root $target: $(tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null))"
				fi
			fi
		done
	return 0
}

teardown_common() {
	[ -n "${TEST_DIR:-}" ] || return 0 # skipped before setup finished
	cd / || return 1
	local id pid i

	# (a) force-delete every pod of the test, remembering its processes
	TEARDOWN_PIDS=()
	if [ -d "$ROOT" ]; then
		for id in $(cd "$ROOT" && ls); do
			pid=$(qp state "$id" 2>/dev/null | jq -r '.pid // 0' 2>/dev/null)
			[ -n "$pid" ] && [ "$pid" != 0 ] && TEARDOWN_PIDS+=("$pid")
			TEARDOWN_PIDS+=($(qp ps "$id" 2>/dev/null))
			qp delete --force "$id" >/dev/null 2>&1 ||
				echo "teardown: qpod delete --force $id failed" >&2
		done
	fi
	# background `qpod run`s the test did not wait for
	for pid in "${BG_PIDS[@]}"; do
		kill -TERM "$pid" 2>/dev/null || continue
		for i in 1 2 3 4 5 6 7 8 9 10; do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	done

	# (b) nothing may be left behind; give the kernel a moment to finish
	# tearing down what was just killed
	no_leftovers _leftovers || return 1
	rm -rf "$TEST_DIR"
	return 0
}

# no_leftovers FN: FN prints what a test left behind (nothing if clean);
# polled for up to 2 s, as the kernel may still be tearing down what was
# just killed.  Prints it and fails if something stays.
no_leftovers() {
	local problems i
	for i in $(seq 1 20); do
		problems=$("$1")
		[ -z "$problems" ] && return 0
		sleep 0.1
	done
	echo "teardown: left behind by this test:" >&2
	echo "$problems" >&2
	return 1
}

# qemus_of_root ROOT: the QEMUs whose parent is a qpod monitor of state
# root ROOT (its --root ROOT on the command line), one pid a line
qemus_of_root() {
	local q parent
	for q in $(pgrep -x qemu-system-x86); do
		parent=$(awk '{ print $4 }' "/proc/$q/stat" 2>/dev/null) || continue
		tr '\0' ' ' <"/proc/$parent/cmdline" 2>/dev/null | grep -q -- "--root $1 " && echo "$q"
	done
	return 0
}

# ---- microVM tests ---------------------------------------------------------------
# The guest kernel, and TCG unless QPOD_TEST_ACCEL=kvm|auto: /dev/kvm may open
# and still not work (nested virtualisation).
VM_KERNEL=${QPOD_KERNEL:-${QPOD_CACHE:-/var/cache/qpod}/kernel/current/vmlinux}

vm_env() {
	export QPOD_KERNEL=$VM_KERNEL
	case ${QPOD_TEST_ACCEL:-tcg} in
	auto) unset QPOD_ACCEL ;;
	*) export QPOD_ACCEL=${QPOD_TEST_ACCEL:-tcg} ;;
	esac
}

# setup of a file whose every test runs VM pods: setup() { setup_vm; }
setup_vm() {
	need_vm
	setup_common
	vm_env
}

need_vm() {
	command -v qemu-system-x86_64 >/dev/null || skip "qemu-system-x86_64 is not installed"
	[ -f "$VM_KERNEL" ] || skip "no guest kernel at $VM_KERNEL (run kernel-config/build.sh)"
}

# lifecycle_under_subreaper: create + start $ID from $BUNDLE, then exec -d
# a process that exits 6, all under tests/cli/subreaper.py (which stands in
# for containerd's shim or conmon and reaps what qpod leaves it); `run`
# captures the reaper's lines; $TEST_DIR/pids holds the pod's pid and the
# exec's pid (from their pid files), one a line.
lifecycle_under_subreaper() {
	run --separate-stderr "$REPO/tests/cli/subreaper.py" sh -c '
		"$1" --root "$2" create --bundle "$3" --pid-file "$4/pid" "$5" </dev/null >"$4/pod.out" 2>&1 || exit 1
		"$1" --root "$2" start "$5" || exit 1
		"$1" --root "$2" exec --detach --pid-file "$4/epid" "$5" sh -c "echo exec-out; exit 6" || exit 1
		{ cat "$4/pid"; echo; cat "$4/epid"; echo; } >"$4/pids"' _ "$QPOD" "$ROOT" "$BUNDLE" "$TEST_DIR" "$ID"
	assert_status 0
	assert_match "$output" 'cmd [0-9]+ exit 0' "the lifecycle commands succeeded"
}

# check_exec_stdin MODE: a running pod of MODE; `qpod exec -i` gets qpod's
# stdin (a line, then 1 MB whole and in order), as does exec without -i
# (runc's way); with /dev/null it reads nothing
check_exec_stdin() {
	qp run -d --mode "$1" --name "$ID" "$ROOTFS" -- sleep 600 >/dev/null || flunk "run -d --mode $1"
	run --separate-stderr bash -c 'echo hi | timeout 60 "$1" --root "$2" exec -i "$3" cat' _ "$QPOD" "$ROOT" "$ID"
	assert_status 0
	assert_eq "$output" hi "exec -i cat of echo hi"
	head -c 1000000 /dev/urandom >"$TEST_DIR/in"
	run --separate-stderr timeout 60 "$QPOD" --root "$ROOT" exec "$ID" sha256sum <"$TEST_DIR/in"
	assert_status 0
	assert_eq "${output%% *}" "$(sha256sum <"$TEST_DIR/in" | cut -d' ' -f1)" "sha256 of what exec read"
	run --separate-stderr timeout 60 "$QPOD" --root "$ROOT" exec -i "$ID" wc -c </dev/null
	assert_status 0
	assert_eq "$output" 0 "bytes read from /dev/null"
	qp delete --force "$ID"
}

# ---- terminals (ptyrun.py drives them) ----

PTYRUN=$BATS_TEST_DIRNAME/ptyrun.py

# tty_steps PROMPT ROWSxCOLS CODE: the session both kinds of terminal get, in
# TTY_STEPS (ptyrun.py's steps): the size and the tty's name, a resize to
# ROWSxCOLS seen by stty, ^C stopping a foreground sleep, exit CODE
tty_steps() {
	local p=$1 size=$2 code=$3
	# (what is waited for is never what is typed: the typed echo would match)
	TTY_STEPS=(--send-after "$p" 'stty size; tty && echo stdin-is""-a-tty\r'
		--resize-after 'stdin-is-a-tty' "$size"
		--send-after "$p" 'sleep 1; stty size\r'
		--send-after "${size/x/ }" 'sh -c "echo sl""eeping; exec sleep 600"\r'
		--send-after 'sleeping' '\x03'
		--send-after "$p" "echo survived-\$((40+2)); exit $code\r")
}

# assert_tty_session OUTPUT FIRST_SIZE RESIZED (as "ROWS COLS")
assert_tty_session() {
	local out
	out=$(tr -d '\r' <<<"$1")
	assert_contains "$out" "$2" "the first size"
	assert_match "$out" '/dev/pts/[0-9]+' "a terminal in the guest"
	assert_contains "$out" "stdin-is-a-tty" "stdin is the terminal"
	assert_contains "$out" "$3" "the size after the resize"
	assert_contains "$out" "survived-42" "the shell survived ^C"
}

# check_run_tty MODE: `qpod run -t --mode MODE` on a pty: the session of
# tty_steps, the terminal restored after, and the refusals
check_run_tty() {
	local mode=$1
	tty_steps 'qp-run$ ' 35x110 3
	# after qpod, the same terminal's settings: canonical and echoing again
	run "$PTYRUN" --timeout 120 --size 25x85 "${TTY_STEPS[@]}" -- sh -c '
		"$1" --root "$2" run -t --rm --mode "$4" -e "PS1=qp-run\$ " "$3" -- sh
		code=$?
		stty -a | tr " " "\n" | grep -x -e icanon -e echo -e -icanon -e -echo
		exit $code' _ "$QPOD" "$ROOT" "$ROOTFS" "$mode"
	assert_status 3
	assert_tty_session "$output" "25 85" "35 110"
	local after
	after=$(tail -n 2 <<<"$output" | tr -d '\r' | sort | tr '\n' ' ')
	assert_eq "$after" "echo icanon " "the terminal restored"
	check_script_eof "run -t --rm --mode $mode $ROOTFS --" 6
	# refused where it cannot be: no terminal, a detached run, a bundle
	run --separate-stderr qp run -t --mode "$mode" "$ROOTFS" -- true </dev/null
	assert_qpod_error 125
	assert_contains "$stderr" "terminal"
	run --separate-stderr qp run -t -d --mode "$mode" "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "--tty needs a foreground run"
	make_bundle "$BUNDLE" ".annotations[\"qpod.mode\"] = \"$mode\""
	run --separate-stderr qp run -t --bundle "$BUNDLE" "$ID"
	assert_qpod_error 125
	assert_contains "$stderr" "ROOTFS form"
}

# check_script_eof "QPOD-ARGS --" CODE: qpod QPOD-ARGS sh ... under script(1)
# with stdin at its end: script sends an EOF at once, before qpod's terminal
# goes raw; it reaches the process as an EOF (cat ends), not as a NUL
# (which the pod's terminal echoed as ^@, and cat read on)
check_script_eof() {
	run timeout 120 script -qec "$QPOD --root $ROOT $1 sh -c 'tty; cat; echo cat-ended; exit $2'" /dev/null </dev/null
	assert_status "$2"
	assert_match "$(tr -d '\r' <<<"$output")" $'^/dev/pts/[0-9]+\ncat-ended$' "the tty and cat's end under script(1)"
}

# check_exec_tty MODE: `qpod exec -t` without --console-socket into a running
# pod of MODE: qpod's own terminal is the process's (the session of
# tty_steps, the terminal restored after), also under script(1); refused
# without a terminal and with --detach
check_exec_tty() {
	local mode=$1
	qp run -d --mode "$mode" --name "$ID" "$ROOTFS" -- sleep 600 >/dev/null || flunk "run -d --mode $mode"
	tty_steps 'qp-exec$ ' 36x111 5
	run "$PTYRUN" --timeout 120 --size 26x88 "${TTY_STEPS[@]}" -- sh -c '
		"$1" --root "$2" exec -t -e "PS1=qp-exec\$ " "$3" -- sh
		code=$?
		stty -a | tr " " "\n" | grep -x -e icanon -e echo -e -icanon -e -echo
		exit $code' _ "$QPOD" "$ROOT" "$ID"
	assert_status 5
	assert_tty_session "$output" "26 88" "36 111"
	local after
	after=$(tail -n 2 <<<"$output" | tr -d '\r' | sort | tr '\n' ' ')
	assert_eq "$after" "echo icanon " "the terminal restored"
	# script(1) with stdin at its end: its EOF reaches the process as one
	check_script_eof "exec -t $ID --" 6
	# refused: no terminal; --detach without a console socket
	run --separate-stderr qp exec -t "$ID" -- true </dev/null
	assert_qpod_error 125
	assert_contains "$stderr" "or qpod's stdin and stdout to be one"
	run --separate-stderr "$PTYRUN" --timeout 60 -- "$QPOD" --root "$ROOT" exec -t -d "$ID" -- true
	assert_contains "$(tr -d '\r' <<<"$output")" "with --detach needs --console-socket"
	qp delete --force "$ID"
}
