#!/usr/bin/env bats
# tests/cli/template.bats — VM templates (vm/snapshot/template.c): `qpod template
# list|create|rm`, pods started as clones (--boot template|auto|cold), what
# makes a clone unique (RNG, clock, hostname), and the faults: a corrupted
# or deleted template, a full cache, clones with mounts and with a NIC,
# concurrent makers, the TSC rate TCG guests are told.
# Each test has a private cache ($TCACHE, the guest kernel linked in), so
# its templates are its own and go with it.

load helpers

setup() {
	need_vm
	setup_common
	vm_env
	TCACHE=$TEST_DIR/cache
	mkdir -p "$TCACHE"
	ln -s "$(dirname "$(dirname "$VM_KERNEL")")" "$TCACHE/kernel"
}

teardown() {
	teardown_common
	if [ -n "${NS:-}" ]; then ip netns del "$NS" 2>/dev/null || true; fi
	# outside $TEST_DIR (removed above), unmounted once the pods are gone
	if [ -n "${SMALL_MNT:-}" ]; then umount "$SMALL_MNT" && rmdir "$SMALL_MNT"; fi
}

tq() { # qpod with the test's cache
	QPOD_CACHE=$TCACHE "$QPOD" --root "$ROOT" "$@"
}

tpl_keys() {
	tq template list | jq -r .key
}

# the pod's phases: a clone has restore/resume, a cold boot kernel/firmware
timeline_of() { # STDERR-TEXT -> the JSON of its qpod-timeline line
	sed -n 's/^qpod-timeline: //p' <<<"$1"
}

@test "template create, list, rm: one template per set of inputs, parseable output, clear errors" {
	run --separate-stderr tq template list
	assert_status 0
	assert_eq "$output" "" "no template yet"
	run --separate-stderr tq template create --memory 128M
	assert_status 0
	assert_eq "$(jq -r .made <<<"$output")" true "made"
	local key
	key=$(jq -r .key <<<"$output")
	assert_match "$key" '^[0-9a-f]{16}$' "key"
	run --separate-stderr tq template create --memory 128M
	assert_status 0
	assert_eq "$(jq -r .made <<<"$output") $(jq -r .key <<<"$output")" "false $key" "the same inputs: the same template"
	run --separate-stderr tq template create --memory 160M --vcpus 2
	assert_status 0
	[ "$(jq -r .key <<<"$output")" != "$key" ] || flunk "other memory and vCPUs gave the same key"
	run --separate-stderr tq template list
	assert_status 0
	assert_eq "$(jq -s length <<<"$output")" 2 "templates listed"
	assert_contains "$(jq -r --arg k "$key" 'select(.key == $k) | "\(.mem_mb) \(.meta)"' <<<"$output")" "128 proto="
	assert_contains "$output" "mem=160M vcpus=2"
	# nothing half-made is left beside them
	assert_eq "$(cd "$TCACHE/templates" && ls -A | grep -v -E '^[0-9a-f]{16}(\.lock)?$' || true)" "" "stray files"
	run --separate-stderr tq template rm "$key"
	assert_status 0
	assert_not_contains "$(tpl_keys)" "$key" "after rm"
	run --separate-stderr tq template rm "$key"
	assert_qpod_error 125
	assert_contains "$stderr" "no template $key"
	run --separate-stderr tq template rm ../etc
	assert_qpod_error 125
	assert_contains "$stderr" "is not a template key"
	run --separate-stderr tq template create --accel hvf
	assert_qpod_error 125
	assert_contains "$stderr" "--accel must be auto, kvm or tcg"
	run --separate-stderr tq template frobnicate
	assert_qpod_error 125
	run --separate-stderr tq template
	assert_qpod_error 125
}

@test "--boot template: the pod is a clone (restore, no kernel boot); output and exit status as a cold pod's" {
	run --separate-stderr tq run --mode vm --boot template --rm --timeline "$ROOTFS" -- sh -c 'echo from-clone; echo err >&2; exit 7'
	assert_status 7
	assert_eq "$output" from-clone "stdout"
	local tl
	tl=$(timeline_of "$stderr")
	jq -e '.restore > 0 and .resume >= 0 and .start_total > 0 and (has("kernel") | not)' <<<"$tl" >/dev/null ||
		flunk "not a clone's timeline: $tl"
	assert_eq "$(tpl_keys | wc -l)" 1 "the template made on first use"
	run --separate-stderr tq run --mode vm --boot cold --rm --timeline "$ROOTFS" -- sh -c 'echo cold; exit 3'
	assert_status 3
	assert_eq "$output" cold
	jq -e '.kernel > 0 and (has("restore") | not)' <<<"$(timeline_of "$stderr")" >/dev/null ||
		flunk "--boot cold did not boot a kernel: $stderr"
	# the default is auto: a clone, now that the template exists
	run --separate-stderr tq run --mode vm --rm --timeline "$ROOTFS" -- true
	assert_status 0
	jq -e '.restore > 0' <<<"$(timeline_of "$stderr")" >/dev/null || flunk "auto did not clone: $stderr"
}

@test "what the template set up before its HELLO is there in a clone and in a 9p root: lo up, /dev/pts, /sys/fs/cgroup" {
	local probe='cat /sys/class/net/lo/flags; grep -E "^(devpts /dev/pts|cgroup2 /sys/fs/cgroup|tmpfs /tmp) " /proc/mounts | cut -d" " -f1-3; ls /dev/pts/ptmx'
	local boot out=()
	for boot in template cold; do
		run --separate-stderr tq run --mode vm --boot "$boot" --rm "$ROOTFS" -- sh -c "$probe"
		assert_status 0
		out+=("$output")
	done
	assert_eq "${out[0]}" "${out[1]}" "clone and cold boot see the same"
	# IFF_UP (0x1) in lo's flags; the three mounts in the pod's root
	[ $(( $(head -n1 <<<"${out[0]}") & 1 )) -eq 1 ] || flunk "lo is not up: ${out[0]}"
	assert_eq "$(sed -n 2,4p <<<"${out[0]}" | sort | tr '\n' '|')" \
		"cgroup2 /sys/fs/cgroup cgroup2|devpts /dev/pts devpts|tmpfs /tmp tmpfs|" "mounts"
	assert_eq "$(tail -n1 <<<"${out[0]}")" /dev/pts/ptmx
}

@test "clones are unique: each guest adds its own seed from the host, reseeds and takes the host's clock (it says so); own random bytes and hostname" {
	run --separate-stderr tq template create
	assert_status 0
	local script='hostname; head -c 16 /dev/urandom | od -An -tx1 | tr -d " \n"; echo; date +%s'
	local before after a b err_a err_b t
	before=$(date +%s)
	run --separate-stderr tq --debug run --mode vm --boot template --rm --hostname clone-a "$ROOTFS" -- sh -c "$script"
	assert_status 0
	a=$output err_a=$stderr
	run --separate-stderr tq --debug run --mode vm --boot template --rm --hostname clone-b "$ROOTFS" -- sh -c "$script"
	assert_status 0
	b=$output err_b=$stderr
	after=$(date +%s)
	# the mechanism: each guest's HELLO reported the seed added (a check of
	# the very seed this clone was sent), the CRNG reseeded and the clock
	# set, which the monitor verified (a clone that does not is refused);
	# the RNG of this kernel under TCG differs between clones even without
	# the seed, so the bytes alone would not show it
	local said="clone: the guest added the seed sent, reseeded its CRNG and set its clock"
	assert_contains "$err_a" "$said" "clone-a's debug log"
	assert_contains "$err_b" "$said" "clone-b's debug log"
	# the property
	assert_eq "$(sed -n 1p <<<"$a") $(sed -n 1p <<<"$b")" "clone-a clone-b" "hostnames"
	assert_match "$(sed -n 2p <<<"$a")" '^[0-9a-f]{32}$' "random bytes"
	[ "$(sed -n 2p <<<"$a")" != "$(sed -n 2p <<<"$b")" ] || flunk "two clones drew the same random bytes: $a / $b"
	# the clock is the host's, set when the clone started (the template's
	# froze when it was made): no earlier than the host's before the runs,
	# no later than after them
	for t in "$(sed -n 3p <<<"$a")" "$(sed -n 3p <<<"$b")"; do
		[ "$t" -ge "$before" ] && [ "$t" -le "$after" ] || flunk "the clone's clock says $t, the host's was $before..$after"
	done
}

@test "a pod with mounts of its own is a clone: its shares (a directory and a file) are its own, one template per share count" {
	mkdir -p "$TEST_DIR/share"
	echo shared >"$TEST_DIR/share/f"
	echo staged >"$TEST_DIR/file"
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .annotations["qpod.vm.boot"] = "template"
		| .process.terminal = false | .process.args = ["sh", "-c", "cat /mnt/f /etc/motd"]
		| .mounts += [{"destination": "/mnt", "type": "bind", "source": "'"$TEST_DIR/share"'", "options": ["rbind", "ro"]},
		              {"destination": "/etc/motd", "type": "bind", "source": "'"$TEST_DIR/file"'", "options": ["bind"]}]'
	run --separate-stderr tq run --timeline --bundle "$BUNDLE" "$ID"
	assert_status 0
	assert_eq "$output" "shared
staged"
	jq -e '.restore > 0 and (has("kernel") | not)' <<<"$(timeline_of "$stderr")" >/dev/null ||
		flunk "not a clone: $stderr"
	assert_eq "$(tq template list | jq -r '.meta | capture("nic=(?<n>[01]) shares=(?<s>[0-9]+)") | "\(.n) \(.s)"')" "0 2" \
		"the template's device set"
	# another pod with other sources clones the same template and sees its own
	echo other >"$TEST_DIR/share/f"
	echo other-file >"$TEST_DIR/file"
	run --separate-stderr tq run --bundle "$BUNDLE" "$ID"
	assert_status 0
	assert_eq "$output" "other
other-file"
	assert_eq "$(tpl_keys | wc -l)" 1 "templates"
	run --separate-stderr tq run --mode vm --boot sometimes --rm "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "--boot must be auto, template or cold"
}

@test "clones with a NIC: each its own MAC and address on the bridge, they reach each other; no tap or lease left" {
	NS=qptpl$$$BATS_TEST_NUMBER
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	tn() { nsenter --net="/run/netns/$NS" env QPOD_CACHE="$TCACHE" "$QPOD" --root "$ROOT" "$@"; }
	tn run -d --name "$ID" --mode vm --boot template --net bridge --ip 10.213.0.20 "$ROOTFS" -- sleep 60 \
		</dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err" || flunk "run -d: $(cat "$TEST_DIR/pod.err")"
	run --separate-stderr tn run --timeline --mode vm --boot template --net bridge --ip 10.213.0.21 --rm "$ROOTFS" -- \
		sh -c 'cat /sys/class/net/eth0/address; ip -4 -o addr show eth0; ping -c 1 -W 10 10.213.0.20 >/dev/null && echo peer-ok'
	assert_status 0
	jq -e '.restore > 0' <<<"$(timeline_of "$stderr")" >/dev/null || flunk "not a clone: $stderr"
	assert_contains "$output" "inet 10.213.0.21/22"
	assert_contains "$output" "peer-ok"
	local mac_b mac_a
	mac_b=${lines[0]}
	mac_a=$(tn exec "$ID" cat /sys/class/net/eth0/address)
	assert_match "$mac_a" '^([0-9a-f]{2}:){5}[0-9a-f]{2}$' "MAC of the first clone"
	[ "$mac_a" != "$mac_b" ] || flunk "two clones share the MAC $mac_a"
	[ "$mac_a" != 02:00:00:00:00:01 ] || flunk "the clone kept the template's MAC"
	assert_eq "$(tq template list | jq -r '.meta | capture("nic=(?<n>[01])") | .n')" 1 "a template with a NIC"
	tn delete --force "$ID"
	assert_eq "$(ip -n "$NS" -o link show | grep -c ' qp[0-9a-f]\{10\}\| qpt-')" 0 "tap links left"
	assert_eq "$(cat "$ROOT/.net/ipam" 2>/dev/null)" "" "leases left"
}

@test "faults: a corrupted template: auto boots cold, says so and remakes it; --boot template fails cleanly" {
	local key
	key=$(tq template create | jq -r .key)
	head -c 4096 /dev/urandom >"$TCACHE/templates/$key/state"
	run --separate-stderr tq run --mode vm --boot template --rm "$ROOTFS" -- echo never
	assert_qpod_error 125
	assert_contains "$stderr" "VM template $key did not restore (removed)"
	[ "$output" = "" ] || flunk "it ran: $output"
	assert_eq "$(ls "$ROOT" 2>/dev/null | grep -v '^\.' || true)" "" "state dirs left"
	assert_eq "$(tpl_keys)" "" "the template that did not restore"
	# again, and this time auto: a cold boot
	key=$(tq template create | jq -r .key)
	printf 'garbage' >"$TCACHE/templates/$key/state"
	run --separate-stderr tq run --mode vm --rm --timeline "$ROOTFS" -- echo works
	assert_status 0
	assert_eq "$output" works
	assert_contains "$stderr" "did not restore"
	jq -e '.kernel > 0' <<<"$(timeline_of "$stderr")" >/dev/null || flunk "not a cold boot: $stderr"
	# the bad template is gone; the next auto pod makes a good one and clones it
	run --separate-stderr tq run --mode vm --rm --timeline "$ROOTFS" -- echo again
	assert_status 0
	assert_eq "$output" again
	jq -e '.restore > 0' <<<"$(timeline_of "$stderr")" >/dev/null || flunk "not a clone: $stderr"
	# a truncated RAM file is not a template at all: remade, not mapped
	key=$(tpl_keys)
	truncate -s 1M "$TCACHE/templates/$key/mem"
	run --separate-stderr tq run --mode vm --boot template --rm "$ROOTFS" -- echo fine
	assert_status 0
	assert_eq "$output" fine
	assert_eq "$(stat -c %s "$TCACHE/templates/$key/mem")" $((256 << 20)) "remade at full size"
}

@test "a template removed under running clones: they go on; concurrent first uses make one template" {
	tq run -d --mode vm --boot template --name "$ID" "$ROOTFS" -- sh -c 'sleep 30' >/dev/null
	tq template rm "$(tpl_keys)"
	run --separate-stderr tq exec "$ID" sh -c 'echo alive; head -c 1000000 /dev/zero | wc -c'
	assert_status 0
	assert_eq "${lines[0]} ${lines[1]}" "alive 1000000" "the clone after rm"
	tq delete --force "$ID"
	# two pods at once, no template yet: both run, one template results
	tq run --mode vm --boot template --rm "$ROOTFS" -- echo one >"$TEST_DIR/o1" 2>"$TEST_DIR/e1" &
	local p1=$!
	tq run --mode vm --boot template --rm "$ROOTFS" -- echo two >"$TEST_DIR/o2" 2>"$TEST_DIR/e2" &
	local p2=$!
	wait "$p1" || flunk "first: $(cat "$TEST_DIR/e1")"
	wait "$p2" || flunk "second: $(cat "$TEST_DIR/e2")"
	assert_eq "$(cat "$TEST_DIR/o1") $(cat "$TEST_DIR/o2")" "one two"
	assert_eq "$(tpl_keys | wc -l)" 1 "templates after two concurrent first uses"
	! pgrep -f -- "$TCACHE/templates" >/dev/null || flunk "a template's QEMU is left"
}

@test "TCG guests are told the TSC's rate and keep their lock prefixes: the tsc clocksource in cold boots and clones; clones idle on the LAPIC timer" {
	grep -m1 '^flags' /proc/cpuinfo | grep -qw constant_tsc && grep -m1 '^flags' /proc/cpuinfo | grep -qw nonstop_tsc ||
		skip "this host's TSC is not invariant (no constant_tsc/nonstop_tsc): qpod does not pass its rate"
	[ "${QPOD_ACCEL:-}" = tcg ] || skip "a TCG test (QPOD_ACCEL=${QPOD_ACCEL:-auto}); under KVM the guest uses kvm-clock"
	local cs=/sys/devices/system/clocksource/clocksource0/current_clocksource
	local ce=/sys/devices/system/clockevents/clockevent0/current_device
	run --separate-stderr tq run --mode vm --boot cold --rm "$ROOTFS" -- sh -c "cat $cs $ce /proc/cmdline"
	assert_status 0
	local khz
	khz=$(awk '{print $2}' "$TCACHE/tsc-khz")
	assert_match "$khz" '^[1-9][0-9]{2,4}000$' "the measured rate (to the MHz), cached per boot"
	assert_eq "$(awk '{print $1}' "$TCACHE/tsc-khz")" "$(cat /proc/sys/kernel/random/boot_id)" "the cache's boot id"
	# tsc-early until the kernel's delayed switch to tsc (about a second in)
	assert_match "${lines[0]}" '^tsc(-early)?$' "a cold boot's clocksource"
	assert_eq "${lines[1]}" pit "a cold boot's clock events (one vCPU: no LAPIC calibration)"
	assert_contains "${lines[2]}" "tsc_early_khz=$khz"
	# the one-CPU lock-prefix patching is skipped under TCG (guest_cmdline.c)
	assert_contains "${lines[2]}" " noreplace-smp"
	run --separate-stderr tq run --mode vm --boot template --rm "$ROOTFS" -- sh -c "cat $cs $ce"
	assert_status 0
	assert_match "${lines[0]}" '^tsc(-early)?$' "a clone's clocksource"
	assert_eq "${lines[1]}" lapic "a clone's clock events"
}

@test "faults: a full cache file system while a template is made: --boot template fails saying so, auto boots cold; nothing left" {
	local small
	small=$(mktemp -d /tmp/qpod-small-cache.XXXXXX)
	SMALL_MNT=$small
	mount -t tmpfs -o size=8M tmpfs "$small"
	ln -s "$(readlink "$TCACHE/kernel")" "$small/kernel"
	run --separate-stderr env QPOD_CACHE="$small" "$QPOD" --root "$ROOT" run --mode vm --boot template --rm "$ROOTFS" -- echo never
	assert_qpod_error 125
	assert_contains "$stderr" "could not grow: is the cache's file system full?"
	[ "$output" = "" ] || flunk "it ran: $output"
	assert_eq "$(ls -A "$ROOT" | grep -v '^\.' || true)" "" "state dirs left"
	assert_eq "$(ls -A "$small/templates" | grep -v '\.failed$\|\.lock$' || true)" "" "a half-made template left"
	run --separate-stderr env QPOD_CACHE="$small" "$QPOD" --root "$ROOT" run --mode vm --rm --timeline "$ROOTFS" -- echo cold
	assert_status 0
	assert_eq "$output" cold
	jq -e '.kernel > 0' <<<"$(timeline_of "$stderr")" >/dev/null || flunk "auto did not boot cold: $stderr"
	! pgrep -f -- "$small/templates" >/dev/null || flunk "a template's QEMU is left"
}

@test "stale templates: list says which, prune removes only them and dead makers' debris, making a template prunes" {
	cp "$VM_KERNEL" "$TEST_DIR/vmlinux"
	local mine other
	mine=$(QPOD_KERNEL=$TEST_DIR/vmlinux tq template create --memory 128M | jq -r .key)
	other=$(tq template create --memory 128M | jq -r .key)
	[ "$mine" != "$other" ] || flunk "two kernels, one key"
	assert_eq "$(tq template list | jq -r 'select(.stale) | .key')" "" "stale before the kernel changed"
	touch -d '1 minute ago' "$TEST_DIR/vmlinux" # a rebuilt kernel: another mtime
	assert_eq "$(tq template list | jq -r 'select(.stale) | .key')" "$mine" "stale after"
	mkdir "$TCACHE/templates/.tmp-${other}-999999999" # a maker that died (no such pid)
	run --separate-stderr tq template prune
	assert_status 0
	assert_eq "$(jq -c .removed <<<"$output")" "[\"$mine\"]" "removed"
	assert_eq "$(tpl_keys)" "$other" "what is left"
	[ ! -e "$TCACHE/templates/.tmp-${other}-999999999" ] || flunk "a dead maker's directory is left"
	# a pod of the changed kernel makes its new template, which prunes the old one
	mine=$(QPOD_KERNEL=$TEST_DIR/vmlinux tq template create --memory 128M | jq -r .key)
	touch -d '2 minutes ago' "$TEST_DIR/vmlinux"
	run --separate-stderr env QPOD_KERNEL="$TEST_DIR/vmlinux" QPOD_CACHE="$TCACHE" "$QPOD" --root "$ROOT" \
		run --mode vm --memory 128M --boot template --rm "$ROOTFS" -- echo ok
	assert_status 0
	assert_eq "$output" ok
	assert_eq "$(tq template list | jq -r 'select(.stale) | .key')" "" "stale templates after a making"
	assert_eq "$(tpl_keys | wc -l)" 2 "the other kernel's and the new one"
	run --separate-stderr tq template prune extra
	assert_qpod_error
	assert_contains "$stderr" 'unexpected argument "extra"'
}

@test "a clone's terminal (run -t --boot template): the same session as a cold boot's" {
	tty_steps 'qp-clone$ ' 36x100 4
	run "$PTYRUN" --timeout 120 --size 26x90 "${TTY_STEPS[@]}" -- env QPOD_CACHE="$TCACHE" \
		"$QPOD" --root "$ROOT" run -t --rm --mode vm --boot template --timeline -e 'PS1=qp-clone$ ' "$ROOTFS" -- sh
	assert_status 4
	assert_tty_session "$output" "26 90" "36 100"
	# --timeline's line went to the terminal too: a clone's phases
	local tl
	tl=$(tr -d '\r' <<<"$output" | sed -n 's/^.*qpod-timeline: //p')
	jq -e '.restore > 0 and (has("kernel") | not)' <<<"$tl" >/dev/null || flunk "not a clone: $tl"
}
