#!/usr/bin/env bats
# tests/cli/lsm_caps.bats — what the host cannot give a pod is refused at
# create, with one clear line, the same for create and run: an AppArmor
# profile or SELinux labels where the module is not enabled, capabilities
# outside the host's bounding set.  Nothing of the pod is left behind.

load helpers

# create must fail (125, one "qpod: create: ..." line) and leave no pod
refused_at_create() { # WANT
	run qp_stdio_files create --bundle "$BUNDLE" "$ID"
	qp_file_stderr
	assert_qpod_error
	assert_contains "${stderr_lines[0]}" "qpod: create: $1"
	[ ! -e "$ROOT/$ID" ] || flunk "a refused create left $ROOT/$ID"
	run qp_stdio_files run "$ID" --bundle "$BUNDLE"
	qp_file_stderr
	assert_qpod_error
	assert_contains "${stderr_lines[0]}" "qpod: run: $1"
}

@test "process.apparmorProfile: refused at create where AppArmor is not enabled" {
	[ "$(cat /sys/module/apparmor/parameters/enabled 2>/dev/null)" != Y ] || skip "AppArmor is enabled here"
	make_bundle "$BUNDLE" '.process.apparmorProfile = "docker-default" | .process.args = ["true"]'
	refused_at_create 'process.apparmorProfile "docker-default": AppArmor is not enabled on this host'
}

@test "process.selinuxLabel and linux.mountLabel: refused at create where SELinux is not enabled" {
	[ ! -e /sys/fs/selinux/enforce ] || skip "SELinux is enabled here"
	make_bundle "$BUNDLE" '.process.selinuxLabel = "system_u:system_r:container_t:s0:c1,c2" | .process.args = ["true"]'
	refused_at_create 'process.selinuxLabel "system_u:system_r:container_t:s0:c1,c2": SELinux is not enabled on this host'
	make_bundle "$BUNDLE" '.linux.mountLabel = "system_u:object_r:container_file_t:s0" | .process.args = ["true"]'
	refused_at_create 'linux.mountLabel "system_u:object_r:container_file_t:s0": SELinux is not enabled on this host'
}

@test "process.capabilities beyond the host's bounding set: create fails as run does (not a silent start)" {
	local bnd c name=
	bnd=$((16#$(awk '/^CapBnd:/ { print $2 }' /proc/self/status)))
	for ((c = 0; c <= $(cat /proc/sys/kernel/cap_last_cap); c++)); do
		if (( ((bnd >> c) & 1) == 0 )); then
			name=$("$QPOD" features | jq -r --argjson c "$c" '.linux.capabilities[$c] // empty')
			break
		fi
	done
	[ -n "$name" ] || skip "the host's bounding set has every capability"
	make_bundle "$BUNDLE" ".process.capabilities.effective += [\"$name\"] | .process.capabilities.permitted += [\"$name\"] | .process.args = [\"true\"]"
	refused_at_create "process.capabilities.effective: $name is not in this host's capability bounding set"
	# only in the bounding list: nothing to give, the pod runs (as under runc)
	make_bundle "$BUNDLE" ".process.capabilities.bounding += [\"$name\"] | .process.args = [\"true\"]"
	run --separate-stderr qp run "$ID" --bundle "$BUNDLE"
	assert_status 0
}
