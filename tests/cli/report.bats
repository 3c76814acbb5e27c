#!/usr/bin/env bats
# tests/cli/report.bats — `qpod report`: a start-scenario and two density
# result files rendered as table, markdown, CSV, SVG (well-formed XML, checked
# with xmllint) and HTML, which Debian's Chromium (tools/deps.sh) renders
# headless twice: a PNG screenshot, as a person would look at it, and the
# DOM after layout (--dump-dom of a copy with tests/cli/report_inspect.js
# appended: the charts, their data marks, captions, and text boxes that
# overlap or leave the picture, measured by the browser; no npm, no driver).
# Bad input fails with one "qpod: report: ..." line.
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
	# as `qpod density --mode vm` writes it: a constant guest_total_mb, one
	# value of per_pod_host_mb, raw floats
	cat >"$TEST_DIR/density-vm.json" <<'EOF'
{"tool":"qpod","version":"0.1.0","scenario":"density","mode":"vm","accel":"tcg",
 "host":{"cpu":"Test CPU","cores":2,"mem_mb":24105,"kernel":"6.1.0-test","qemu":"QEMU emulator version 7.2.22"},
 "params":{"memory_mb":256,"max":3,"host_mem_available_before_mb":23349.81640625},
 "results":[
  {"name":"qpod","metric":"start_ms","unit":"ms","n":3,"min":1192.312,"max":2008.463,"avg":1684.4973333333335,"median":1852.717,"samples":[1852.717,2008.463,1192.312]},
  {"name":"qpod","metric":"host_mem_available_mb","unit":"MB","n":3,"min":23191.2421875,"max":23311.27734375,"avg":23244.53515625,"median":23231.0859375,"samples":[23311.27734375,23231.0859375,23191.2421875]},
  {"name":"qpod","metric":"per_pod_host_mb","unit":"MB","n":1,"min":60.294270833333336,"max":60.294270833333336,"avg":60.294270833333336,"median":60.294270833333336,"samples":[60.294270833333336]},
  {"name":"qpod","metric":"rss_mb","unit":"MB","n":3,"min":108.484375,"max":108.67578125,"avg":108.5859375,"median":108.59765625,"samples":[108.67578125,108.484375,108.59765625]},
  {"name":"qpod","metric":"guest_total_mb","unit":"MB","n":3,"min":242.55078125,"max":242.55078125,"avg":242.55078125,"median":242.55078125,"samples":[242.55078125,242.55078125,242.55078125]},
  {"name":"qpod","metric":"teardown_ms","unit":"ms","n":1,"min":46.29,"max":46.29,"avg":46.29,"median":46.29,"samples":[46.29]}],
 "phases":{},"partial":false,"count":3,"stop_reason":"max"}
EOF
}

# inspect_html PAGE: $inspect = the JSON report_inspect.js leaves in the DOM
# of PAGE as laid out by headless Chromium
inspect_html() {
	command -v chromium >/dev/null || skip "chromium missing (apt-get install chromium; tools/deps.sh installs it)"
	{
		cat "$1"
		printf '<script>\n'
		cat "$BATS_TEST_DIRNAME/report_inspect.js"
		printf '</script>\n'
	} >"$TEST_DIR/inspect.html"
	timeout 120 chromium --headless --no-sandbox --disable-gpu --user-data-dir="$TEST_DIR/chromium" \
		--window-size=1200,2000 --dump-dom "file://$TEST_DIR/inspect.html" >"$TEST_DIR/dom.html" \
		2>"$TEST_DIR/chromium.log" || flunk "chromium failed:" "$(tail -5 "$TEST_DIR/chromium.log")"
	inspect=$(python3 -c '
import html, re, sys
m = re.search(r"<pre id=\"qpod-inspect\">(.*?)</pre>", open(sys.argv[1]).read(), re.S)
print(html.unescape(m.group(1)) if m else "")' "$TEST_DIR/dom.html")
	[ -n "$inspect" ] || flunk "the inspection script left nothing in the DOM"
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

@test "ratios within a kind, the bases in the header; a peer's reason in a note" {
	# as `bench start --mode both --baseline` writes it on a hybrid host
	cat >"$TEST_DIR/peers.json" <<'EOF'
{"tool":"qpod","version":"0.1.0","scenario":"start","mode":"both","accel":"tcg",
 "host":{"cpu":"Test CPU","cores":2,"mem_mb":7936,"kernel":"6.1.0-test","qemu":"QEMU emulator version 7.2.0"},
 "params":{"runs":2,"runsc_platform":"ptrace"},
 "results":[
  {"name":"qpod-container","metric":"run_to_exit_ms","unit":"ms","n":2,"min":20,"max":20,"avg":20,"median":20,"samples":[20,20]},
  {"name":"runc","metric":"run_to_exit_ms","unit":"ms","n":2,"min":50,"max":50,"avg":50,"median":50,"samples":[50,50]},
  {"name":"crun","metric":"run_to_exit_ms","unit":"ms","n":0,"min":null,"max":null,"avg":null,"median":null,"samples":[],
   "reason":"exited with status 1: cgroups in hybrid mode not supported, drop all controllers from cgroupv2"},
  {"name":"runsc","metric":"run_to_exit_ms","unit":"ms","n":2,"min":600,"max":600,"avg":600,"median":600,"samples":[600,600]},
  {"name":"qpod-vm","metric":"run_to_exit_ms","unit":"ms","n":2,"min":250,"max":250,"avg":250,"median":250,"samples":[250,250]},
  {"name":"qpod-vm-cold","metric":"run_to_exit_ms","unit":"ms","n":2,"min":500,"max":500,"avg":500,"median":500,"samples":[500,500]},
  {"name":"traditional-vm","metric":"run_to_exit_ms","unit":"ms","n":2,"min":2500,"max":2500,"avg":2500,"median":2500,"samples":[2500,2500]}],
 "phases":{},"partial":false}
EOF
	run --separate-stderr "$QPOD" report "$TEST_DIR/peers.json"
	assert_status 0
	assert_match "$output" "unit +ratio vs runc, qpod-vm-cold +note"
	assert_match "$output" "qpod-container +run_to_exit_ms .* ms +0\.40x"
	assert_match "$output" "runc +run_to_exit_ms .* ms +1\.00x"
	assert_match "$output" "crun +run_to_exit_ms +0 +- +- +- +- +ms +exited with status 1: cgroups in hybrid mode not supported"
	# a VM pod against the cold boot, not against the container row
	assert_match "$output" "qpod-vm +run_to_exit_ms .* ms +0\.50x"
	assert_match "$output" "traditional-vm +run_to_exit_ms .* ms +5\.00x"
	# runsc is the only sandbox: no ratio
	local runsc_row
	runsc_row=$(grep '^runsc ' <<<"$output")
	assert_match "$runsc_row" "runsc +run_to_exit_ms +2( +600\.00){4} +ms"
	[[ $runsc_row =~ [0-9]x ]] && flunk "runsc has a ratio: $runsc_row"
	# the reason survives a round trip through markdown and HTML
	run --separate-stderr "$QPOD" report --format markdown "$TEST_DIR/peers.json"
	assert_contains "$output" "| ms |  | exited with status 1: cgroups in hybrid mode not supported"
	run --separate-stderr "$QPOD" report --format html "$TEST_DIR/peers.json"
	assert_contains "$output" "<td>exited with status 1: cgroups in hybrid mode not supported"
	run --separate-stderr "$QPOD" report --format csv "$TEST_DIR/peers.json"
	assert_contains "$output" ",crun,,,run_to_exit_ms,ms,0,,,,,\"exited with status 1: cgroups in hybrid mode not supported, drop all controllers from cgroupv2\""
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
	assert_contains "$output" "| name | metric | n | min | max | avg | median | unit | ratio vs qpod |"
	assert_contains "$output" "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- | ---: |"
	assert_contains "$output" "| seabios | start\\_ms | 4 | 700.00 | 720.00 | 711.00 | 712.00 | ms | 1.87x |"
	assert_contains "$output" "### Phases (average ms)"
	assert_contains "$output" "### Measurement definitions"
	assert_contains "$output" "## $TEST_DIR/density.json"
}

@test "csv: a header and one row per result" {
	run --separate-stderr "$QPOD" report --format=csv "$TEST_DIR/start.json" "$TEST_DIR/density.json"
	assert_status 0
	assert_eq "${lines[0]}" "file,scenario,mode,accel,name,target,test,metric,unit,n,min,max,avg,median,reason"
	assert_eq "${#lines[@]}" 7 "lines"
	assert_eq "${lines[1]}" "$TEST_DIR/start.json,start,vm,tcg,qpod,,,start_ms,ms,5,372,401,383.8,380,"
	assert_eq "${lines[6]}" "$TEST_DIR/density.json,density,container,none,qpod,,,host_mem_available_mb,MB,5,6800,7000,6900,6900,"
}

@test "svg: one well-formed file per chart, self-contained" {
	command -v xmllint >/dev/null || skip "xmllint missing (apt-get install libxml2-utils)"
	run --separate-stderr "$QPOD" report --format svg --output "$TEST_DIR/svg" \
		"$TEST_DIR/start.json" "$TEST_DIR/density.json"
	assert_status 0
	# start: start_ms (3 variants) + phases (run_to_exit_ms has one: no
	# chart); density: the two curves (no one-bar charts)
	assert_eq "${#lines[@]}" 4 "charts written"
	for f in 1-start_ms 1-phases 2-start_ms-per-pod 2-host_mem_available_mb-per-pod; do
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
	assert_eq "$(grep -c '<svg ' "$html")" 4 "inline charts"
	assert_eq "$(grep -c '<table' "$html")" 5 "tables"
	grep -q 'Test CPU &lt;b&gt;&amp;amp;&lt;/b&gt;, 2 cores, 7936 MB, kernel 6.1.0-test' "$html" ||
		flunk "host description missing or not escaped"
	assert_eq "$(grep -c 'QEMU emulator version 7.2.0' "$html")" 1 "qemu lines (the vm result's only)"
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

@test "html in Chromium's layout: the phase table of bench start --mode both --baseline fits the page" {
	# every phase column a --mode both --baseline run has (15 columns)
	local ph='"prepare":1.61,"network":0.42,"vmm_spawn":2.13,"vmm_init":106.27,"firmware":2.08,"vmm_firmware":1180.55,"kernel":2305.73,"init":37.16,"restore":85.28,"take":3.31,"resume":32.9,"workload":58.44'
	cat >"$TEST_DIR/wide.json" <<EOF
{"tool":"qpod","version":"0.1.0","scenario":"start","mode":"both","accel":"tcg",
 "host":{"cpu":"Test CPU","cores":2,"mem_mb":7936,"kernel":"6.1.0-test","qemu":"QEMU emulator version 7.2.0"},
 "params":{"runs":2},
 "results":[
  {"name":"qpod-container","metric":"run_to_exit_ms","unit":"ms","n":1,"min":20,"max":20,"avg":20,"median":20,"samples":[20]},
  {"name":"crun","metric":"run_to_exit_ms","unit":"ms","n":0,"min":null,"max":null,"avg":null,"median":null,"samples":[],
   "reason":"exited with status 1: cgroups in hybrid mode not supported, drop all controllers from cgroupv2"},
  {"name":"qpod-vm-cold","metric":"run_to_exit_ms","unit":"ms","n":1,"min":500,"max":500,"avg":500,"median":500,"samples":[500]}],
 "phases":{"qpod-container":{"prepare":1.56,"namespaces":25.14,"workload":6.34},
  "qpod-vm":{$ph},"qpod-vm-cold":{$ph},"qpod-vm-spare":{$ph},"qboot":{$ph},"seabios":{$ph}},
 "partial":false}
EOF
	run --separate-stderr "$QPOD" report --format html --output "$TEST_DIR/wide.html" "$TEST_DIR/wide.json"
	assert_status 0
	inspect_html "$TEST_DIR/wide.html"
	run python3 -c '
import json, sys
j = json.loads(sys.argv[1])
assert j["wide"] == [], "tables wider than the page: %s" % j["wide"]' "$inspect"
	[ "$status" -eq 0 ] || flunk "$output"
}

@test "html in Chromium's layout: every chart draws data, no label overlaps another or leaves it, captions are not titles" {
	local html=$TEST_DIR/report.html
	run --separate-stderr "$QPOD" report --format html --output "$html" \
		"$TEST_DIR/start.json" "$TEST_DIR/density.json" "$TEST_DIR/density-vm.json"
	assert_status 0
	inspect_html "$html"
	run python3 -c '
import json, sys
j = json.loads(sys.argv[1])
charts = j["charts"]
titles = [c["title"] for c in charts]
print("\n".join(titles))
# start: start_ms + phases; density (container): 2 curves; density (vm): the
# 2 curves + rss_mb (guest_total_mb is constant, per_pod_host_mb and
# teardown_ms are single values: no charts)
assert len(charts) == 7, "charts: %d" % len(charts)
assert titles[2:4] == ["density: start latency of each pod", "density: host MemAvailable after each pod"], "the density curve is not first"
assert titles[4:6] == titles[2:4], "the vm density page does not start with its curve"
for c in charts:
    assert c["marks"] > 0, "empty chart: " + c["title"]
    assert not c["overlaps"], "overlapping labels in %s: %s" % (c["title"], c["overlaps"])
    assert not c["outside"], "labels outside %s: %s" % (c["title"], c["outside"])
    assert c["caption"] and c["caption"] != c["title"] and c["title"] not in c["caption"], "caption repeats title: " + c["title"]
for h in j["headings"]:
    assert "/" not in h and ".json" not in h, "heading is a path: " + h
assert j["headings"] == ["Start latency: VM pods (tcg)", "Density: container pods, 5 started", "Density: VM pods (tcg), 3 started"], j["headings"]
' "$inspect"
	[ "$status" -eq 0 ] || flunk "$output"
	# Hyper's published points as a reference on the vm density curve only
	assert_eq "$(grep -c 'class="reference"' "$html")" 2 "reference lines"
	grep -q 'Hyper, published: 1367 ms (TCG, qboot)' "$html" || flunk "no Hyper start reference"
	grep -q 'Hyper, published: 252 pods on 16 GB' "$html" || flunk "no Hyper density reference"
	# a density section shows its curve before its tables
	python3 - "$html" <<'EOF' || flunk "a density section does not open with its curve"
import re, sys
for sec in open(sys.argv[1]).read().split("<section>")[1:]:
    if "<h2>Density" in sec:
        assert sec.index("start latency of each pod") < sec.index("<table"), sec[:200]
EOF
}

@test "html in Chromium's layout: the workload families and the consolidation curves" {
	cat >"$TEST_DIR/workload.json" <<'EOF'
{"tool":"qpod","version":"0.1.0","scenario":"workload","mode":"both","accel":"none","host":{"cpu":"Test CPU","cores":2,"mem_mb":7936,"kernel":"6.1.0-test","qemu":"QEMU emulator version 7.2.0"},"params":{"runs":1,"warmup":1,"image":"busybox","memory":"default","vcpus":1,"baseline":"no"},"phases":{},"partial":false,"results":[
  {"name":"host","metric":"score","unit":"MB/s","target":"host","test":"file_write","n":1,"min":1191,"max":1191,"avg":1191,"median":1191,"samples":[1191]},
  {"name":"host","metric":"score","unit":"files/s","target":"host","test":"file_create","n":1,"min":704,"max":704,"avg":704,"median":704,"samples":[704]},
  {"name":"host","metric":"score","unit":"MB/s","target":"host","test":"vol_write","n":1,"min":1158.1,"max":1158.1,"avg":1158.1,"median":1158.1,"samples":[1158.1]},
  {"name":"host","metric":"score","unit":"MB/s","target":"host","test":"vol_read","n":1,"min":3935.4,"max":3935.4,"avg":3935.4,"median":3935.4,"samples":[3935.4]},
  {"name":"host","metric":"score","unit":"req/s","target":"host","test":"http","n":1,"min":1906,"max":1906,"avg":1906,"median":1906,"samples":[1906]},
  {"name":"host","metric":"p50_us","unit":"us","target":"host","test":"http","n":1,"min":1491,"max":1491,"avg":1491,"median":1491,"samples":[1491]},
  {"name":"host","metric":"p99_us","unit":"us","target":"host","test":"http","n":1,"min":7562.7,"max":7562.7,"avg":7562.7,"median":7562.7,"samples":[7562.7]},
  {"name":"host","metric":"p50_us","unit":"us","target":"host","test":"rr_idle","n":1,"min":21.11,"max":21.11,"avg":21.11,"median":21.11,"samples":[21.11]},
  {"name":"host","metric":"p99_us","unit":"us","target":"host","test":"rr_idle","n":1,"min":77.99,"max":77.99,"avg":77.99,"median":77.99,"samples":[77.99]},
  {"name":"host","metric":"p50_us","unit":"us","target":"host","test":"rr_busy_pod","n":1,"min":21.53,"max":21.53,"avg":21.53,"median":21.53,"samples":[21.53]},
  {"name":"host","metric":"p99_us","unit":"us","target":"host","test":"rr_busy_pod","n":1,"min":66.56,"max":66.56,"avg":66.56,"median":66.56,"samples":[66.56]},
  {"name":"container","metric":"score","unit":"MB/s","target":"container","test":"file_write","n":1,"min":935.6,"max":935.6,"avg":935.6,"median":935.6,"samples":[935.6]},
  {"name":"container","metric":"score","unit":"files/s","target":"container","test":"file_create","n":1,"min":1780,"max":1780,"avg":1780,"median":1780,"samples":[1780]},
  {"name":"container","metric":"score","unit":"MB/s","target":"container","test":"vol_write","n":1,"min":1176,"max":1176,"avg":1176,"median":1176,"samples":[1176]},
  {"name":"container","metric":"score","unit":"MB/s","target":"container","test":"vol_read","n":1,"min":5018.7,"max":5018.7,"avg":5018.7,"median":5018.7,"samples":[5018.7]},
  {"name":"container","metric":"score","unit":"req/s","target":"container","test":"http","n":1,"min":2025.5,"max":2025.5,"avg":2025.5,"median":2025.5,"samples":[2025.5]},
  {"name":"container","metric":"p50_us","unit":"us","target":"container","test":"http","n":1,"min":1433.1,"max":1433.1,"avg":1433.1,"median":1433.1,"samples":[1433.1]},
  {"name":"container","metric":"p99_us","unit":"us","target":"container","test":"http","n":1,"min":8860.9,"max":8860.9,"avg":8860.9,"median":8860.9,"samples":[8860.9]},
  {"name":"container","metric":"p50_us","unit":"us","target":"container","test":"rr_idle","n":1,"min":27.85,"max":27.85,"avg":27.85,"median":27.85,"samples":[27.85]},
  {"name":"container","metric":"p99_us","unit":"us","target":"container","test":"rr_idle","n":1,"min":141.3,"max":141.3,"avg":141.3,"median":141.3,"samples":[141.3]},
  {"name":"container","metric":"p50_us","unit":"us","target":"container","test":"rr_busy_pod","n":1,"min":31.99,"max":31.99,"avg":31.99,"median":31.99,"samples":[31.99]},
  {"name":"container","metric":"p99_us","unit":"us","target":"container","test":"rr_busy_pod","n":1,"min":11017.4,"max":11017.4,"avg":11017.4,"median":11017.4,"samples":[11017.4]}]}
EOF
	cat >"$TEST_DIR/consolidate.json" <<'EOF'
{"tool":"qpod","version":"0.1.0","scenario":"consolidate","mode":"both","accel":"tcg","host":{"cpu":"Test CPU","cores":2,"mem_mb":7936,"kernel":"6.1.0-test","qemu":"QEMU emulator version 7.2.0"},"params":{"runs":1,"warmup":0,"image":"busybox","memory":"default","vcpus":1,"baseline":"no","duration":0.5,"pods":2,"reserve_mb":2410},"phases":{},"partial":false,"stop_reason":"max","results":[
  {"name":"container","metric":"aggregate_int_dmips","unit":"DMIPS","target":"container","n":2,"min":4793,"max":6961.4,"avg":5877.2,"median":5877.2,"samples":[4793,6961.4]},
  {"name":"container","metric":"aggregate_stream_gbs","unit":"GB/s","target":"container","n":2,"min":33.58,"max":61.6,"avg":47.59,"median":47.59,"samples":[33.58,61.6]},
  {"name":"container","metric":"aggregate_rr_rate","unit":"trans/s","target":"container","n":2,"min":18095.5,"max":27502.1,"avg":22798.8,"median":22798.8,"samples":[18095.5,27502.1]},
  {"name":"container","metric":"worst_p50_us","unit":"us","target":"container","n":2,"min":26.24,"max":51.46,"avg":38.85,"median":38.85,"samples":[26.24,51.46]},
  {"name":"container","metric":"worst_p99_us","unit":"us","target":"container","n":2,"min":380.2,"max":1152.6,"avg":766.4,"median":766.4,"samples":[380.2,1152.6]},
  {"name":"vm","metric":"aggregate_int_dmips","unit":"DMIPS","target":"vm","n":2,"min":208.9,"max":355.3,"avg":282.1,"median":282.1,"samples":[208.9,355.3]},
  {"name":"vm","metric":"aggregate_stream_gbs","unit":"GB/s","target":"vm","n":2,"min":0.75,"max":1.84,"avg":1.295,"median":1.295,"samples":[0.75,1.84]},
  {"name":"vm","metric":"aggregate_rr_rate","unit":"trans/s","target":"vm","n":2,"min":955.3,"max":1169.7,"avg":1062.5,"median":1062.5,"samples":[955.3,1169.7]},
  {"name":"vm","metric":"worst_p50_us","unit":"us","target":"vm","n":2,"min":305.8,"max":324.5,"avg":315.15,"median":315.15,"samples":[305.8,324.5]},
  {"name":"vm","metric":"worst_p99_us","unit":"us","target":"vm","n":2,"min":14828,"max":24813.5,"avg":19820.75,"median":19820.75,"samples":[14828,24813.5]}]}
EOF
	local html=$TEST_DIR/report.html
	run --separate-stderr "$QPOD" report --format html --output "$html" "$TEST_DIR/workload.json" "$TEST_DIR/consolidate.json"
	assert_status 0
	grep -q "Index (host = 10 for each test, geometric mean per target): host 10.00 (7 tests)" "$html" || flunk "no index"
	grep -q "vm as % of container" "$html" || flunk "no consolidation table"
	inspect_html "$html"
	run python3 -c '
import json, sys
j = json.loads(sys.argv[1])
charts = j["charts"]
titles = [c["title"] for c in charts]
print("\n".join(titles))
# the workload chart, then one curve per consolidation metric
assert len(charts) == 6, "charts: %d" % len(charts)
assert titles[1] == "consolidation: aggregate CPU (intbench DMIPS)", titles[1]
for c in charts:
    assert c["marks"] > 0, "empty chart: " + c["title"]
    assert not c["overlaps"], "overlapping labels in %s: %s" % (c["title"], c["overlaps"])
    assert not c["outside"], "labels outside %s: %s" % (c["title"], c["outside"])
    assert c["caption"] and c["title"] not in c["caption"], "caption repeats title: " + c["title"]
assert j["headings"] == ["Workloads: container and VM pods (none)", "Consolidation: container and VM pods (tcg)"], j["headings"]
' "$inspect"
	[ "$status" -eq 0 ] || flunk "$output"
}

@test "rounded numbers: no raw floats in tables or CSV; container results have no qemu line" {
	run --separate-stderr "$QPOD" report --format csv "$TEST_DIR/density-vm.json"
	assert_status 0
	assert_contains "$output" ",start_ms,ms,3,1192.31,2008.46,1684.5,1852.72"
	assert_contains "$output" ",per_pod_host_mb,MB,1,60.29,60.29,60.29,60.29"
	! grep -qE '[0-9]\.[0-9]{3,}' <<<"$output" || flunk "raw floats in CSV:" "$output"
	run --separate-stderr "$QPOD" report "$TEST_DIR/density-vm.json"
	assert_status 0
	assert_contains "$output" "param host_mem_available_before_mb: 23349.82"
	! grep -qE '[0-9]\.[0-9]{3,}' <<<"$output" || flunk "raw floats in the table:" "$output"
	run --separate-stderr "$QPOD" report "$TEST_DIR/density.json"
	assert_status 0
	assert_not_contains "$output" "qemu:"
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
	# another JSON file: not "tool: missing", but what it is not
	"$QPOD" spec >"$TEST_DIR/config.json"
	run --separate-stderr "$QPOD" report "$TEST_DIR/config.json"
	assert_qpod_error 125
	assert_contains "$stderr" "not a qpod result file"

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
