#!/usr/bin/env bats
# tests/cli/workload_tools.bats — the static workload benchmarks of
# tools/bench (issue 7) on the host, each in a short mode: exactly one JSON
# line with a plausible, checked result; bad options exit 2 with one line
# "TOOL: <what>: <reason>". netbench runs server and client inside a network
# namespace of the test's own (lo only), so no packet leaves it.

# shellcheck disable=SC2154 # bats sets status, output, stderr, stderr_lines
load helpers

BENCH=$QPOD_BUILD/tools/bench
TOOLS=(ctxsw forkbench execbench syscallbench intbench fpbench stream netbench httpbench fileio)

setup() {
	local t
	for t in "${TOOLS[@]}"; do
		[ -x "$BENCH/$t" ] || flunk "$BENCH/$t not built (make)"
	done
	TEST_DIR=$(mktemp -d "${BATS_TEST_TMPDIR:-/tmp}/qwt.XXXXXX")
	NS='' SERVER_PID='' HTTPD_PID=''
	IN_NS=()
}

teardown() {
	if [ -n "$HTTPD_PID" ]; then
		kill -KILL "$HTTPD_PID" 2>/dev/null
		wait "$HTTPD_PID" 2>/dev/null
	fi
	if [ -n "$SERVER_PID" ]; then
		kill -KILL "$SERVER_PID" 2>/dev/null
		wait "$SERVER_PID" 2>/dev/null
	fi
	[ -n "$NS" ] && ip netns del "$NS"
	rm -rf "$TEST_DIR"
}

# bench TOOL ARGS...: must exit 0 with exactly one line of JSON on stdout,
# which is then in $J (run inside the test netns once start_server set IN_NS)
bench() {
	run --separate-stderr "${IN_NS[@]}" "$BENCH/$1" "${@:2}"
	assert_status 0
	[ "${#lines[@]}" -eq 1 ] || flunk "stdout: expected one line, got ${#lines[@]}:" "$output"
	J=$output
	jq -e 'type == "object"' <<<"$J" >/dev/null || flunk "not a JSON object: $J"
}

# expect JQ-EXPR: must be true of $J
expect() {
	jq -e "$1" <<<"$J" >/dev/null || flunk "expected: $1" "result:   $J"
}

# the fields every result has, for TOOL TEST UNIT
expect_result() {
	expect ".tool == \"$1\" and .test == \"$2\" and .unit == \"$3\""
	expect '.score > 0 and .iterations > 0 and .duration_s > 0'
}

# bad_input TOOL ARGS...: exit 2, nothing on stdout, one line "TOOL: x: y"
bad_input() {
	run --separate-stderr "$BENCH/$1" "${@:2}"
	assert_status 2
	assert_eq "$output" "" "stdout of $1 ${*:2}"
	[ "${#stderr_lines[@]}" -eq 1 ] || flunk "stderr: expected one line, got:" "$stderr"
	assert_match "${stderr_lines[0]}" "^$1: [^:]+: .+" "stderr of $1 ${*:2}"
}

@test "ctxsw: one pair and eight pairs bounce bytes" {
	bench ctxsw --duration 0.2
	expect_result ctxsw ctxsw roundtrips/s
	expect '.pairs == 1 and .duration_s >= 0.2 and .duration_s < 5'
	bench ctxsw --pairs 8 --duration 0.2
	expect_result ctxsw ctxsw8 roundtrips/s
	expect '.pairs == 8 and .duration_s >= 0.2'
	# --count is per pair
	bench ctxsw --pairs 3 --count 500
	expect '.iterations == 1500'
}

@test "forkbench and syscallbench: timed and counted runs" {
	bench forkbench --duration 0.2
	expect_result forkbench fork ops/s
	expect '.duration_s >= 0.2 and .duration_s < 5'
	bench forkbench --count 37
	expect '.iterations == 37'
	bench syscallbench --duration 0.2
	expect_result syscallbench getppid ops/s
	# a system call takes well under a millisecond anywhere
	expect '.score > 1000'
	bench syscallbench --count 12345
	expect '.iterations == 12345'
}

@test "execbench: re-executes its own static binary" {
	bench execbench --duration 0.2
	expect_result execbench exec ops/s
	bench execbench --count 20
	expect '.iterations == 20'
	# the target is the same file, found through /proc/self/exe even when
	# started through $PATH under another name (argv[0] "eb")
	ln -s "$BENCH/execbench" "$TEST_DIR/eb"
	run --separate-stderr env PATH="$TEST_DIR:$PATH" eb --count 5
	assert_status 0
	J=$output
	expect '.tool == "execbench" and .iterations == 5'
	run "$BENCH/execbench" --child
	assert_status 0
	assert_eq "$output" "" "output of --child"
	# static: no program interpreter (dynamic loader) to find in a rootfs
	if readelf -l "$BENCH/execbench" | grep -q INTERP; then
		flunk "execbench is not static"
	fi
}

@test "intbench: dhrystone-like score checks its final state" {
	bench intbench --duration 0.2
	expect_result intbench dhrystone-like "dhrystone-like DMIPS"
	# score = loops/s / 1757, and a modern CPU does far more than 1 DMIPS
	expect '(.loops_per_s / 1757 - .score | fabs) < 0.01 * .score and .score > 10'
	bench intbench --count 1000
	expect '.iterations == 1000'
}

@test "fpbench: whetstone-like MWIPS and MFLOPS" {
	bench fpbench --duration 0.2
	expect_result fpbench whetstone-like "whetstone-like MWIPS"
	expect '.mflops > 0 and .score > 1'
	bench fpbench --count 3
	expect '.iterations == 3'
}

@test "stream: four kernels, validated arrays" {
	bench stream --size 200000 --duration 0.2
	expect_result stream stream GB/s
	expect '.valid == true and .size == 200000'
	expect '.copy > 0 and .scale > 0 and .add > 0 and .triad > 0 and .score == .triad'
	bench stream --size 5000 --count 4
	expect '.iterations == 4 and .valid == true'
	# arrays that cannot fit, too small, and a single repetition are refused
	bad_input stream --size 1000000000000
	bad_input stream --size 10
	bad_input stream --count 1
}

# start_server ARGS...: netbench server on 127.0.0.1 in a fresh netns, any
# free port; sets NS, IN_NS, SERVER_PID, PORT
start_server() {
	NS=qpodwt-$$-$BATS_TEST_NUMBER-$RANDOM
	ip netns add "$NS"
	ip -n "$NS" link set lo up
	IN_NS=(ip netns exec "$NS")
	# ip netns exec execs the server: $SERVER_PID is netbench itself
	"${IN_NS[@]}" "$BENCH/netbench" server --bind 127.0.0.1 --port 0 \
		--port-file "$TEST_DIR/port" "$@" >"$TEST_DIR/server.out" 2>"$TEST_DIR/server.err" 3>&- &
	SERVER_PID=$!
	wait_for 100 test -s "$TEST_DIR/port"
	PORT=$(cat "$TEST_DIR/port")
	assert_match "$PORT" '^[1-9][0-9]*$' "port file"
}

# the server must exit 0 by itself (or after SIGTERM) within 5 s, with its
# one JSON line reporting N clients
server_exits_with() {
	local _
	for _ in $(seq 100); do
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.05
	done
	kill -0 "$SERVER_PID" 2>/dev/null && flunk "the server did not exit"
	wait "$SERVER_PID"
	assert_eq "$?" 0 "server exit status"
	SERVER_PID=
	J=$(cat "$TEST_DIR/server.out")
	expect ".tool == \"netbench\" and .test == \"server\" and .score == $1"
	assert_eq "$(cat "$TEST_DIR/server.err")" "" "server stderr"
}

@test "netbench: rr and stream against one server, which stops on SIGTERM" {
	start_server
	bench netbench client --host 127.0.0.1 --port "$PORT" --test rr --duration 0.2
	expect_result netbench tcp_rr trans/s
	# the mean latency is the inverse of the rate; the percentiles are
	# ordered and within the 2% buckets of the histogram
	expect '(1e6 / .score - .latency_us | fabs) < 0.01 * .latency_us'
	expect '.p50_us > 0 and .p99_us >= .p50_us'
	bench netbench client --host 127.0.0.1 --port "$PORT" --test stream --duration 0.2
	expect_result netbench tcp_sendfile Mbit/s
	expect '.bytes > 0 and (.bytes * 8 / .duration_s / 1e6 - .score | fabs) < 0.01 * .score'
	bench netbench client --host 127.0.0.1 --port "$PORT" --test rr --count 300
	expect '.iterations == 300'
	kill -0 "$SERVER_PID" || flunk "the server ended after sequential clients"
	kill -TERM "$SERVER_PID"
	server_exits_with 3
}

@test "netbench: --once serves one client and exits; no server means exit 1" {
	start_server --once
	bench netbench client --host 127.0.0.1 --port "$PORT" --test stream --duration 0.1
	expect '.test == "tcp_sendfile" and .bytes > 0'
	server_exits_with 1
	run --separate-stderr "${IN_NS[@]}" "$BENCH/netbench" client --host 127.0.0.1 \
		--port "$PORT" --test rr --duration 0.1
	assert_status 1
	assert_match "$stderr" '^netbench: connect: Connection refused$' "stderr"
}

@test "fileio: write, read, copy and create in a directory, files removed after" {
	mkdir "$TEST_DIR/io"
	bench fileio --test write --dir "$TEST_DIR/io" --size 2 --duration 0.2
	expect_result fileio file_write MB/s
	expect '.block_kib == 64 and .size_mib == 2'
	bench fileio --test read --dir "$TEST_DIR/io" --size 2 --duration 0.2
	expect_result fileio file_read MB/s
	bench fileio --test copy --dir "$TEST_DIR/io" --size 2 --block 16 --duration 0.2
	expect_result fileio file_copy MB/s
	expect '.block_kib == 16'
	bench fileio --test create --dir "$TEST_DIR/io" --duration 0.2
	expect_result fileio file_create files/s
	# --count counts blocks: 3 MiB in 64 KiB blocks wraps a 2 MiB file once
	bench fileio --test write --dir "$TEST_DIR/io" --size 2 --count 48
	expect '.iterations == 48 and .score > 0'
	bench fileio --test create --dir "$TEST_DIR/io" --count 150
	expect '.iterations == 150'
	assert_eq "$(ls -A "$TEST_DIR/io")" "" "files left in the directory"
	run --separate-stderr "$BENCH/fileio" --test write --dir "$TEST_DIR/none" --duration 0.1
	assert_status 1
	assert_match "$stderr" "^fileio: $TEST_DIR/none: No such file or directory$"
}

@test "httpbench: GETs of a static page from busybox httpd, in a private netns" {
	[ -x "$ROOTFS/bin/busybox" ] || skip "no busybox in $ROOTFS (tests/run.sh builds it)"
	NS=qpodwt-$$-$BATS_TEST_NUMBER-$RANDOM
	ip netns add "$NS"
	IN_NS=(nsenter "--net=/run/netns/$NS")
	"${IN_NS[@]}" ip link set lo up
	mkdir "$TEST_DIR/www"
	head -c 3000 /dev/zero | tr '\0' q >"$TEST_DIR/www/index.html"
	"${IN_NS[@]}" "$ROOTFS/bin/busybox" httpd -f -p 127.0.0.1:8080 -h "$TEST_DIR/www" 3>&- &
	HTTPD_PID=$!
	wait_for 100 "${IN_NS[@]}" "$BENCH/httpbench" --host 127.0.0.1 --port 8080 --path /index.html --count 1
	bench httpbench --host 127.0.0.1 --port 8080 --path /index.html --clients 3 --duration 0.3
	expect_result httpbench http req/s
	expect '.clients == 3 and .bytes > 3000 and .p50_us > 0 and .p99_us >= .p50_us and .latency_us > 0'
	# --count is per client
	bench httpbench --host 127.0.0.1 --port 8080 --path /index.html --clients 2 --count 5
	expect '.iterations == 10'
	# a page that is not there is a 404: an error, not a result
	run --separate-stderr "${IN_NS[@]}" "$BENCH/httpbench" --host 127.0.0.1 --port 8080 --path /nothing --count 1
	assert_status 1
	assert_eq "$stderr" 'httpbench: answer: not "200" with a body'
}

@test "bad options: exit 2 with one line TOOL: what: reason" {
	local t
	for t in ctxsw forkbench execbench syscallbench intbench fpbench stream; do
		bad_input "$t" --no-such-option
		bad_input "$t" --duration 0
		bad_input "$t" --duration -1
		bad_input "$t" --duration abc
		bad_input "$t" --duration
		bad_input "$t" --duration 1 --count 5
		bad_input "$t" --count 0
		bad_input "$t" --count 2.5
	done
	assert_eq "${stderr_lines[0]}" "stream: --count 2.5: not a whole number"
	bad_input forkbench --duration 0
	assert_eq "${stderr_lines[0]}" "forkbench: --duration 0: must be > 0 and at most 86400"
	bad_input ctxsw --pairs 0
	bad_input ctxsw --pairs 5000
	local c=(client --host 127.0.0.1 --test rr)
	bad_input netbench
	bad_input netbench sideways
	bad_input netbench "${c[@]}" --no-such-option
	bad_input netbench "${c[@]}" --duration 0
	bad_input netbench "${c[@]}" --duration -1
	bad_input netbench "${c[@]}" --duration abc
	bad_input netbench client --test rr
	bad_input netbench client --host 127.0.0.1
	bad_input netbench client --host 127.0.0.1 --test udp
	bad_input netbench client --host 127.0.0.1 --test stream --count 10
	bad_input netbench client --host localhost --test rr
	bad_input netbench client --host 127.0.0.1 --test rr --port 70000
	bad_input netbench server --duration 1
	bad_input netbench server --bind 300.1.1.1
	assert_eq "${stderr_lines[0]}" "netbench: address 300.1.1.1: not a numeric IPv4 or IPv6 address"
	bad_input fileio --dir /tmp
	bad_input fileio --test erase --dir /tmp
	bad_input fileio --test write
	bad_input fileio --test write --dir /tmp --size 1 --block 2048
	assert_eq "${stderr_lines[0]}" "fileio: --block: larger than --size"
	bad_input fileio --test write --dir /tmp --size 0
	bad_input httpbench
	bad_input httpbench --host example.org
	bad_input httpbench --host 127.0.0.1 --path nothing
	bad_input httpbench --host 127.0.0.1 --clients 0
	bad_input httpbench --host 127.0.0.1 --clients 1000
	bad_input httpbench --host 127.0.0.1 --duration 1 --count 3
}
