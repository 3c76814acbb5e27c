#!/usr/bin/env bats
# tests/cli/net.bats — pod networking through the CLI (--net bridge, the
# qpod.net annotations, gc).  Every test runs qpod inside a network namespace
# it creates, so the bridges, veths and packets never touch the machine's
# real interfaces.  (1100 taps over two bridges: tests/unit/test_netlink.c.)

load helpers

setup() {
	NS_SETUP_DONE=
	setup_common # helpers.bash, then our own netns
	NS=qpodt-$PREFIX
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	NS_SETUP_DONE=1
	HOST_HELPER=$QPOD_BUILD/tests/helper/qpod-testhelper
}

# qpod inside the test netns (nsenter, not `ip netns exec`: that remounts
# /sys, which would hide the cgroup hierarchies)
qpn() { nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" "$@"; }

teardown() {
	if [ -n "${NS_SETUP_DONE:-}" ]; then
		local id
		for id in $(cd "$ROOT" 2>/dev/null && ls); do
			qpn delete --force "$id" >/dev/null 2>&1
		done
		local links
		qpn gc >/dev/null 2>&1 # bridges outlive pods; gc removes empty ones
		links=$(ip -n "$NS" -o link show | grep -v ' lo:' || true)
		ip netns del "$NS"
		if [ -n "$links" ]; then
			echo "teardown: links left in the test netns:" "$links" >&2
			teardown_common
			return 1
		fi
	fi
	teardown_common
}

lease_count() { # number of IPAM leases in $ROOT
	if [ -f "$ROOT/.net/ipam" ]; then grep -c . "$ROOT/.net/ipam" || true; else echo 0; fi
}

bridge_bundle() { # DIR IP ARGS...
	local dir=$1 ip=$2
	shift 2
	make_bundle "$dir" "$(helper_args "$@") | .annotations = {\"qpod.net\": \"bridge\", \"qpod.net.ip\": \"$ip\"}"
}

@test "two bridged pods reach each other and the host (TCP and ping)" {
	bridge_bundle "$BUNDLE" 10.213.0.10 tcp-listen 8080 2
	run qp_detached_ns create "$ID" --bundle "$BUNDLE"
	assert_status 0
	qpn start "$ID"
	# the pod's eth0 has the requested address on the bridge's /22 slice
	run --separate-stderr qpn exec "$ID" -- ip -4 -o addr show dev eth0
	assert_status 0
	assert_contains "$output" "10.213.0.10/22"
	# from the host (the test netns): TCP to the pod
	wait_for 100 nsenter --net="/run/netns/$NS" "$HOST_HELPER" tcp-connect 10.213.0.10 8080
	# from a second pod on the bridge: ping and TCP
	run --separate-stderr qpn run --rm --name "$ID2" --net bridge --ip 10.213.0.11 "$ROOTFS" -- \
		sh -c "ping -c 1 -W 2 10.213.0.10 >/dev/null && ping -c 1 -W 2 10.213.0.1 >/dev/null && $HELPER tcp-connect 10.213.0.10 8080"
	assert_status 0
	assert_contains "$output" "ping" "reply through the bridge"
	wait_for 100 status_is "$ID" stopped
}

@test "delete leaves no link, address or lease" {
	bridge_bundle "$BUNDLE" 10.213.0.20 sleep 60
	qp_detached_ns create "$ID" --bundle "$BUNDLE"
	qpn start "$ID"
	assert_match "$(ip -n "$NS" -o link show)" "qp[0-9a-f]{10}" "host end of the veth"
	assert_contains "$(cat "$ROOT/.net/ipam")" "10.213.0.20 $ID" "lease"
	qpn delete --force "$ID"
	assert_eq "$(ip -n "$NS" -o link show | grep -c 'qp[0-9a-f]' || true)" 0 "veths after delete"
	assert_eq "$(lease_count)" 0 "leases after delete"
	# the bridge is shared infrastructure and stays; gc prunes it once empty
	assert_contains "$(ip -n "$NS" -o link show)" "qpod0" "bridge after delete"
	run --separate-stderr qpn gc
	assert_status 0
	assert_eq "$(ip -n "$NS" -o link show | grep -v ' lo:' || true)" "" "links after gc"
}

@test "kill -9 of qpod mid-create, then gc: a clean state" {
	bridge_bundle "$BUNDLE" 10.213.0.30 sleep 60
	local i pid delay
	for i in 1 2 3 4 5 6; do
		delay=$(printf '0.%03d' $((i * 7)))
		nsenter --net="/run/netns/$NS" "$QPOD" --root "$ROOT" create "$ID-$i" --bundle "$BUNDLE" \
			</dev/null >/dev/null 2>&1 &
		pid=$!
		sleep "$delay"
		kill -9 "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		# a create that got through is a real pod: delete it the normal way
		if qpn state "$ID-$i" >/dev/null 2>&1 && [ "$(pod_field "$ID-$i" status)" != creating ]; then
			[ "$(pod_field "$ID-$i" status)" = stopped ] || qpn delete --force "$ID-$i"
			qpn delete --force "$ID-$i" 2>/dev/null || true
		fi
		run --separate-stderr qpn gc
		assert_status 0
		assert_eq "$(ls "$ROOT")" "" "state dirs after gc (round $i)"
		assert_eq "$(lease_count)" 0 "leases after gc (round $i)"
		assert_eq "$(ip -n "$NS" -o link show | grep -c 'qp[0-9a-f]' || true)" 0 "veths after gc (round $i)"
	done
}

@test "gc leaves live pods alone" {
	bridge_bundle "$BUNDLE" 10.213.0.40 sleep 60
	qp_detached_ns create "$ID" --bundle "$BUNDLE"
	qpn start "$ID"
	run --separate-stderr qpn gc
	assert_status 0
	assert_eq "$(pod_field "$ID" status)" running "status after gc"
	assert_contains "$(cat "$ROOT/.net/ipam")" "10.213.0.40 $ID" "lease after gc"
	# another root's gc never touches this root's links (it has no lease of them)
	local links
	links=$(ip -n "$NS" -o link show | grep -c ' qp[0-9a-f]\{10\}')
	run --separate-stderr nsenter --net="/run/netns/$NS" "$QPOD" --root "$TEST_DIR/other-root" gc
	assert_status 0
	assert_eq "$(ip -n "$NS" -o link show | grep -c ' qp[0-9a-f]\{10\}')" "$links" "this root's links after the other root's gc"
	run --separate-stderr qpn exec "$ID" -- ping -c 1 -W 2 10.213.0.1
	assert_status 0
	rm -rf "$TEST_DIR/other-root"
}

@test "bad network input: clear errors, nothing leaked" {
	run --separate-stderr qpn run --rm --net bridge --subnet 10.213.0.0/33 "$ROOTFS" -- true
	assert_qpod_error 125
	run --separate-stderr qpn run --rm --net bridge --subnet nonsense "$ROOTFS" -- true
	assert_qpod_error 125
	run --separate-stderr qpn run --rm --net bridge --bridge averyveryverylongbridgename "$ROOTFS" -- true
	assert_qpod_error 125
	run --separate-stderr qpn run --rm --net bridge --ip 192.168.77.5 "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "192.168.77.5"
	run --separate-stderr qpn run --rm --net wifi "$ROOTFS" -- true
	assert_qpod_error 125
	run --separate-stderr qpn run --rm --net none --ip 10.213.0.5 "$ROOTFS" -- true
	assert_qpod_error 125
	# an address in use
	bridge_bundle "$BUNDLE" 10.213.0.50 sleep 60
	qp_detached_ns create "$ID" --bundle "$BUNDLE"
	run --separate-stderr qpn run --rm --net bridge --ip 10.213.0.50 "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "in use"
	assert_eq "$(pod_field "$ID" status)" created "first pod untouched"
	assert_eq "$(lease_count)" 1 "only the first pod's lease"
	assert_eq "$(ip -n "$NS" -o link show | grep -c 'qp[0-9a-f]' || true)" 1 "only the first pod's veth"
}

@test "--net host shares the host's network namespace; --net none has only lo" {
	run --separate-stderr qpn run --rm --net host "$ROOTFS" -- readlink /proc/self/ns/net
	assert_status 0
	assert_eq "$output" "$(nsenter --net="/run/netns/$NS" readlink /proc/self/ns/net)" "net ns"
	run --separate-stderr qpn run --rm --net none "$ROOTFS" -- sh -c 'ls /sys/class/net'
	assert_status 0
	assert_eq "$output" "lo" "interfaces"
}

@test "a subnet that overlaps a host route is refused, naming it; the default subnet avoids podman's and docker's" {
	# in our netns: a podman-like bridge on 10.88.0.0/16
	nsenter --net="/run/netns/$NS" ip link add cni-podman0 type bridge
	nsenter --net="/run/netns/$NS" ip addr add 10.88.0.1/16 dev cni-podman0
	nsenter --net="/run/netns/$NS" ip link set cni-podman0 up
	run --separate-stderr qpn run --rm --net bridge --subnet 10.88.0.0/16 "$ROOTFS" -- true
	assert_qpod_error 125
	assert_contains "$stderr" "10.88.0.0/16 on cni-podman0" "the overlapping route"
	assert_contains "$stderr" "--subnet" "the way out"
	# a narrower subnet inside it overlaps too; one beside it does not
	run --separate-stderr qpn run --rm --net bridge --subnet 10.88.4.0/22 "$ROOTFS" -- true
	assert_qpod_error 125
	run --separate-stderr qpn run --rm --net bridge --subnet 10.89.0.0/16 "$ROOTFS" -- true
	assert_status 0
	# the default is neither podman's 10.88/16 nor docker's 172.17/16
	run --separate-stderr qpn run --rm --net bridge "$ROOTFS" -- ip -4 -o addr show eth0
	assert_status 0
	assert_not_contains "$output" " 10.88." "default subnet"
	assert_not_contains "$output" " 172.17." "default subnet"
	nsenter --net="/run/netns/$NS" ip link del cni-podman0
	assert_eq "$(cat "$ROOT/.net/ipam" 2>/dev/null | grep -c . || true)" 0 "leases left"
}
