#!/bin/bash
# tests/cli/cgroup_v2_guest.sh — runs as the workload of the microVM that
# tests/cli/cgroup_v2.bats boots: a pure cgroup v2 host (guest-init mounts
# only cgroup2, every controller enabled for the root's children).  It runs
# qpod itself there (the host's build and /usr, shared read-only over 9p)
# to start container pods, and prints what it finds, one "key: value" line
# each, for the bats file to assert on.  It asserts nothing itself.
#
# The shares (cgroup_v2.bats): /usr (the host's), /qpod (the build dir),
# /busybox (the test rootfs), /t (this directory).
set -u
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
Q=/qpod/qpod
R=/tmp/state
CG=/sys/fs/cgroup
HELPER=/bin/qpod-testhelper

say() { printf '%s: %s\n' "$1" "$(tr '\n' '|' <<<"$2" | sed 's/|$//')"; }
q() { "$Q" --root "$R" "$@"; }

# bundle NAME JQ-FILTER: /tmp/b/NAME from `qpod spec`, root /tmp/rootfs
bundle() {
	mkdir -p "/tmp/b/$1"
	"$Q" spec | jq --arg r /tmp/rootfs ".root.path = \$r | .process.terminal = false | $2" >"/tmp/b/$1/config.json"
}
sh_args() { jq -n --arg s "$1" '["sh", "-c", $s]'; }
# the host-side (guest) cgroup directory of pod ID
cgdir() { local c; c=$(q state "$1" | jq -r .cgroup); echo "$CG/${c#/}"; }
# wait_for TRIES CMD...: every 0.1 s
wait_for() {
	local n=$1 i
	shift
	for ((i = 0; i < n; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

# ---- the host this script runs on ----
say mounts "$(awk '$9 ~ /^cgroup/ { print $9, $5 }' /proc/self/mountinfo)"
say root-subtree-control "$(cat $CG/cgroup.subtree_control)"
# what the suite's host detection (host_features.bash, which tests/run.sh
# prints and the tests ask) makes of a pure v2 host; its probe cgroups go
# again at once
. /t/host_features.bash
f_have=""
for f in $(host_feature_names); do host_has "$f" && f_have+="$f "; done
say profile "$(host_cgroup_layout) v1=[$(host_cgroup_v1_mounts)] has=[${f_have% }]"
say probe-left "$(ls -d $CG/qpod-probe-* 2>/dev/null)"
cp -a /busybox /tmp/rootfs || say setup "cannot copy the rootfs"
mkdir -p "$R"

# ---- limits, read back from inside the pod ----
bundle limits ".process.args = $(sh_args 'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max /sys/fs/cgroup/cpu.max')
	| .linux.resources = {memory: {limit: 33554432}, pids: {limit: 20}, cpu: {quota: 50000, period: 100000}}"
say limits-inside "$(q run lim --bundle /tmp/b/limits 2>&1; echo "rc=$?")"
bundle fork ".process.args = [\"$HELPER\", \"forkbomb\", \"100\"] | .linux.resources.pids.limit = 10"
say forkbomb "$(q run fork --bundle /tmp/b/fork 2>&1; echo "rc=$?")"
# the friendly form's --cpus and --memory, and the pod's cgroup on this side
q run -d --name fr --memory 40M --cpus 0.25 --pids 30 /tmp/rootfs -- sleep 60 </dev/null >/dev/null 2>&1
d=$(cgdir fr)
say friendly-cgroup "$(cat "$d/memory.max" "$d/cpu.max" "$d/pids.max" "$d/cgroup.controllers" 2>&1)"
q delete --force fr 2>&1
say friendly-cgroup-after-delete "$([ -e "$d" ] && echo left || echo gone)"
# the exe guard of a command's first run on a state root not made yet (this
# kernel takes overlay layers by path only: the root is the empty layer)
say exe-guard "$("$Q" --debug --root /tmp/guard-root run --rm /tmp/rootfs -- true 2>&1 | grep 'exe guard' | sed 's/^qpod: //')"
rm -rf /tmp/guard-root
# how the pod's process got into its cgroup (qpod --debug says), and where it is
say clone-into-cgroup "$(q --debug run --rm --name cic /tmp/rootfs -- cat /proc/self/cgroup 2>&1 |
	grep -e CLONE_INTO_CGROUP -e '^0::' | sed 's/^qpod: //')"

# ---- devices: the eBPF program of the default rules, and an allow rule ----
probe='mknod /dev/lc c 10 237 && echo mknod-ok
	(: <>/dev/lc) 2>&1 || true
	mknod /dev/l0 b 7 0 && (: </dev/l0) 2>&1 || true
	echo x >/dev/null && echo null-ok
	[ "$(head -c 4 /dev/zero | wc -c)" = 4 ] && echo zero-ok
	mknod /dev/n2 c 1 3 && echo y >/dev/n2 && echo n2-ok'
bundle dev-default ".process.args = $(sh_args "$probe")"
say devices-default "$(q run devd --bundle /tmp/b/dev-default 2>&1; echo "rc=$?")"
bundle dev-allow ".process.args = $(sh_args "$probe")
	| .linux.resources.devices += [{allow: true, type: \"c\", major: 10, minor: 237, access: \"rwm\"},
				       {allow: true, type: \"b\", major: 7, minor: 0, access: \"r\"}]"
say devices-allowed "$(q run deva --bundle /tmp/b/dev-allow 2>&1; echo "rc=$?")"

# ---- freezer: pause / resume ----
bundle frz ".process.args = $(sh_args 'i=0; while :; do i=$((i + 1)); echo $i >/frz.count; sleep 0.05; done')"
q create frz --bundle /tmp/b/frz </dev/null >/dev/null 2>&1 && q start frz
d=$(cgdir frz)
wait_for 100 test -s /tmp/rootfs/frz.count
say frz-before "status=$(q state frz | jq -r .status) freeze=$(cat "$d/cgroup.freeze")"
q pause frz 2>&1
c1=$(cat /tmp/rootfs/frz.count)
sleep 1
c2=$(cat /tmp/rootfs/frz.count)
states=$(for p in $(cat "$d/cgroup.procs"); do awk '/^State:/ { print $2 }' "/proc/$p/status"; done | sort -u)
say frz-paused "status=$(q state frz | jq -r .status) freeze=$(cat "$d/cgroup.freeze") $(grep frozen "$d/cgroup.events") counter=$([ "$c1" = "$c2" ] && echo still || echo "moved $c1 $c2") states=$states"
q resume frz 2>&1
grows() { [ "$(cat /tmp/rootfs/frz.count)" != "$c2" ]; }
wait_for 100 grows && moved=yes || moved=no
say frz-resumed "status=$(q state frz | jq -r .status) freeze=$(cat "$d/cgroup.freeze") $(grep frozen "$d/cgroup.events") counter-moves=$moved"
q delete --force frz 2>&1

# ---- OOM: a hog in a 16M pod ----
bundle oom1 ".process.args = [\"$HELPER\", \"alloc\", \"200\"] | .linux.resources.memory.limit = 16777216"
say oom-run "$(q run oom1 --bundle /tmp/b/oom1 2>&1; echo "rc=$?")"
bundle oom2 ".process.args = $(sh_args "while [ ! -e /oom2.go ]; do sleep 0.1; done; $HELPER alloc 200; echo hog=\$? >/oom2.out; sleep 60")
	| .linux.resources.memory.limit = 16777216"
q create oom2 --bundle /tmp/b/oom2 </dev/null >/dev/null 2>&1 && q start oom2
d=$(cgdir oom2)
q events --interval 1s oom2 >/tmp/oom2.events 2>&1 &
ev=$!
wait_for 300 grep -q '"stats"' /tmp/oom2.events
touch /tmp/rootfs/oom2.go
wait_for 300 test -s /tmp/rootfs/oom2.out
wait_for 50 grep -q '"type":"oom"' /tmp/oom2.events
say oom-hog "$(cat /tmp/rootfs/oom2.out 2>&1)"
say oom-memory-events "$(grep -E '^(oom|oom_kill) ' "$d/memory.events" 2>&1)"
say oom-event "$(grep -c '"type":"oom"' /tmp/oom2.events)"
kill "$ev" 2>/dev/null
wait "$ev" 2>/dev/null
q delete --force oom2 2>&1

# ---- update, stats, exec, reservation and shares, unified, swap ----
bundle upd ".process.args = [\"sleep\", \"60\"]
	| .linux.resources = {memory: {limit: 33554432, reservation: 16777216}, cpu: {shares: 512}}"
q create upd --bundle /tmp/b/upd </dev/null >/dev/null 2>&1 && q start upd
d=$(cgdir upd)
say upd-created "$(cat "$d/memory.max" "$d/memory.low" "$d/cpu.weight" 2>&1)"
say upd-update "$(q update --memory 50331648 --pids-limit 15 --cpu-quota 20000 --cpu-period 100000 upd 2>&1; echo "rc=$?")"
say upd-updated "$(cat "$d/memory.max" "$d/pids.max" "$d/cpu.max" 2>&1)"
say upd-stats "$(q events --stats upd 2>&1 | jq -c '[.data.memory.usage.limit, .data.pids.limit, (.data.memory.usage.usage > 0), (.data.pids.current >= 1), (.data.cpu.usage.total > 0)]' 2>&1)"
say upd-exec-cgroup "$(q exec upd cat /proc/self/cgroup 2>&1; grep -c . "$d/cgroup.procs")"
# this guest has no swap (and no swap accounting): a swap limit is refused,
# "no swap" (swap = limit) and "unlimited" (-1) are what the pod gets anyway
say upd-swap "$(q update --memory-swap 67108864 upd 2>&1; echo "rc=$?")"
say upd-noswap "$(q update --memory 50331648 --memory-swap 50331648 upd 2>&1; echo "rc=$?"; q update --memory-swap -1 upd 2>&1; echo "rc=$?")"
q delete --force upd 2>&1
bundle uni ".process.args = $(sh_args 'cat /sys/fs/cgroup/memory.high /sys/fs/cgroup/pids.max')
	| .linux.resources.unified = {\"memory.high\": \"20971520\", \"pids.max\": \"7\"}"
say unified "$(q run uni --bundle /tmp/b/uni 2>&1; echo "rc=$?")"
bundle uni-bad ".process.args = [\"true\"] | .linux.resources.unified = {\"hugetlb.2MB.max\": \"0\"}"
say unified-missing "$(q run unib --bundle /tmp/b/uni-bad 2>&1; echo "rc=$?")"
# blockIO: io.max is written (this guest has no disk, so the kernel refuses
# the device by name), a weight needs io.bfq.weight or io.weight (no BFQ,
# no io.cost in this kernel)
bundle blk-max ".process.args = [\"true\"] | .linux.resources.blockIO = {throttleReadBpsDevice: [{major: 4095, minor: 4095, rate: 1048576}]}"
say blkio-absent "$(q run blkm --bundle /tmp/b/blk-max 2>&1; echo "rc=$?")"
bundle blk-w ".process.args = [\"true\"] | .linux.resources.blockIO = {weight: 200}"
say blkio-weight "$(q run blkw --bundle /tmp/b/blk-w 2>&1; echo "rc=$?")"

# ---- a nested cgroupsPath without a cgroup namespace ----
bundle nest ".process.args = $(sh_args 'cat /sys/fs/cgroup/memory.max /sys/fs/cgroup/pids.max')
	| .linux.cgroupsPath = \"/qpod-nest/a/nest\" | .linux.resources = {memory: {limit: 25165824}, pids: {limit: 9}}
	| .linux.namespaces |= map(select(.type != \"cgroup\"))"
say nested "$(q run nest --bundle /tmp/b/nest 2>&1; echo "rc=$?")"
say nested-after-delete "$([ -e $CG/qpod-nest/a/nest ] && echo left || echo gone)"
rmdir $CG/qpod-nest/a $CG/qpod-nest 2>/dev/null

# ---- kill --all of a paused pod (cgroup.kill) ----
bundle kil ".process.args = $(sh_args 'sleep 60 & sleep 60 & wait')"
q create kil --bundle /tmp/b/kil </dev/null >/dev/null 2>&1 && q start kil
wait_for 100 test "$(grep -c . "$(cgdir kil)/cgroup.procs")" -ge 3
q pause kil 2>&1
say kill-paused "$(q kill --all kil KILL 2>&1; echo "rc=$?")"
stopped() { [ "$(q state kil | jq -r .status)" = stopped ]; }
wait_for 100 stopped
say kill-paused-after "status=$(q state kil | jq -r .status) procs=$(grep -c . "$(cgdir kil)/cgroup.procs")"
say kill-delete "$(q delete kil 2>&1; echo "rc=$?")"

# ---- nothing left ----
say pods-left "$(q list -q 2>&1)"
say cgroups-left "$(ls -d $CG/qpod/*/ $CG/qpod-probe-* 2>/dev/null)"
say done yes
