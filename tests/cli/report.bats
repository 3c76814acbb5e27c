#!/usr/bin/env bats
# tests/cli/report.bats — `qpod report`: a start-scenario and a density
# result file rendered as table, markdown, CSV, SVG (well-formed XML, checked
# with xmllint) and HTML (rendered to PNG by headless Chromium, as a person
# would look at it); bad input fails with one "qpod: report: ..." line.
# No pods are started: these tests need neither root nor the test rootfs.

load helpers

setup() {
	[ -x "$QPOD" ] || flunk "$QPOD not built (make)"
	TEST_DIR=$(mktemp -d "${BATS_TEST_TMPDIR:-/tmp}/qr.XXXXXX")
	cat >"$TEST_DIR/start.json" <<'EOF'
{"tool":"qpod","version":"0.1.0","scenario":"start","mode":"vm","accel":"tcg",
 "host":{"cpu":"Test CPU <b>&amp;</b>","cores":2,"mem_mb":7936,"kernel":"6.1.0-test","qemu":"QEMU emulator version 7.2.0"},
 "params":{"runs":5,"image":"busybox"},
 "results":[
  {"name":"qpod","metric":"start_ms","unit":"ms","n":5,"min":372,"max":401,"avg":383.8,"median":380,"samples":[376,380,372,390,401]},
  {"name":"seabios","metric":"start_ms","unit":"ms","n":4,"min":700,"max":720,"avg":711,"median":712,"samples":[709,700,720,715]},
  {"name":"traditional-vm","metric":"start_ms","unit":"ms","n":2,"min":1500,"max":1600,"avg":1550,"median":1550,"samples":[1500,1600]},
  {"name":"qpod","metric":"run_to_exit_ms","unit":"ms","n":2,"min":450,"max":470,"avg":460,"median":460,"samples":[450,470]}],
 "phases":{"qpod":{"prepare":1.2,"network":0.4,"vmm":40,"firmware":20,"kernel":250,"init":30,"workload":5},
           "seabios":{"prepare":1.3,"network":0.4,"vmm":41,"firmware":300,"kernel":300,"init":31,"workload":5}},
 "partial":false,"definitions":"start: from the request to the workload exec'd\nrun-to-exit: qpod run --rm IMAGE true"}
EOF
	cat >"$TEST_DIR/density.json" <<'EOF'
{"tool":"qpod","version":"0.1.0","scenario":"density","mode":"container","accel":"none",
 "host":{"cpu":"Test CPU","cores":2,"mem_mb":7936,"kernel":"6.1.0-test","qemu":null},
 "params":{"pod_mem_mb":512},
 "results":[
  {"name":"qpod","metric":"start_ms","unit":"ms","n":5,"min":9,"max":15,"avg":11.4,"median":11,"samples":[9,10,11,12,15]},
  {"name":"qpod","metric":"host_mem_available_mb","unit":"MB","n":5,"min":6800,"max":7000,"avg":6900,"median":6900,"samples":[7000,6950,6900,6850,6800]}],
 "phases":{},"partial":true,"count":5,"stop_reason":"host memory reserve reached"}
EOF
}

teardown() {
	[ -n "${TEST_DIR:-}" ] && rm -rf "$TEST_DIR"
	return 0
}

@test "report --help names every format" {
	run "$QPOD" report --help
	assert_status 0
	for f in table markdown csv svg html; do
		assert_contains "$output" "$f"
	done
}

@test "table: aligned columns, ratios, phases, host" {
	run --separate-stderr "$QPOD" report "$TEST_DIR/start.json"
	assert_status 0
	assert_match "$output" "name +metric +n +min +max +avg +median +unit +ratio"
	assert_match "$output" "qpod +start_ms +5 +372\.00 +401\.00 +383\.80 +380\.00 +ms +1\.00x"
	assert_match "$output" "seabios +start_ms +4 +700\.00 +720\.00 +711\.00 +712\.00 +ms +1\.87x"
	assert_match "$output" "traditional-vm +start_ms +2 .* 4\.08x"
	assert_contains "$output" "phases (average ms)"
	assert_match "$output" "qpod +1\.20 +0\.40 +40\.00 +20\.00 +250\.00 +30\.00 +5\.00 +346\.60"
	assert_contains "$output" "host: Test CPU <b>&amp;</b>, 2 cores, 7936 MB, kernel 6.1.0-test"
	assert_contains "$output" "qemu: QEMU emulator version 7.2.0"
}

@test "table of a density file: count, stop reason, partial" {
	run --separate-stderr "$QPOD" report "$TEST_DIR/density.json"
	assert_status 0
	assert_contains "$output" "count: 5"
	assert_contains "$output" "stop reason: host memory reserve reached"
	assert_contains "$output" "partial: yes"
	assert_match "$output" "host_mem_available_mb +5 +6800\.00 +7000\.00 +6900\.00 +6900\.00 +MB"
}

@test "markdown: tables with alignment rows" {
	run --separate-stderr "$QPOD" report --format markdown "$TEST_DIR/start.json" "$TEST_DIR/density.json"
	assert_status 0
	assert_contains "$output" "| name | metric | n | min | max | avg | median | unit | ratio |"
	assert_contains "$output" "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
	assert_contains "$output" "| seabios | start\\_ms | 4 | 700.00 | 720.00 | 711.00 | 712.00 | ms | 1.87x |"
	assert_contains "$output" "### Phases (average ms)"
	assert_contains "$output" "### Measurement definitions"
	assert_contains "$output" "## $TEST_DIR/density.json"
}

@test "csv: a header and one row per result" {
	run --separate-stderr "$QPOD" report --format=csv "$TEST_DIR/start.json" "$TEST_DIR/density.json"
	assert_status 0
	assert_eq "${lines[0]}" "file,scenario,mode,accel,name,target,test,metric,unit,n,min,max,avg,median"
	assert_eq "${#lines[@]}" 7 "lines"
	assert_eq "${lines[1]}" "$TEST_DIR/start.json,start,vm,tcg,qpod,,,start_ms,ms,5,372,401,383.8,380"
	assert_eq "${lines[6]}" "$TEST_DIR/density.json,density,container,none,qpod,,,host_mem_available_mb,MB,5,6800,7000,6900,6900"
}

@test "svg: one well-formed file per chart, self-contained" {
	command -v xmllint >/dev/null || skip "xmllint missing (apt-get install libxml2-utils)"
	run --separate-stderr "$QPOD" report --format svg --output "$TEST_DIR/svg" \
		"$TEST_DIR/start.json" "$TEST_DIR/density.json"
	assert_status 0
	# start: 2 metrics + phases; density: 2 metrics, each as bars and per pod
	assert_eq "${#lines[@]}" 7 "charts written"
	for f in 1-start_ms 1-run_to_exit_ms 1-phases 2-start_ms 2-start_ms-per-pod \
		2-host_mem_available_mb 2-host_mem_available_mb-per-pod; do
		[ -s "$TEST_DIR/svg/$f.svg" ] || flunk "missing chart $f.svg"
		run xmllint --noout "$TEST_DIR/svg/$f.svg"
		assert_status 0
		grep -q '<svg xmlns="http://www.w3.org/2000/svg"' "$TEST_DIR/svg/$f.svg" || flunk "$f: no <svg>"
		! grep -qiE '<script|href=|url\(|@import|@font-face' "$TEST_DIR/svg/$f.svg" ||
			flunk "$f: refers to something outside itself"
	done
	grep -q '<polyline' "$TEST_DIR/svg/2-start_ms-per-pod.svg" || flunk "density chart has no line"
	grep -q '>prepare<' "$TEST_DIR/svg/1-phases.svg" || flunk "phase chart has no legend"
}

@test "svg without --output DIR is an error" {
	run --separate-stderr "$QPOD" report --format svg "$TEST_DIR/start.json"
	assert_qpod_error 125
	assert_contains "$stderr" "qpod: report: --format svg needs --output DIR"
}

@test "html: self-contained page, rendered by headless Chromium" {
	local html=$TEST_DIR/report.html png=$TEST_DIR/report.png
	run --separate-stderr "$QPOD" report --format html --output "$html" \
		"$TEST_DIR/start.json" "$TEST_DIR/density.json"
	assert_status 0
	assert_eq "$(grep -c '<svg ' "$html")" 7 "inline charts"
	assert_eq "$(grep -c '<table' "$html")" 5 "tables"
	grep -q 'Test CPU &lt;b&gt;&amp;amp;&lt;/b&gt;, 2 cores, 7936 MB, kernel 6.1.0-test' "$html" ||
		flunk "host description missing or not escaped"
	grep -q 'QEMU emulator version 7.2.0' "$html" || flunk "qemu version missing"
	! grep -qiE '<script|<link|src=|href=|url\(|@import' "$html" || flunk "page refers to something outside itself"

	command -v chromium >/dev/null || skip "chromium missing (apt-get install chromium; tools/deps.sh installs it)"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
		--user-data-dir="$TEST_DIR/chromium" --screenshot="$png" --window-size=1200,2000 \
		"file://$html" >"$TEST_DIR/chromium.log" 2>&1 ||
		flunk "chromium failed:" "$(tail -5 "$TEST_DIR/chromium.log")"
	[ -s "$png" ] || flunk "no screenshot"
	# a real picture: a PNG of the window's size, with many distinct colours
	run python3 - "$png" <<'EOF'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
w, h, depth, ctype = struct.unpack(">IIBB", data[16:26])
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    if kind == b"IDAT":
        idat += data[pos + 8:pos + 8 + n]
    pos += 12 + n
raw = zlib.decompress(idat)
bpp = {2: 3, 6: 4}[ctype]
stride = w * bpp + 1
colours = set()
for y in range(0, h, 7):  # rows as stored (filtered): enough to tell a blank page
    row = raw[y * stride + 1:(y + 1) * stride]
    for x in range(0, w * bpp, bpp * 5):
        colours.add(row[x:x + bpp])
print(w, h, len(colours))
assert (w, h) == (1200, 2000), "size"
assert len(colours) > 20, "almost a single colour"
EOF
	[ "$status" -eq 0 ] || flunk "screenshot check failed: $output"
}

@test "bad input: missing file, not JSON, wrong types, huge file, bad format" {
	run --separate-stderr "$QPOD" report "$TEST_DIR/nope.json"
	assert_qpod_error 125
	assert_contains "$stderr" "qpod: report: \"$TEST_DIR/nope.json\": No such file or directory"

	echo 'not json' >"$TEST_DIR/bad.json"
	run --separate-stderr "$QPOD" report "$TEST_DIR/bad.json"
	assert_qpod_error 125
	assert_contains "$stderr" "parse error"

	jq '.results[1].samples = "many"' "$TEST_DIR/start.json" >"$TEST_DIR/types.json"
	run --separate-stderr "$QPOD" report "$TEST_DIR/types.json"
	assert_qpod_error 125
	assert_contains "$stderr" "results[1].samples: expected an array"

	jq 'del(.results[0].unit)' "$TEST_DIR/start.json" >"$TEST_DIR/missing.json"
	run --separate-stderr "$QPOD" report --format html "$TEST_DIR/missing.json"
	assert_qpod_error 125
	assert_contains "$stderr" "results[0].unit: missing"

	truncate -s 17M "$TEST_DIR/huge.json"
	run --separate-stderr "$QPOD" report "$TEST_DIR/huge.json"
	assert_qpod_error 125
	assert_contains "$stderr" "larger than"

	run --separate-stderr "$QPOD" report "$TEST_DIR"
	assert_qpod_error 125
	assert_contains "$stderr" "not a regular file"

	run --separate-stderr "$QPOD" report --format pdf "$TEST_DIR/start.json"
	assert_qpod_error 125
	assert_contains "$stderr" "--format must be table, markdown, csv, svg or html"

	run --separate-stderr "$QPOD" report
	assert_qpod_error 125
	run --separate-stderr "$QPOD" report --output "$TEST_DIR/out.txt" "$TEST_DIR/start.json" "$TEST_DIR/bad.json"
	assert_qpod_error 125
	[ ! -e "$TEST_DIR/out.txt" ] || flunk "a failed report wrote its output"
}

@test "hostile strings are escaped in every format" {
	jq '.results[0].name = "<script>alert(1)</script>\u001b[31m|x" | .params.note = "=cmd|x"' \
		"$TEST_DIR/start.json" >"$TEST_DIR/evil.json"
	run --separate-stderr "$QPOD" report --format html --output "$TEST_DIR/evil.html" "$TEST_DIR/evil.json"
	assert_status 0
	! grep -q '<script' "$TEST_DIR/evil.html" || flunk "unescaped markup in the HTML"
	grep -q '&lt;script&gt;alert(1)&lt;/script&gt;?\[31m|x' "$TEST_DIR/evil.html" || flunk "name not escaped as expected"
	run --separate-stderr "$QPOD" report "$TEST_DIR/evil.json"
	assert_status 0
	assert_not_contains "$output" $'\e'
	run --separate-stderr "$QPOD" report --format svg --output "$TEST_DIR/evil" "$TEST_DIR/evil.json"
	assert_status 0
	if command -v xmllint >/dev/null; then
		run xmllint --noout "$TEST_DIR/evil/1-start_ms.svg"
		assert_status 0
	fi
}
