#!/usr/bin/env bats
# tests/cli/devices.bats — device access, enforced as under runc: a pod may
# mknod any node (CAP_MKNOD is in the default set) but opens only the
# standard devices and what linux.resources.devices allows; on cgroup v1
# through the devices controller (devices.list shows the rules), on cgroup
# v2 through an eBPF filter (here: the unified tree of this hybrid host,
# chosen with QPOD_CGROUP_ROOT).  Malformed rules fail create.

load helpers

EPERM="Operation not permitted"

# a block device of this host that is not a loop device: "MAJ MIN"
host_disk() {
	local d
	for d in /sys/block/*; do
		case ${d##*/} in loop* | ram* | zram*) continue ;; esac
		tr ':' ' ' <"$d/dev"
		return 0
	done
	echo "8 0"
}

# sh script: mknod + open loop-control (c 10:237), loop0 (b 7:0), the disk
probe_script() {
	local disk
	disk=$(host_disk)
	echo "mknod /dev/lc c 10 237 && echo mknod-ok
		(: <>/dev/lc) 2>&1 && echo lc-opened
		mknod /dev/l0 b 7 0; (: </dev/l0) 2>&1 && echo l0-opened
		mknod /dev/disk b $disk; (: </dev/disk) 2>&1 && echo disk-opened; true"
}

bundle_with_rules() { # JQ-FILTER on .linux.resources.devices
	make_bundle "$BUNDLE" ".linux.resources.devices |= ($1)"
}

# the bundle's process: sh -c SCRIPT
bundle_sh() {
	jq --arg s "$1" '.process.args = ["sh", "-c", $s]' "$BUNDLE/config.json" >"$BUNDLE/c.json" &&
		mv "$BUNDLE/c.json" "$BUNDLE/config.json"
}

@test "default pod: mknod works, but loop-control, loop0 and the host's disk cannot be opened" {
	# the friendly form: the default spec (deny all, as runc's)
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- sh -c "$(probe_script)"
	assert_status 0
	assert_contains "$output" mknod-ok
	assert_not_contains "$output" opened "opened a host device"
	assert_eq "$(grep -c "$EPERM" <<<"$output")" 3 "EPERM count in: $output"
}

@test "default pod: /dev/null, zero, full, random, urandom, tty and ptmx stay usable" {
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- sh -c '
		echo x >/dev/null && echo null-ok
		[ "$(head -c 4 /dev/zero | wc -c)" = 4 ] && echo zero-ok
		head -c 4 /dev/urandom >/dev/null && echo urandom-ok
		head -c 4 /dev/random >/dev/null && echo random-ok
		(echo x >/dev/full) 2>&1
		(: <>/dev/tty) 2>&1
		(: <>/dev/ptmx) && echo ptmx-ok'
	assert_status 0
	local w
	for w in null-ok zero-ok urandom-ok random-ok ptmx-ok "No space left on device"; do
		assert_contains "$output" "$w"
	done
	# no controlling terminal (ENXIO), but the cgroup lets it through
	assert_contains "$output" "No such device or address" "/dev/tty"
	assert_not_contains "$output" "$EPERM"
}

@test "bundle: an allow rule for c 10:237 rwm opens loop-control; devices.list shows the rules; update keeps them" {
	bundle_with_rules '. + [{"allow": true, "type": "c", "major": 10, "minor": 237, "access": "rwm"}]'
	bundle_sh "sleep 30"
	qp_detached create --bundle "$BUNDLE" "$ID"
	qp start "$ID"
	local list
	if [ -d "$CGROUP_FS/devices" ]; then
		list=$(cat "$(cg_file devices devices.list devices.list)")
		assert_contains "$list" "c 10:237 rwm"
		assert_contains "$list" "c 1:3 rwm"
		assert_contains "$list" "c *:* m"
		assert_not_contains "$list" "a *:* rwm"
		assert_not_contains "$list" "b 7:"
	fi
	run --separate-stderr qp exec "$ID" sh -c "$(probe_script)"
	assert_status 0
	assert_contains "$output" lc-opened
	assert_not_contains "$output" l0-opened
	assert_not_contains "$output" disk-opened
	# an update re-applies the pod's rules, which changes nothing
	run --separate-stderr qp update --pids-limit 50 "$ID"
	assert_status 0
	if [ -d "$CGROUP_FS/devices" ]; then
		assert_eq "$(cat "$(cg_file devices devices.list devices.list)")" "$list" "devices.list after update"
	fi
	run --separate-stderr qp exec "$ID" sh -c '(: <>/dev/lc) && echo lc-opened'
	assert_contains "$output" lc-opened
	qp kill "$ID" KILL
	wait_for 100 status_is "$ID" stopped
	qp delete "$ID"
}

@test "bundle: device rules in order; a later deny takes back an earlier allow" {
	bundle_with_rules '. + [{"allow": true, "type": "c", "major": 10, "minor": 237, "access": "rwm"},
		{"allow": false, "type": "c", "major": 10, "minor": 237, "access": "rw"}]'
	bundle_sh "$(probe_script)"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
	assert_contains "$output" mknod-ok
	assert_not_contains "$output" opened
}

@test "malformed or unenforceable device rules are refused at create" {
	local bad
	for bad in '[{"allow": true, "type": "u", "access": "rwm"}]' \
		'[{"allow": true, "type": "c", "access": "rwx"}]' \
		'[{"type": "c", "access": "r"}]' \
		'[{"allow": true, "type": "c", "major": -5, "access": "r"}]' \
		'[{"allow": true, "type": "c", "access": "rwm"}, {"allow": false, "type": "c", "major": 10, "minor": 237, "access": "r"}]'; do
		bundle_with_rules "$bad"
		run qp_stdio_files create --bundle "$BUNDLE" "$ID"
		qp_file_stderr
		assert_qpod_error
		assert_match "${stderr_lines[0]}" 'linux\.resources\.devices(\[[0-9]\])?' "stderr for $bad"
		[ ! -e "$ROOT/$ID" ] || flunk "state left after a refused create ($bad)"
	done
	assert_contains "$stderr" "cannot punch a hole into the wildcard rule \"c *:* rwm\""
}

@test "cgroup v2 (the unified tree): the eBPF filter denies loop-control and loop0, allows /dev/null and an allowed rule" {
	[ "$(stat -f -c %T "$CGROUP_FS/unified" 2>/dev/null)" = cgroup2fs ] || skip "no unified cgroup2 tree"
	export QPOD_CGROUP_ROOT=$CGROUP_FS/unified
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- sh -c "echo x >/dev/null && echo null-ok; $(probe_script)"
	assert_status 0
	assert_contains "$output" null-ok
	assert_contains "$output" mknod-ok
	assert_not_contains "$output" opened "opened a host device"
	assert_eq "$(grep -c "$EPERM" <<<"$output")" 3 "EPERM count in: $output"

	bundle_with_rules '. + [{"allow": true, "type": "c", "major": 10, "minor": 237, "access": "rwm"}]'
	bundle_sh "$(probe_script)"
	run --separate-stderr qp run "$ID2" --bundle "$BUNDLE"
	assert_status 0
	assert_contains "$output" lc-opened
	assert_not_contains "$output" l0-opened
	unset QPOD_CGROUP_ROOT
}
