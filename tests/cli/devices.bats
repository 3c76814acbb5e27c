#!/usr/bin/env bats
# tests/cli/devices.bats — device access, enforced as under runc: a pod may
# mknod any node (CAP_MKNOD is in the default set) but opens only the
# standard devices and what linux.resources.devices allows; on cgroup v1
# through the devices controller (devices.list shows the rules), on cgroup
# v2 through an eBPF filter (here: the unified tree of this hybrid host,
# chosen with QPOD_CGROUP_ROOT).  Malformed rules fail create.

load helpers

EPERM="Operation not permitted"

# "MAJ MIN" of a block device of this host that the host itself opens for
# reading through a node made on a tmpfs of its own (no nodev mount, no
# device cgroup of ours in the way), so that in a pod nothing but qpod's
# device rules can refuse the same node: its disk where the host may open it
# (a sandboxed host may not), else another block device; never loop0, which
# the probe opens on its own. None: fail.
host_block() {
	local mnt found
	mnt=$(mktemp -d "$TEST_DIR/blk.XXXXXX")
	# disks first, then the rest; loop0 never
	found=$(ls /sys/block | awk '/^(loop|ram|zram)/ { rest = rest $0 "\n"; next } { print } END { printf "%s", rest }' |
		grep -vx loop0 | while read -r d; do
			dev=$(tr ':' ' ' <"/sys/block/$d/dev") || continue
			# shellcheck disable=SC2086 # "MAJ MIN"
			if unshare -m sh -c 'mount -t tmpfs -o mode=700 qpod-probe "$1" && mknod "$1/n" b $2 && : <"$1/n"' \
				sh "$mnt" "$dev" 2>/dev/null; then
				echo "$dev"
				break
			fi
		done)
	rmdir "$mnt"
	[ -n "$found" ] || flunk "no block device of this host opens on the host: nothing to probe the pod's rules with"
	echo "$found"
}

setup() {
	setup_common
	DISK=$(host_block) || return 1
}

# sh script: mknod + open for reading loop-control (c 10:237), loop0 (b 7:0)
# and $DISK; one line per node: "NAME opened" or "NAME refused: REASON"
probe_script() {
	echo "probe() { mknod /dev/\$1 \$2 \$3 \$4 || echo \"\$1 mknod failed\"
			if r=\$( (: </dev/\$1) 2>&1); then echo \"\$1 opened\"; else echo \"\$1 refused: \${r##*: }\"; fi; }
		probe lc c 10 237; probe l0 b 7 0; probe disk b $DISK"
}

bundle_with_rules() { # JQ-FILTER on .linux.resources.devices
	make_bundle "$BUNDLE" ".linux.resources.devices |= ($1)"
}

# the bundle's process: sh -c SCRIPT
bundle_sh() {
	jq --arg s "$1" '.process.args = ["sh", "-c", $s]' "$BUNDLE/config.json" >"$BUNDLE/c.json" &&
		mv "$BUNDLE/c.json" "$BUNDLE/config.json"
}

# after `run` of probe_script: each NAME... was refused with EPERM (made
# with mknod, so the open got as far as the device rules)
assert_refused() {
	local n
	for n in "$@"; do
		grep -qx "$n refused: $EPERM" <<<"$output" || flunk "$n: expected refused with EPERM:" "$output"
	done
}

@test "default pod: mknod works, but loop-control, loop0 and a block device the host opens cannot be opened" {
	# the friendly form: the default spec (deny all, as runc's)
	run --separate-stderr qp run --rm --name "$ID" "$ROOTFS" -- sh -c "$(probe_script)"
	assert_status 0
	assert_not_contains "$output" "mknod failed"
	assert_refused lc l0 disk
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
	assert_contains "$output" "lc opened"
	assert_refused l0 disk
	# an update re-applies the pod's rules, which changes nothing
	run --separate-stderr qp update --pids-limit 50 "$ID"
	assert_status 0
	if [ -d "$CGROUP_FS/devices" ]; then
		assert_eq "$(cat "$(cg_file devices devices.list devices.list)")" "$list" "devices.list after update"
	fi
	run --separate-stderr qp exec "$ID" sh -c '(: <>/dev/lc) && echo lc-opened'
	assert_status 0
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
	assert_not_contains "$output" "mknod failed"
	assert_refused lc l0 disk
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
	assert_not_contains "$output" "mknod failed"
	assert_refused lc l0 disk

	bundle_with_rules '. + [{"allow": true, "type": "c", "major": 10, "minor": 237, "access": "rwm"}]'
	bundle_sh "$(probe_script)"
	run --separate-stderr qp run "$ID2" --bundle "$BUNDLE"
	assert_status 0
	assert_contains "$output" "lc opened"
	assert_refused l0 disk
	unset QPOD_CGROUP_ROOT
}
