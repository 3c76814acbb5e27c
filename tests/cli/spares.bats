#!/usr/bin/env bats
# tests/cli/spares.bats — spares (vm/snapshot/spare.c, spare_take.c): `qpod spares
# fill|list|drain`, vm pods that take a free spare (output, status, rootfs,
# read-only rootfs, cgroup, timeline, exec/kill/delete), what makes two
# spares' pods unique, the pods that must not take one, the pool topped up
# after a take, and the faults: a holder killed, gc, bad input.  The
# teardown drains the test's spares before it checks that nothing is left.

load helpers

setup() { setup_vm; }

teardown() {
	[ -z "${TEST_DIR:-}" ] || [ ! -d "$ROOT" ] || qp spares drain >/dev/null 2>&1 || true
	[ -z "${TEST_DIR:-}" ] || ! mountpoint -q "$TEST_DIR/rootfs-suid" || umount "$TEST_DIR/rootfs-suid"
	teardown_common
}

spares_json() {
	qp spares list --format json
}

free_spares() {
	spares_json | jq '[.[] | select(.status == "free")] | length'
}

free_is() { [ "$(free_spares)" = "$1" ]; }

gone() { # PID: no such process, or a zombie its reaper has not seen to yet
	[ ! -e "/proc/$1" ] || [ "$(awk '/^State:/ {print $2}' "/proc/$1/status" 2>/dev/null)" = Z ]
}

# the spares' cgroup in any hierarchy (it goes with its last process)
spares_cgroups() {
	find "$CGROUP_FS" -mindepth 2 -maxdepth 3 -type d -path '*/qpod/spares' 2>/dev/null
}

no_spares_cgroup() { [ -z "$(spares_cgroups)" ]; }

timeline_of() { # STDERR-TEXT -> the JSON of its qpod-timeline line
	sed -n 's/^qpod-timeline: //p' <<<"$1"
}

@test "spares fill makes free spares (listed, QEMU jailed in qpod/spares), drain stops them and leaves nothing" {
	local others
	others=$(spares_cgroups) # another qpod's spares on this host: their cgroup stays
	run --separate-stderr qp spares fill --count 2 --no-refill
	assert_status 0
	assert_eq "$(jq '.made | length' <<<"$output")" 2 "spares made"
	run --separate-stderr spares_json
	assert_status 0
	assert_eq "$(jq -r '[.[] | .status] | join(" ")' <<<"$output")" "free free" "statuses"
	assert_eq "$(jq -r '[.[] | "\(.mem_mb) \(.vcpus) \(.accel)"] | unique | join(",")' <<<"$output")" \
		"256 1 ${QPOD_ACCEL:-tcg}" "memory, vCPUs, accel"
	assert_match "$(jq -r '.[0].key' <<<"$output")" '^[0-9a-f]{16}$' "the template key"
	local qemu holder
	qemu=$(jq -r '.[0].qemu_pid' <<<"$output")
	holder=$(jq -r '.[0].holder_pid' <<<"$output")
	assert_eq "$(awk '/^PPid:/ {print $2}' "/proc/$qemu/status")" "$holder" "QEMU is its holder's child"
	assert_match "$(awk '/^Uid:/ {print $2}' "/proc/$qemu/status")" '^13[0-9]{8}$' "QEMU's jail uid"
	grep -q ':/qpod/spares$' "/proc/$qemu/cgroup" || flunk "QEMU not in qpod/spares: $(cat "/proc/$qemu/cgroup")"
	# the table has the same spares
	assert_eq "$(qp spares list | tail -n +2 | awk '{print $2}' | sort | uniq -c | awk '{print $1, $2}')" "2 free"
	run --separate-stderr qp spares drain
	assert_status 0
	assert_eq "$output" '{"stopped":2}'
	assert_eq "$(spares_json)" "[]" "spares after drain"
	gone "$qemu" || flunk "QEMU $qemu still there"
	gone "$holder" || flunk "holder $holder still there"
	assert_eq "$(find "$ROOT/.spares" -mindepth 1 -maxdepth 1 -name 's*' | wc -l)" 0 "spare dirs left"
	[ -n "$others" ] || no_spares_cgroup || flunk "the spares' cgroup outlived the spares: $(spares_cgroups)"
}

@test "a vm pod takes a free spare: its output, status and rootfs, the take phase, QEMU in the pod's cgroup; the spare's dir goes with the pod" {
	local spare qemu others
	others=$(spares_cgroups)
	qp spares fill --no-refill >/dev/null || flunk "fill"
	spare=$(spares_json | jq -r '.[0].name')
	qemu=$(spares_json | jq -r '.[0].qemu_pid')
	run --separate-stderr qp run --rm --mode vm --timeline "$ROOTFS" -- sh -c 'echo out; echo err >&2; ls /bin/busybox; exit 7'
	assert_status 7
	assert_eq "$output" "$(printf 'out\n/bin/busybox')" "stdout"
	assert_contains "$stderr" "err"
	timeline_of "$stderr" | jq -e '.take > 0 and .resume > 0 and .workload > 0 and (has("restore") | not) and (has("vmm_spawn") | not)' >/dev/null ||
		flunk "not a spare's timeline: $stderr"
	gone "$qemu" || flunk "the spare's QEMU outlived its pod"
	[ ! -e "$ROOT/.spares/$spare" ] || flunk "the spare's dir outlived its pod"
	# a detached pod: QEMU in the pod's cgroup, listed as taken meanwhile
	qp spares fill --no-refill >/dev/null || flunk "fill"
	qemu=$(spares_json | jq -r '.[0].qemu_pid')
	qp_detached run -d --mode vm --name "$ID" "$ROOTFS" -- sleep 60
	assert_eq "$(pod_field "$ID" vmm_pid)" "$qemu" "the pod's VMM is the spare's QEMU"
	assert_in_pod_cgroup "$qemu"
	assert_eq "$(spares_json | jq -r '.[0] | "\(.status) \(.taken_by)"')" "taken $ID" "listed as taken"
	assert_eq "$(qp exec "$ID" sh -c 'echo exec; ls /bin/sh')" "$(printf 'exec\n/bin/sh')" "exec"
	qp ps "$ID" | grep -qx "$qemu" || flunk "ps does not list QEMU: $(qp ps "$ID")"
	run qp kill "$ID" KILL
	assert_status 0
	wait_for 200 status_is "$ID" stopped
	run qp delete "$ID"
	assert_status 0
	wait_for 40 gone "$qemu"
	assert_eq "$(spares_json)" "[]" "spares left"
	# its holder, the last process of the spares' cgroup, took it along
	[ -n "$others" ] || wait_for 40 no_spares_cgroup
}

@test "spares: two pods from two spares draw different random bytes and see the host's clock; a read-only rootfs stays read-only" {
	qp spares fill --count 2 --no-refill >/dev/null || flunk "fill"
	local a b before after t
	# the mechanism: a taken spare is sent CLONE again, and its guest's
	# HELLO says it added that seed, reseeded and set its clock (the
	# monitor checks it, template.bats); the different bytes are the property
	local said="clone: the guest added the seed sent, reseeded its CRNG and set its clock"
	run --separate-stderr qp --debug run --rm --mode vm "$ROOTFS" -- sh -c 'head -c 16 /dev/urandom | od -An -tx1 | tr -d " \n"'
	assert_status 0
	a=$output
	assert_contains "$stderr" "$said" "the first pod's debug log"
	run --separate-stderr qp --debug run --rm --mode vm "$ROOTFS" -- sh -c 'head -c 16 /dev/urandom | od -An -tx1 | tr -d " \n"'
	assert_status 0
	b=$output
	assert_contains "$stderr" "$said" "the second pod's debug log"
	assert_match "$a" '^[0-9a-f]{32}$' "random bytes"
	[ "$a" != "$b" ] || flunk "two spares' pods drew the same random bytes: $a"
	assert_eq "$(free_spares)" 0 "both spares taken"
	qp spares fill --no-refill >/dev/null || flunk "fill"
	# the clock is the host's at the take (the spare's was set when it was
	# made): between the host's before and after the run
	before=$(date +%s)
	run --separate-stderr qp --debug run --rm --mode vm "$ROOTFS" -- date +%s
	assert_status 0
	after=$(date +%s)
	t=$output
	assert_contains "$stderr" "$said" "the third pod's debug log"
	[ "$t" -ge "$before" ] && [ "$t" -le "$after" ] || flunk "a spare's clock: $t, the host's $before..$after"
	qp spares fill --no-refill >/dev/null || flunk "fill"
	run --separate-stderr qp run --rm --mode vm --read-only "$ROOTFS" -- sh -c 'touch /spare-ro-probe 2>&1; echo rc=$?'
	assert_status 0
	assert_contains "$output" "Read-only file system"
	assert_contains "$output" "rc=1"
	[ ! -e "$ROOTFS/spare-ro-probe" ] || { rm -f "$ROOTFS/spare-ro-probe"; flunk "a read-only rootfs was written"; }
	assert_eq "$(free_spares)" 0 "the read-only pod took the spare"
}

# mount_opts PID PATH: the per-mount options of the mount on PATH as PID sees it
mount_opts() {
	awk -v m="$2" '$5 == m { print $6 }' "/proc/$1/mountinfo" | tail -1
}

nice_of() { # TID-STAT-FILE: its nice value (the comm may hold spaces)
	sed 's/.*) //' "$1" | awk '{ print $17 }'
}

@test "spares: in QEMU's jail the share is read-only and the taking pod's rootfs nosuid, nodev; a pod whose cgroup path has spaces takes one; a malformed take leaves it free" {
	qp spares fill --no-refill >/dev/null || flunk "fill"
	local spare qemu share
	spare=$(spares_json | jq -r '.[0].name')
	qemu=$(spares_json | jq -r '.[0].qemu_pid')
	share=$(readlink -f "$ROOT")/.spares/$spare/share
	assert_match "$(mount_opts "$qemu" "$share")" '^ro,' "the share's options in the jail"
	# a request that is not one: refused, the spare stays free
	run python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(b"take ../x\n\n"); print(s.recv(512).decode().strip())' \
		"$ROOT/.spares/$spare/take.sock"
	assert_status 0
	assert_contains "$output" "a malformed take request"
	assert_eq "$(spares_json | jq -r '.[0] | "\(.status) \(.qemu_pid)"')" "free $qemu" "the spare after a malformed take"
	# the rootfs on a mount that allows setuid and devices (torn down by
	# teardown), so that the jail's nosuid,nodev are qpod's doing
	mkdir "$TEST_DIR/rootfs-suid"
	mount --bind "$ROOTFS" "$TEST_DIR/rootfs-suid"
	mount -o remount,bind,suid,dev "$TEST_DIR/rootfs-suid"
	assert_match "$(mount_opts $$ "$TEST_DIR/rootfs-suid")" '^rw,relatime$' "the rootfs's own mount"
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["sleep", "60"] |
		.root.path = "'"$TEST_DIR/rootfs-suid"'" | .linux.cgroupsPath = "qpod/'"$ID"' spaced"'
	qp_detached run "$ID" --bundle "$BUNDLE" -d
	assert_eq "$(pod_field "$ID" vmm_pid)" "$qemu" "the pod's VMM is the spare's QEMU"
	grep -q ":/qpod/$ID spaced\$" "/proc/$qemu/cgroup" || flunk "QEMU not in the pod's cgroup: $(cat "/proc/$qemu/cgroup")"
	assert_match "$(mount_opts "$qemu" "$share/root")" '^rw,nosuid,nodev' "the pod's rootfs in the jail"
	qp kill "$ID" KILL
	wait_for 200 status_is "$ID" stopped
	qp delete "$ID" || flunk "delete"
	wait_for 40 gone "$qemu"
	[ ! -e "$CGROUP_FS/memory/qpod/$ID spaced" ] && [ ! -e "$CGROUP_FS/qpod/$ID spaced" ] || flunk "the pod's cgroup left"
}

@test "spares: a refill's spare is made at nice 10; the pod that takes it runs its QEMU at the taker's nice value" {
	qp spares fill --count 1 >/dev/null || flunk "fill"
	qp run --rm --mode vm "$ROOTFS" -- true || flunk "the first take"
	wait_for 400 free_is 1
	local qemu t mine
	qemu=$(spares_json | jq -r '[.[] | select(.status == "free")][0].qemu_pid')
	assert_eq "$(nice_of "/proc/$qemu/stat")" 10 "a refill's spare QEMU"
	qp spares drain >/dev/null
	qp spares fill --count 1 --no-refill >/dev/null || flunk "fill"
	qemu=$(spares_json | jq -r '.[0].qemu_pid')
	renice -n 10 -p "$(spares_json | jq -r '.[0].holder_pid')" "$qemu" >/dev/null
	nice -n 3 "$QPOD" --root "$ROOT" run -d --mode vm --name "$ID" "$ROOTFS" -- sleep 60 </dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err" ||
		flunk "run" "$(cat "$TEST_DIR/pod.err")"
	assert_eq "$(pod_field "$ID" vmm_pid)" "$qemu" "the pod's VMM is the spare's QEMU"
	mine=$(( $(nice_of /proc/self/stat) + 3 ))
	for t in /proc/"$qemu"/task/*; do
		assert_eq "$(nice_of "$t/stat")" "$mine" "QEMU thread $(cat "$t/comm")"
	done
	qp kill "$ID" KILL
	wait_for 200 status_is "$ID" stopped
	qp delete "$ID"
}

@test "spares: pods that cannot take one (a cold boot, a bind mount of their own, another memory size) boot without it, and it stays free" {
	qp spares fill --no-refill >/dev/null || flunk "fill"
	local qemu
	qemu=$(spares_json | jq -r '.[0].qemu_pid')
	run --separate-stderr qp run --rm --mode vm --boot cold --timeline "$ROOTFS" -- true
	assert_status 0
	timeline_of "$stderr" | jq -e 'has("take") | not' >/dev/null || flunk "a cold boot took a spare"
	run --separate-stderr qp run --rm --mode vm --memory 192M --timeline "$ROOTFS" -- true
	assert_status 0
	timeline_of "$stderr" | jq -e 'has("take") | not' >/dev/null || flunk "a 192M pod took a 256M spare"
	mkdir -p "$TEST_DIR/data"
	echo shared >"$TEST_DIR/data/f"
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false | .process.args = ["cat", "/data/f"] |
		.mounts += [{destination: "/data", type: "bind", source: "'"$TEST_DIR/data"'", options: ["rbind", "ro"]}]'
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_eq "$output" shared "the bind mount's file"
	assert_eq "$(spares_json | jq -r '.[0] | "\(.status) \(.qemu_pid)"')" "free $qemu" "the spare after three pods"
}

@test "spares: fill keeps the pool's count, a take starts a replacement; drain stops it" {
	run --separate-stderr qp spares fill --count 1
	assert_status 0
	[ -f "$ROOT/.spares/target" ] || flunk "no target kept"
	run --separate-stderr qp run --rm --mode vm "$ROOTFS" -- true
	assert_status 0
	# the replacement is made in the background
	wait_for 400 free_is 1
	run --separate-stderr qp spares fill --count 1
	assert_status 0
	assert_eq "$(jq '.made | length' <<<"$output")" 0 "a full pool: nothing made"
	run --separate-stderr qp spares drain
	assert_status 0
	assert_eq "$output" '{"stopped":1}'
	[ ! -e "$ROOT/.spares/target" ] || flunk "the target outlived the drain"
	run --separate-stderr qp run --rm --mode vm "$ROOTFS" -- true
	assert_status 0
	sleep 1
	assert_eq "$(spares_json)" "[]" "a take after drain made a spare"
}

@test "spares faults: a killed holder takes its QEMU along, no pod takes its spare (the pod clones), gc removes its dir; a killed monitor takes its spare's QEMU along; drain leaves a taken spare's pod running" {
	qp spares fill --count 2 --no-refill >/dev/null || flunk "fill"
	local holder qemu dead
	holder=$(spares_json | jq -r '.[0].holder_pid')
	qemu=$(spares_json | jq -r '.[0].qemu_pid')
	dead=$(spares_json | jq -r '.[0].name')
	kill -KILL "$holder"
	wait_for 100 gone "$qemu"
	assert_eq "$(spares_json | jq -r '[.[] | .name] | index("'"$dead"'")')" null "a dead spare listed"
	# the living one is taken, then no spare is left: a clone
	run --separate-stderr qp run --rm --mode vm --timeline "$ROOTFS" -- true
	assert_status 0
	timeline_of "$stderr" | jq -e '.take > 0' >/dev/null || flunk "the living spare was not taken: $stderr"
	run --separate-stderr qp run --rm --mode vm --timeline "$ROOTFS" -- true
	assert_status 0
	timeline_of "$stderr" | jq -e '.restore > 0' >/dev/null || flunk "not a clone: $stderr"
	[ -d "$ROOT/.spares/$dead" ] || flunk "the dead spare's dir went before gc"
	run --separate-stderr qp gc
	assert_status 0
	assert_contains "$output" "1 dead spare(s)"
	[ ! -e "$ROOT/.spares/$dead" ] || flunk "gc left the dead spare's dir"
	# a pod's QEMU dies with its monitor: a spare's too, though it is
	# its holder's child (the holder stands in), and the spare's dir goes
	qp spares fill --no-refill >/dev/null || flunk "fill"
	local spare
	spare=$(spares_json | jq -r '[.[] | select(.status == "free")][0].name')
	qp_detached run -d --mode vm --name "$ID2" "$ROOTFS" -- sleep 60
	qemu=$(pod_field "$ID2" vmm_pid)
	kill -KILL "$(pod_field "$ID2" pid)"
	wait_for 100 gone "$qemu"
	wait_for 40 test ! -e "$ROOT/.spares/$spare"
	assert_eq "$(pod_field "$ID2" status)" stopped "the pod whose monitor died"
	qp delete "$ID2" || flunk "delete"
	# drain stops free spares only
	qp spares fill --count 2 --no-refill >/dev/null || flunk "fill"
	qp_detached run -d --mode vm --name "$ID" "$ROOTFS" -- sleep 60
	run --separate-stderr qp spares drain
	assert_eq "$output" '{"stopped":1}'
	assert_eq "$(pod_field "$ID" status)" running "the pod that took a spare"
	assert_eq "$(qp exec "$ID" echo still)" still "exec after drain"
}

@test "spares bad input: counts, subcommands, options, and spares without QEMU's jail are refused by name" {
	run --separate-stderr qp spares fill --count 0
	assert_qpod_error
	assert_contains "$stderr" "--count must be 1..64"
	run --separate-stderr qp spares fill --count 65
	assert_qpod_error
	run --separate-stderr qp spares fill --count x
	assert_qpod_error
	assert_contains "$stderr" "--count"
	run --separate-stderr qp spares fill --memory lots
	assert_qpod_error
	assert_contains "$stderr" "--memory"
	run --separate-stderr qp spares frobnicate
	assert_qpod_error
	assert_contains "$stderr" "unknown subcommand \"frobnicate\""
	run --separate-stderr qp spares
	assert_qpod_error
	run --separate-stderr qp spares list --bogus
	assert_qpod_error
	run --separate-stderr qp spares list --count 3
	assert_qpod_error
	assert_contains "$stderr" "--count is not an option of list"
	run --separate-stderr qp spares fill --format json
	assert_qpod_error
	assert_contains "$stderr" "--format is not an option of fill"
	run --separate-stderr qp spares drain extra
	assert_qpod_error
	run --separate-stderr env QPOD_VM_JAIL=off "$QPOD" --root "$ROOT" spares fill
	assert_qpod_error
	assert_contains "$stderr" "spares need QEMU's jail"
	assert_eq "$(spares_json)" "[]" "spares after refusals"
	run qp spares --help
	assert_status 0
	assert_contains "$output" "Usage: qpod spares fill"
}

@test "spares: a pod with a terminal takes a spare (run -t): the same session as a cold boot's, and a take in its timeline" {
	local qemu
	qp spares fill --no-refill >/dev/null || flunk "fill"
	qemu=$(spares_json | jq -r '.[0].qemu_pid')
	tty_steps 'qp-spare$ ' 34x99 5
	run "$PTYRUN" --timeout 120 --size 23x79 "${TTY_STEPS[@]}" -- \
		"$QPOD" --root "$ROOT" run -t --rm --mode vm --timeline -e 'PS1=qp-spare$ ' "$ROOTFS" -- sh
	assert_status 5
	assert_tty_session "$output" "23 79" "34 99"
	tr -d '\r' <<<"$output" | sed -n 's/^.*qpod-timeline: //p' | jq -e '.take > 0' >/dev/null ||
		flunk "not a spare's timeline: $output"
	gone "$qemu" || flunk "the spare's QEMU outlived its pod"
}
