#!/usr/bin/env bats
# tests/cli/cgroup_v2_suite.bats — the suite's own cgroup test files, run
# unchanged on a pure cgroup v2 host: the microVM of v2_guest.bash runs
# bats on them there (cgroup_v2_suite.sh) and each must pass whole, so what
# this hybrid/v1 machine checks on v1 is checked on v2 as well (the
# limits, update, pause/freeze, the pod's /sys/fs/cgroup view).  A test a
# file skips in the guest names what the guest lacks (no block device).

load helpers
load v2_guest

SUITE_FILES="cgroups.bats pause_update.bats"

setup_file() {
	# shellcheck disable=SC2086 # the file names
	v2_guest_run cgroup_v2_suite.sh $SUITE_FILES
}
teardown_file() { v2_guest_cleanup; }

# tap FILE: the TAP that bats printed in the guest for FILE
tap() {
	sed -n "/^tap-begin $1\$/,/^tap-end $1 /p" "$GUEST_OUT" | sed '1d;$d'
}

# assert_file_passed FILE: a plan, as many results, none failed, bats rc 0
assert_file_passed() {
	local t plan n bad
	t=$(tap "$1")
	[ -n "$t" ] || flunk "no TAP for $1 from the guest" "$(tail -n 20 "$GUEST_ERR")"
	plan=$(sed -n 's/^1\.\.\([0-9]*\)$/\1/p' <<<"$t")
	n=$(grep -c '^\(not \)\?ok ' <<<"$t") || n=0
	# (grep's status 1 is "no failed test": not an error here)
	bad=$(grep -A 12 '^not ok ' <<<"$t") || bad=""
	[ -z "$bad" ] || flunk "$1 failed on the v2 host:" "$bad"
	[ -n "$plan" ] && [ "$plan" -gt 0 ] && [ "$n" -eq "$plan" ] || flunk "$1: plan ${plan:-none}, $n results" "$t"
	assert_match "$(grep "^tap-end $1 " "$GUEST_OUT")" ' rc=0$' "bats' exit status for $1"
}

@test "cgroup v2 guest: the VM ran the suite files to their end" {
	assert_eq "$(cat "$V/rc")" 0 "qpod run of the VM (stderr: $(tail -n 5 "$GUEST_ERR"))"
}

@test "cgroup v2 guest: cgroups.bats passes whole on a pure cgroup v2 host" {
	assert_file_passed cgroups.bats
}

@test "cgroup v2 guest: pause_update.bats passes whole on a pure cgroup v2 host" {
	assert_file_passed pause_update.bats
}

@test "cgroup v2 guest (suite): no QEMU or state of the VM left on the host" {
	assert_v2_guest_gone
}
