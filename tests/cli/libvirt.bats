#!/usr/bin/env bats
# tests/cli/libvirt.bats — VM pods through the libvirt backend
# (--vm-backend libvirt, docs/LIBVIRT.md), against a libvirtd of this file's
# own (tests/cli/libvirtd-private.sh: private configuration, sockets, run,
# state and log directories, its own network namespace; the host's libvirt,
# if any, is never used), under TCG: every lifecycle command, the domain as
# `virsh list` shows it, a domain destroyed outside qpod, the refusals, the
# tap, the rootfs written by the pod's root, and that nothing is left behind
# (domain, QEMU, socket, tap, lease, QEMU's directory and mounts, chowned
# files).  As libvirt.bats its daemon runs QEMU as root; as its link
# libvirt-stock.bats, as Debian's stock qemu.conf does (libvirt-qemu:libvirt-qemu,
# dynamic ownership, the host's security driver).

load helpers

setup_file() {
	command -v libvirtd >/dev/null || return 0 # setup skips
	case ${BATS_TEST_FILENAME##*/} in
	libvirt-stock.bats) LV_MODE=stock LV_QEMU_USER=libvirt-qemu ;;
	*) LV_MODE=root LV_QEMU_USER=root ;;
	esac
	LV_DIR=$(mktemp -d /tmp/qpod-libvirt.XXXXXX)
	LV_NS=qplv$$
	ip netns add "$LV_NS"
	ip -n "$LV_NS" link set lo up
	local out
	out=$("$BATS_TEST_DIRNAME/libvirtd-private.sh" start "$LV_DIR" "$LV_NS" "$LV_MODE") || true
	LV_URI=$(echo "$out" | sed -n 1p)
	LV_RUNDIR=$(echo "$out" | sed -n 2p)
	export LV_DIR LV_NS LV_URI LV_RUNDIR LV_MODE LV_QEMU_USER
}

teardown_file() {
	[ -n "${LV_DIR:-}" ] || return 0
	"$BATS_TEST_DIRNAME/libvirtd-private.sh" stop "$LV_DIR"
	ip netns del "$LV_NS" 2>/dev/null || true
	rm -rf "$LV_DIR"
}

setup() {
	need_vm
	command -v libvirtd >/dev/null || skip "libvirtd is not installed (tools/deps.sh installs libvirt-daemon)"
	command -v virsh >/dev/null || skip "virsh is not installed (tools/deps.sh installs libvirt-clients)"
	[ -n "${LV_URI:-}" ] || flunk "the private libvirtd ($LV_MODE) did not start"
	setup_common
	vm_env
	export QPOD_LIBVIRT_URI=$LV_URI QPOD_LIBVIRT_RUNDIR=$LV_RUNDIR
	KERNEL_OWNER=$(stat -c %u:%g "$(readlink -f "$VM_KERNEL")")
}

teardown() {
	teardown_common
	local left
	left=$(virsh -q -c "$LV_URI" list --all --name 2>/dev/null | grep -F "$PREFIX" || true)
	if [ -n "$left" ]; then
		echo "teardown: libvirt domains left: $left" >&2
		for d in $left; do virsh -q -c "$LV_URI" destroy "$d" >/dev/null 2>&1; done
		return 1
	fi
	# QEMU's directories and their idmapped mounts go once the domain runs
	left=$(ls -A "$LV_RUNDIR")
	[ -z "$left" ] || { echo "teardown: left in $LV_RUNDIR: $left" >&2; return 1; }
	left=$(grep -F " $LV_RUNDIR/" /proc/self/mountinfo || true)
	[ -z "$left" ] || { echo "teardown: mounts left: $left" >&2; return 1; }
	# the daemon's dynamic ownership chowned no file of the host's
	assert_eq "$(stat -c %u:%g "$(readlink -f "$VM_KERNEL")")" "$KERNEL_OWNER" "the kernel's owner"
}

virsh_state() { # the domain's state as virsh sees it ("" if there is none)
	virsh -q -c "$LV_URI" domstate "$1" 2>/dev/null | head -1
}

domain_gone() { [ -z "$(virsh -q -c "$LV_URI" list --all --name | grep -Fx "$1")" ]; }

@test "libvirt: create, state, start, exec, list, stats, kill, delete; virsh sees the domain" {
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .annotations["qpod.vm.backend"] = "libvirt" |
		.annotations["qpod.vm.boot"] = "cold" | .process.terminal = false |
		.process.args = ["sh", "-c", "echo workload-out; sleep 60"]'
	qp_detached create --bundle "$BUNDLE" "$ID"
	assert_eq "$(pod_field "$ID" status)" created
	assert_eq "$(virsh_state "$ID")" running "the domain while created"
	virsh -q -c "$LV_URI" list --name | grep -qFx "$ID" || flunk "virsh list does not show $ID"
	qpid=$(pod_field "$ID" vmm_pid)
	[ "$qpid" -gt 0 ] || flunk "no vmm_pid in state"
	# libvirt's QEMU, not qpod's child: the domain's name and the microvm
	cmd=$(tr '\0' ' ' </proc/"$qpid"/cmdline)
	assert_match "$cmd" "-name guest=$ID" "QEMU of the domain"
	assert_match "$cmd" "microvm" "machine"
	assert_match "$cmd" "virtio-9p-device" "rootfs share"
	assert_eq "$(ps -o user= -p "$qpid")" "$LV_QEMU_USER" "QEMU's user ($LV_MODE daemon)"
	# started by our libvirtd (in its network namespace; the stock daemon
	# gives QEMU a mount namespace of its own), not by qpod's monitor
	assert_eq "$(readlink /proc/"$qpid"/ns/net)" "$(readlink /proc/"$(cat "$LV_DIR/libvirtd.pid")"/ns/net)" \
		"QEMU is libvirtd's"
	[ "$(ps -o ppid= -p "$qpid" | tr -d ' ')" != "$(pod_field "$ID" pid)" ] || flunk "QEMU is the monitor's child"
	run qp start "$ID"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" running
	run --separate-stderr qp exec "$ID" sh -c 'echo exec-out; echo exec-err >&2; exit 5'
	assert_status 5
	assert_eq "$output" exec-out "exec stdout"
	assert_eq "$stderr" exec-err "exec stderr"
	assert_eq "$(qp list --format json | jq -r --arg id "$ID" '.[] | select(.id == $id) | .status')" running "list"
	run --separate-stderr qp stats "$ID"
	assert_status 0
	echo "$output" | jq -e --argjson p "$qpid" '.vmm.pid == $p and .vmm.rss_kb > 0 and .guest.total_kb > 0' >/dev/null ||
		flunk "stats: $output"
	assert_eq "$stderr" "" "stats warns nothing"
	run qp kill "$ID" TERM
	assert_status 0
	wait_for 200 status_is "$ID" stopped
	assert_match "$(pod_field "$ID" stop_reason)" "exited with status 143" "stop reason"
	wait_for 100 domain_gone "$ID"
	wait_for 100 grep -q workload-out "$TEST_DIR/pod.out"
	run qp delete "$ID"
	assert_status 0
	[ ! -e "/proc/$qpid" ] || flunk "qemu $qpid still there"
	[ ! -e "$ROOT/$ID" ] || flunk "state dir left"
}

@test "libvirt: a foreground run's output and exit status; nothing left" {
	run --separate-stderr timeout 60 "$QPOD" --root "$ROOT" run --mode vm --vm-backend libvirt --rm "$ROOTFS" -- \
		sh -c 'echo hi; echo oops >&2; exit 3'
	assert_status 3
	assert_eq "$output" hi "stdout"
	assert_eq "$stderr" oops "stderr"
	assert_eq "$(qp list --quiet)" "" "pods left in list"
}

@test "libvirt: the pod's root writes its rootfs; what it writes is root's on the host" {
	cp -a "$ROOTFS" "$TEST_DIR/rootfs"
	echo host >"$TEST_DIR/rootfs/hostfile"
	chmod 0644 "$TEST_DIR/rootfs/hostfile"
	run --separate-stderr timeout 120 "$QPOD" --root "$ROOT" run --mode vm --vm-backend libvirt --rm \
		"$TEST_DIR/rootfs" -- sh -c 'echo guest >>/hostfile && echo new >/newfile && mkdir /newdir &&
			touch /newdir/f && cat /hostfile && id -u'
	assert_status 0
	assert_eq "$output" "$(printf 'host\nguest\n0')" "the guest's view"
	assert_eq "$(cat "$TEST_DIR/rootfs/hostfile")" "$(printf 'host\nguest')" "the host file, appended"
	assert_eq "$(cat "$TEST_DIR/rootfs/newfile")" new "the new file"
	for f in hostfile newfile newdir newdir/f; do
		assert_eq "$(stat -c %u:%g "$TEST_DIR/rootfs/$f")" 0:0 "$f's owner on the host"
	done
}

@test "libvirt: the spec's bind shares: a rw one the pod's root writes (root's on the host), a ro one it cannot" {
	mkdir -p "$TEST_DIR/rw" "$TEST_DIR/ro"
	echo old >"$TEST_DIR/rw/plain"
	echo ro-data >"$TEST_DIR/ro/file"
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .annotations["qpod.vm.backend"] = "libvirt" |
		.process.terminal = false |
		.process.args = ["sh", "-c", "cat /rw/plain; echo new >/rw/plain; echo made >/rw/made; cat /ro/file; echo x >/ro/file || echo ro-refused"] |
		.mounts += [{"destination": "/rw", "type": "bind", "source": "'"$TEST_DIR/rw"'", "options": ["rbind", "rw"]},
			{"destination": "/ro", "type": "bind", "source": "'"$TEST_DIR/ro"'", "options": ["rbind", "ro"]}]'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$output" "$(printf 'old\nro-data\nro-refused')" "the guest's reads and writes"
	assert_eq "$(cat "$TEST_DIR/rw/plain")" new "the rw share's file, on the host"
	assert_eq "$(stat -c %u:%g "$TEST_DIR/rw/made")" 0:0 "a file the pod made, on the host"
	assert_eq "$(cat "$TEST_DIR/ro/file")" ro-data "the ro share's file, unchanged"
	run qp delete "$ID"
}

@test "libvirt: a foreground run is a running pod to other qpod processes (its monitor is proven by the domain's QEMU)" {
	bg_qp run --mode vm --vm-backend libvirt --name "$ID" --rm "$ROOTFS" -- sleep 60
	wait_for 600 status_is "$ID" running
	assert_eq "$(pod_field "$ID" pid)" "$BG_PID" "the pod's pid is the foreground run"
	run --separate-stderr qp exec "$ID" echo exec-ok
	assert_status 0
	assert_eq "$output" exec-ok
	assert_eq "$stderr" "" "no identity warning"
	run qp kill "$ID" KILL
	assert_status 0
	wait "$BG_PID" || true
	wait_for 100 domain_gone "$ID"
}

@test "libvirt: a domain destroyed outside qpod is a stopped pod with the reason" {
	qp_detached run --mode vm --vm-backend libvirt --boot cold --name "$ID" -d "$ROOTFS" -- sleep 60
	assert_eq "$(pod_field "$ID" status)" running
	qpid=$(pod_field "$ID" vmm_pid)
	run virsh -q -c "$LV_URI" destroy "$ID"
	assert_status 0
	wait_for 200 status_is "$ID" stopped
	assert_eq "$(pod_field "$ID" stop_reason)" "the libvirt domain was destroyed outside qpod" "stop reason"
	[ ! -e "/proc/$qpid" ] || flunk "qemu $qpid still there"
	run qp delete "$ID"
	assert_status 0
	domain_gone "$ID" || flunk "domain left"
}

@test "libvirt: a monitor killed outside qpod takes the domain with it (autodestroy); delete cleans up" {
	qp_detached run --mode vm --vm-backend libvirt --name "$ID" -d "$ROOTFS" -- sleep 60
	pid=$(pod_field "$ID" pid)
	qpid=$(pod_field "$ID" vmm_pid)
	kill -KILL "$pid"
	wait_for 200 domain_gone "$ID"
	wait_for 100 test ! -e "/proc/$qpid"
	assert_eq "$(pod_field "$ID" status)" stopped
	assert_eq "$(pod_field "$ID" stop_reason)" "the pod's VM monitor died" "stop reason"
	run qp delete "$ID"
	assert_status 0
}

@test "libvirt: warm replace, pause and resume (virsh sees the pause)" {
	qp_detached run --mode vm --vm-backend libvirt --name "$ID" -d "$ROOTFS" -- sleep 60
	run qp replace "$ID" -- sh -c 'echo replaced >/tmp/mark; sleep 60'
	assert_status 0
	echo "$output" | jq -e '.mode == "warm" and .replace_ms > 0' >/dev/null || flunk "replace: $output"
	# replace returns once the new workload is exec'd; its first line may come later
	wait_for 100 qp exec "$ID" test -s /tmp/mark || flunk "the new workload never wrote /tmp/mark"
	run qp exec "$ID" cat /tmp/mark
	assert_status 0
	assert_eq "$output" replaced "the new workload ran"
	run qp pause "$ID"
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" paused
	assert_eq "$(virsh_state "$ID")" paused "virsh after pause"
	run qp resume "$ID"
	assert_status 0
	assert_eq "$(virsh_state "$ID")" running "virsh after resume"
	run qp delete --force "$ID"
	assert_status 0
	wait_for 100 domain_gone "$ID"
}

@test "libvirt: refusals: --boot template, --libvirt-uri without the backend, a daemon that is not there, an open QPOD_LIBVIRT_RUNDIR" {
	run -125 --separate-stderr qp run --mode vm --vm-backend libvirt --boot template --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "--boot template: not supported with --vm-backend libvirt"
	run -125 --separate-stderr qp run --mode vm --libvirt-uri "$LV_URI" --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "--libvirt-uri (qpod.vm.libvirt.uri) needs --vm-backend libvirt"
	run -125 --separate-stderr qp run --mode vm --vm-backend kvmtool --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "--vm-backend must be qemu or libvirt"
	run -125 --separate-stderr qp run --mode vm --vm-backend libvirt \
		--libvirt-uri "qemu+unix:///system?socket=$TEST_DIR/none" --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "libvirt: connect to qemu+unix:///system?socket=$TEST_DIR/none: Failed to connect socket"
	assert_contains "$stderr" "(is libvirtd running there? Debian's comes with libvirt-daemon-system"
	run -125 --separate-stderr env QPOD_QEMU=/bin/false "$QPOD" --root "$ROOT" run --mode vm --vm-backend libvirt --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "QPOD_QEMU is set"
	[ "$LV_MODE" = stock ] || return 0
	# a QEMU that is not root: its directories go only where nobody but
	# root can write
	mkdir -m 0777 "$TEST_DIR/open"
	run -125 --separate-stderr env QPOD_LIBVIRT_RUNDIR="$TEST_DIR/open" "$QPOD" --root "$ROOT" run --mode vm \
		--vm-backend libvirt --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "libvirt backend: $TEST_DIR/open must be a directory of root's that only root can write"
	run -125 --separate-stderr env QPOD_LIBVIRT_RUNDIR=rel "$QPOD" --root "$ROOT" run --mode vm \
		--vm-backend libvirt --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "QPOD_LIBVIRT_RUNDIR \"rel\" is not an absolute path"
	assert_eq "$(ls -A "$TEST_DIR/open")" "" "nothing made in the refused directory"
}

@test "libvirt: the pod's tap on the bridge (a private netns); tap and lease gone after delete" {
	qp() { nsenter --net="/run/netns/$LV_NS" "$QPOD" --root "$ROOT" "$@"; }
	qp run --mode vm --vm-backend libvirt --net bridge --ip 10.213.0.9 --name "$ID" -d "$ROOTFS" -- sleep 60 \
		</dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err" || flunk "run: $(cat "$TEST_DIR/pod.err")"
	tap=$(ip -n "$LV_NS" -o link show | grep -o ' qp[0-9a-f]\{10\}' | tr -d ' ')
	[ -n "$tap" ] || flunk "no tap in the netns"
	assert_match "$(virsh -q -c "$LV_URI" domiflist "$ID")" "$tap +ethernet" "the domain's interface is the tap"
	run qp exec "$ID" sh -c 'ip -4 -o addr show eth0; ping -c 1 -W 5 10.213.0.1 >/dev/null && echo gateway-ok'
	assert_status 0
	assert_contains "$output" "inet 10.213.0.9/22"
	assert_contains "$output" "gateway-ok"
	run nsenter --net="/run/netns/$LV_NS" busybox ping -c 1 -W 5 10.213.0.9
	assert_status 0
	run qp delete --force "$ID"
	assert_status 0
	wait_for 100 domain_gone "$ID"
	assert_eq "$(ip -n "$LV_NS" -o link show | grep -c ' qp[0-9a-f]\{10\}')" 0 "tap links left"
	assert_eq "$(cat "$ROOT/.net/ipam" 2>/dev/null)" "" "leases left"
}

@test "libvirt: bench start has the qpod-vm-libvirt row beside qpod-vm-cold; --libvirt-uri is for start only" {
	run --separate-stderr "$QPOD" bench start --mode vm --runs 1 --warmup 0 --image "$ROOTFS" \
		--libvirt-uri "$LV_URI" --format json --output "$TEST_DIR/start.json"
	assert_status 0
	for name in qpod-vm-cold qpod-vm-libvirt; do
		jq -e --arg n "$name" '[.results[] | select(.name == $n and .metric == "start_ms" and .n == 1 and .min > 0)] | length == 1' \
			"$TEST_DIR/start.json" >/dev/null || flunk "no start_ms of $name: $(jq -c .results "$TEST_DIR/start.json")"
	done
	jq -e '.phases["qpod-vm-libvirt"].kernel > 0' "$TEST_DIR/start.json" >/dev/null ||
		flunk "phases: $(jq -c .phases "$TEST_DIR/start.json")"
	assert_eq "$(virsh -q -c "$LV_URI" list --all --name | grep -c .)" 0 "domains left by the bench"
	run -125 --separate-stderr "$QPOD" bench replace --libvirt-uri "$LV_URI"
	assert_qpod_error 125
	assert_contains "$stderr" "--libvirt-uri is for bench start"
}
