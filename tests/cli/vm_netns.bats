#!/usr/bin/env bats
# tests/cli/vm_netns.bats — a VM pod whose spec joins a network namespace by
# path (as containerd's CNI and podman give one): the namespace's veth is
# mirrored into the guest (net/mirror.h: a tap beside it, tc mirred both
# ways).  Each test makes the pod's namespace and a "client" namespace
# holding the veth's peer (the gateway's address); every packet stays
# between the two: nothing is added to the host's namespace.

load helpers

setup() {
	setup_vm
	PNS=qpvp-$PREFIX # the pod's namespace
	CNS=qpvc-$PREFIX # the client's
	ip netns add "$PNS"
	ip netns add "$CNS"
	ip -n "$PNS" link set lo up
	ip -n "$CNS" link set lo up
	TCACHE=$TEST_DIR/cache
	mkdir -p "$TCACHE"
	ln -s "$(dirname "$(dirname "$VM_KERNEL")")" "$TCACHE/kernel"
}

teardown() {
	[ -z "${TEST_DIR:-}" ] || [ ! -d "$ROOT" ] || tq spares drain >/dev/null 2>&1 || true
	teardown_common
	ip netns del "$PNS" 2>/dev/null || true
	ip netns del "$CNS" 2>/dev/null || true
}

in_pns() { nsenter --net="/run/netns/$PNS" "$@"; }
in_cns() { nsenter --net="/run/netns/$CNS" "$@"; }
tq() { QPOD_CACHE=$TCACHE "$QPOD" --root "$ROOT" "$@"; }

# the pod's eth0 (10.77.0.2/24, MTU 1400, default via the client's
# 10.77.0.1, a route 10.88.0.0/16 via it), its peer in the client's
# namespace; and a second veth pair inside the pod's namespace without an
# address, which is not wired
make_net() {
	ip -n "$CNS" link add cl0 mtu 1400 type veth peer name eth0 netns "$PNS" mtu 1400
	ip -n "$CNS" addr add 10.77.0.1/24 dev cl0
	ip -n "$CNS" link set cl0 up
	ip -n "$PNS" addr add 10.77.0.2/24 dev eth0
	ip -n "$PNS" link set eth0 up
	ip -n "$PNS" route add default via 10.77.0.1
	ip -n "$PNS" route add 10.88.0.0/16 via 10.77.0.1
	ip -n "$PNS" link add spare0 type veth peer name spare1
	# (ip, not /sys/class/net: nsenter keeps the host's /sys)
	POD_MAC=$(ip -n "$PNS" -o link show eth0 | sed -n 's/.*link\/ether \([0-9a-f:]*\).*/\1/p')
}

# a VM pod in $PNS serving "hello-from-the-guest" on port 8080 (busybox
# httpd, asked with curl); BOOT: cold or template
netns_bundle() { # BOOT
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .annotations["qpod.vm.boot"] = "'"$1"'"
		| .process.terminal = false
		| .linux.namespaces = [.linux.namespaces[] | select(.type != "network")]
			+ [{type: "network", path: "/run/netns/'"$PNS"'"}]
		| .process.args = ["sh", "-c", "mkdir -p /tmp/www && echo hello-from-the-guest >/tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www"]'
}

# the NIC backend `qpod state` must name for a VM pod under ACCEL here:
# vhost-net only under KVM with a /dev/vhost-net that opens
nic_backend_here() { # ACCEL
	if [ "$1" != kvm ]; then
		echo "userspace: TCG"
	elif [ -c /dev/vhost-net ]; then
		echo vhost-net
	else
		echo "userspace: no /dev/vhost-net"
	fi
}

# what qpod wired in the pod's namespace: the tap, the ingress qdiscs
wiring() {
	in_pns ip -o link show qp-tap0 2>/dev/null | grep -o 'qp-tap0'
	in_pns tc qdisc show dev eth0 ingress
	in_pns tc filter show dev eth0 ingress
}

# the pod from BOOT answers at the veth's address with the veth's MAC, MTU
# and routes; it reaches the gateway; after delete nothing of the wiring is
# left
check_pod() { # BOOT [SPARE: the spare the pod must take]
	make_net
	netns_bundle "$1"
	tq create "$ID" --bundle "$BUNDLE" </dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err" ||
		flunk "create:" "$(cat "$TEST_DIR/pod.err")"
	if [ -n "${2:-}" ]; then
		assert_eq "$(tq spares list --format json | jq -r --arg s "$2" '.[] | select(.name == $s) | "\(.status) \(.taken_by)"')" \
			"taken $ID" "the spare"
	fi
	# the other interfaces are named, with why they are not wired
	run cat "$TEST_DIR/pod.err"
	assert_contains "$output" 'wired "eth0"'
	assert_contains "$output" '"spare0" (down)'
	assert_contains "$output" '"spare1" (down)'
	[ -n "$(wiring)" ] || flunk "no tap or qdisc in the pod's namespace after create"
	# the pod's pid (its monitor) is in the namespace, as a container
	# pod's is: what joins /proc/PID/ns/net (a CRI container) joins it
	assert_eq "$(stat -L -c %i "/proc/$(pod_field "$ID" pid)/ns/net")" "$(stat -L -c %i "/run/netns/$PNS")" \
		"the network namespace of the pod's pid"
	tq start "$ID"
	# state names the NIC's backend and why (vm_nic_backend): this host's
	assert_eq "$(tq state "$ID" | jq -r .nic)" "$(nic_backend_here "$(tq state "$ID" | jq -r .accel)")" \
		"state's nic"
	# the guest's eth0: the veth's address, MAC, MTU and routes
	run --separate-stderr tq exec "$ID" -- sh -c 'ip -4 -o addr show eth0; cat /sys/class/net/eth0/address /sys/class/net/eth0/mtu; ip route'
	assert_status 0
	assert_contains "$output" "inet 10.77.0.2/24"
	assert_contains "$output" "$POD_MAC"
	assert_contains "$output" $'\n1400\n'
	assert_contains "$output" "default via 10.77.0.1 dev eth0"
	assert_contains "$output" "10.88.0.0/16 via 10.77.0.1 dev eth0"
	# a client reaches the guest at the veth's address...
	wait_for 400 in_cns curl -sf -m 5 -o "$TEST_DIR/got" http://10.77.0.2:8080/
	assert_eq "$(cat "$TEST_DIR/got")" hello-from-the-guest "the guest's answer"
	# ...whose MAC is the veth's (the client's neighbour entry)
	assert_contains "$(in_cns ip neigh show 10.77.0.2)" "$POD_MAC"
	# and the guest reaches the gateway
	run --separate-stderr tq exec "$ID" -- ping -c 1 -W 5 10.77.0.1
	assert_status 0
	run --separate-stderr tq delete --force "$ID"
	assert_status 0
	assert_eq "$(wiring)" "" "tap, qdisc or filter left in the pod's namespace"
	# the namespace's own configuration is as it was
	assert_contains "$(in_pns ip -4 -o addr show eth0)" "10.77.0.2/24"
}

@test "vm netns: a cold boot's guest has the namespace's veth (address, MAC, MTU, routes), answers a client, reaches the gateway; delete leaves no tap, qdisc or filter" {
	check_pod cold
}

@test "vm netns: the same from a template clone (a template with a NIC)" {
	check_pod template
	assert_eq "$(tq template list | jq -r '.meta | capture("nic=(?<n>[01])") | .n')" 1 "a template with a NIC"
}

@test "vm netns: the same from a spare made with --nic (its tap, kept in its holder's own namespace, moves into the pod's)" {
	local spare
	tq spares fill --count 1 --no-refill --nic >/dev/null || flunk "spares fill --nic"
	spare=$(tq spares list --format json | jq -r '.[0].name')
	# the spare's tap is not in the host's namespace
	! ip link show "qp$spare" >/dev/null 2>&1 || flunk "the spare's tap is in the host's namespace"
	check_pod auto "$spare"
}

@test "vm netns: a namespace qpod cannot mirror is refused at create with each interface's reason; lo only gives the guest loopback" {
	# a veth without an IPv4 address, and a macvlan on it with one
	ip -n "$PNS" link add eth0 type veth peer name eth0p
	ip -n "$PNS" link set eth0 up
	ip -n "$PNS" link add mv0 link eth0p type macvlan
	ip -n "$PNS" addr add 10.77.0.3/24 dev mv0
	ip -n "$PNS" link set mv0 up
	netns_bundle cold
	run qp_stdio_files create "$ID" --bundle "$BUNDLE"
	assert_status 125
	qp_file_stderr
	assert_contains "$stderr" "no interface qpod can wire into the guest"
	assert_contains "$stderr" '"eth0" (no IPv4 or global IPv6 address)'
	assert_contains "$stderr" '"mv0" (not a veth: qpod wires veth interfaces only)'
	assert_eq "$(wiring)" "" "wiring left by a refused create"

	# lo only (podman's --network none): the guest has loopback only
	ip netns del "$PNS"
	ip netns add "$PNS"
	make_bundle "$BUNDLE" '.annotations["qpod.mode"] = "vm" | .process.terminal = false
		| .linux.namespaces = [.linux.namespaces[] | select(.type != "network")]
			+ [{type: "network", path: "/run/netns/'"$PNS"'"}]
		| .process.args = ["sh", "-c", "ls /sys/class/net"]'
	run --separate-stderr tq run --bundle "$BUNDLE" "$ID"
	assert_status 0
	assert_eq "$output" lo "the guest's interfaces"
}

# a dual-stack or IPv6-only pod (FAMILIES: "4 6" or "6"): the namespace's
# eth0 with fd00:77::2/64 (and 10.77.0.2/24), IPv6's default route via the
# client's fd00:77::1 and a route fd00:88::/48 through it; the guest's eth0
# has them, a client reaches the guest's server over IPv6 and the guest
# reaches the gateway
check_ipv6_pod() { # FAMILIES
	[ -e /proc/net/if_inet6 ] || skip "the host's kernel has no IPv6 (the client's side of the veth needs it)"
	ip -n "$CNS" link add cl0 type veth peer name eth0 netns "$PNS"
	ip -n "$CNS" addr add fd00:77::1/64 dev cl0 nodad
	ip -n "$CNS" link set cl0 up
	ip -n "$PNS" addr add fd00:77::2/64 dev eth0 nodad
	ip -n "$PNS" link set eth0 up
	ip -n "$PNS" -6 route add default via fd00:77::1
	ip -n "$PNS" -6 route add fd00:88::/48 via fd00:77::1
	if [ "$1" = "4 6" ]; then
		ip -n "$CNS" addr add 10.77.0.1/24 dev cl0
		ip -n "$PNS" addr add 10.77.0.2/24 dev eth0
		ip -n "$PNS" route add default via 10.77.0.1
	fi
	netns_bundle cold
	tq create "$ID" --bundle "$BUNDLE" </dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err" ||
		flunk "create:" "$(cat "$TEST_DIR/pod.err")"
	tq start "$ID"
	run --separate-stderr tq exec "$ID" -- sh -c 'ip -6 -o addr show dev eth0 scope global; ip -6 route show; ip -4 -o addr show dev eth0'
	assert_status 0
	assert_contains "$output" "inet6 fd00:77::2/64"
	assert_contains "$output" "default via fd00:77::1 dev eth0"
	assert_contains "$output" "fd00:88::/48 via fd00:77::1 dev eth0"
	if [ "$1" = "4 6" ]; then
		assert_contains "$output" "inet 10.77.0.2/24"
	else
		assert_not_contains "$output" "inet "
	fi
	wait_for 400 in_cns curl -sf -g -m 5 -o "$TEST_DIR/got" 'http://[fd00:77::2]:8080/'
	assert_eq "$(cat "$TEST_DIR/got")" hello-from-the-guest "the guest's answer over IPv6"
	run --separate-stderr tq exec "$ID" -- ping -6 -c 1 -W 5 fd00:77::1
	assert_status 0
	run --separate-stderr tq delete --force "$ID"
	assert_status 0
	assert_eq "$(wiring)" "" "tap, qdisc or filter left in the pod's namespace"
}

@test "vm netns: a dual-stack namespace: the guest has the veth's IPv6 address and routes beside its IPv4 ones, and answers over IPv6" {
	check_ipv6_pod "4 6"
}

@test "vm netns: an IPv6-only namespace: the guest's eth0 comes up with the IPv6 address only, answers a client and reaches the gateway" {
	check_ipv6_pod 6
}

@test "vm netns: a monitor killed with SIGKILL takes QEMU and the tap with it; delete removes the veth's qdisc" {
	local pid
	make_net
	netns_bundle cold
	tq create "$ID" --bundle "$BUNDLE" </dev/null >"$TEST_DIR/pod.out" 2>"$TEST_DIR/pod.err" ||
		flunk "create:" "$(cat "$TEST_DIR/pod.err")"
	pid=$(pod_field "$ID" pid)
	kill -KILL "$pid"
	wait_for 200 sh -c "! ip -n '$PNS' link show qp-tap0"
	[ -n "$(in_pns tc qdisc show dev eth0 ingress)" ] || flunk "the veth's qdisc went with the monitor"
	run --separate-stderr tq delete --force "$ID"
	assert_status 0
	assert_eq "$(wiring)" "" "tap, qdisc or filter left in the pod's namespace"
}
