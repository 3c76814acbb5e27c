#!/usr/bin/env bash
# tests/run.sh — the test-suite runner behind `make check` (run after the build).
#   1. builds the busybox test rootfs (cached outside the clone, in
#      ${QPOD_CACHE:-/var/cache/qpod}/rootfs-busybox),
#   2. runs every unit test binary build/tests/test_* (cmocka, TAP output),
#   3. runs every CLI test file tests/cli/*.bats (bats-core, TAP output),
#   4. when build-san/ holds the ASan+UBSan build (make check makes it):
#      the unit tests and the CLI files in $QPOD_SAN_CLI on it ("san/..."),
#      and checks that no sanitizer wrote a log into the test rootfs,
#   5. when build/fuzz/ holds the fuzz targets: each for $FUZZ_SECONDS
#      (default 2) from its seed corpus ("fuzz/..."),
# first the host's profile (tests/cli/host_features.bash: kernel, cgroup layout,
# /dev/kvm, the optional features the tests check for), one progress line
# per file, then each skip with its reason, each failure with its
# diagnostics, and last exactly one line "N passed, M failed"
# (", K skipped" when K > 0).
# Exit status 1 if anything failed; a runner that crashed, timed out or
# reported fewer tests than it planned counts as one failure.
#
# Usage: tests/run.sh [PATTERN]   only files whose name contains PATTERN
# (stages 4 and 5 run with no PATTERN, or one that starts "san" or "fuzz"
# and is part of their label: "san", "san/cli", "fuzz/fuzz_ipam")
# Environment: QPOD_CACHE, BUILD (default build), QPOD_TEST_TIMEOUT (seconds
# per file, default 600).
set -uo pipefail

cd "$(dirname "$0")/.." || exit 1
REPO=$PWD
BUILD=${BUILD:-build}
case $BUILD in /*) ;; *) BUILD=$REPO/$BUILD ;; esac
PATTERN=${1:-}
CACHE=${QPOD_CACHE:-/var/cache/qpod}
TIMEOUT=${QPOD_TEST_TIMEOUT:-600}
BATS=${BATS:-bats}

export QPOD_BUILD=$BUILD
export QPOD=${QPOD:-$BUILD/qpod}
export QPOD_ROOTFS=$CACHE/rootfs-busybox
export QPOD_CACHE=$CACHE

passed=0 failed=0 skipped=0
failures=$(mktemp /tmp/qpod-check.XXXXXX)
skips=$(mktemp /tmp/qpod-check-skips.XXXXXX)
out=$(mktemp /tmp/qpod-check-out.XXXXXX)
trap 'rm -f "$failures" "$skips" "$out"' EXIT

matches() { [ -z "$PATTERN" ] || [[ $(basename "$1") == *"$PATTERN"* ]]; }

# Record a failure: name, then optional diagnostic lines on stdin.
add_failure() {
	{
		echo "FAIL $1"
		sed 's/^/    /'
	} >>"$failures"
}

# tally LABEL RC: count the TAP in $out; print the file's progress line.
tally() {
	local label=$1 rc=$2 secs=$3
	local plan=-1 n_ok=0 n_fail=0 n_skip=0 results=0 line cur="" diag=""
	while IFS= read -r line || [ -n "$line" ]; do
		case $line in
		1..*)
			plan=${line#1..}
			plan=${plan%% *}
			[[ $plan =~ ^[0-9]+$ ]] || plan=-1
			;;
		"ok "* | "not ok "*)
			if [ -n "$cur" ]; then
				printf '%s' "$diag" | add_failure "$label: $cur"
				cur="" diag=""
			fi
			results=$((results + 1))
			shopt -s nocasematch
			if [[ $line == *"# skip"* ]]; then
				n_skip=$((n_skip + 1))
				echo "SKIP $label: $(sed -E 's/^ok [0-9]+ (- )?//' <<<"$line")" >>"$skips"
			elif [[ $line == "ok "* ]]; then
				n_ok=$((n_ok + 1))
			else
				n_fail=$((n_fail + 1))
				# "not ok 3 - name" / "not ok 3 name" -> "name"
				cur=$(sed -E 's/^not ok [0-9]+ (- )?//' <<<"$line")
			fi
			shopt -u nocasematch
			;;
		"#"*)
			[ -n "$cur" ] && diag+="${line#\# }"$'\n'
			;;
		esac
	done <"$out"
	if [ -n "$cur" ]; then
		printf '%s' "$diag" | add_failure "$label: $cur"
	fi

	local crash=""
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		crash="timed out after ${TIMEOUT}s, or killed (exit status $rc)"
	elif [ "$plan" -lt 0 ]; then
		crash="no TAP plan (exit status $rc)"
	elif [ "$results" -lt "$plan" ]; then
		crash="ran $results of $plan tests (exit status $rc)"
	elif [ "$rc" -ne 0 ] && [ "$n_fail" -eq 0 ]; then
		crash="exit status $rc without a failed test"
	fi
	if [ -n "$crash" ]; then
		n_fail=$((n_fail + 1))
		tail -n 20 "$out" | add_failure "$label: runner crashed: $crash"
	fi

	passed=$((passed + n_ok))
	failed=$((failed + n_fail))
	skipped=$((skipped + n_skip))
	local status="ok  "
	[ "$n_fail" -gt 0 ] && status="FAIL"
	printf '%s %-34s %3d passed, %d failed%s (%ss)\n' "$status" "$label" "$n_ok" "$n_fail" \
		"$([ "$n_skip" -gt 0 ] && echo ", $n_skip skipped")" "$secs"
}

# run_one LABEL CMD...: run with a timeout, TAP into $out, then tally.
run_one() {
	local label=$1 start end rc
	shift
	start=$(date +%s)
	# in a subshell, so bash's own "Segmentation fault" notice lands in $out
	(timeout --kill-after=10 "$TIMEOUT" "$@" </dev/null) >"$out" 2>&1
	rc=$?
	end=$(date +%s)
	tally "$label" "$rc" "$((end - start))"
}

ran=0

# ---- the host, once, so that every report says what it ran on ----
# shellcheck source=tests/cli/host_features.bash
. tests/cli/host_features.bash
host_profile

# ---- unit tests ----
for t in "$BUILD"/tests/test_*; do
	if [ ! -f "$t" ] || [ ! -x "$t" ]; then continue; fi
	matches "$t" || continue
	ran=$((ran + 1))
	CMOCKA_MESSAGE_OUTPUT=TAP run_one "unit/$(basename "$t")" "$t"
done

# ---- CLI tests ----
bats_files=()
for f in tests/cli/*.bats; do
	[ -f "$f" ] && matches "$f" && bats_files+=("$f")
done
if [ ${#bats_files[@]} -gt 0 ]; then
	if ! command -v "$BATS" >/dev/null; then
		echo "FAIL bats not found (apt-get install bats)"
		echo "bats not found: ${#bats_files[@]} CLI test files not run" | add_failure "cli: bats missing"
		failed=$((failed + 1))
	elif ! tools/mkrootfs.sh "$QPOD_ROOTFS" >"$out" 2>&1; then
		cat "$out"
		add_failure "cli: test rootfs could not be built" <"$out"
		failed=$((failed + 1))
	else
		cat "$out"
		for f in "${bats_files[@]}"; do
			ran=$((ran + 1))
			run_one "cli/$(basename "$f")" "$BATS" --tap "$f"
		done
	fi
fi

# ---- the sanitized build (ASan+UBSan): units and a CLI subset ----
# Reports go to stderr (log_path=stderr), never to a file: the in-pod init
# is qpod itself, and a log path would resolve inside the pod's rootfs.
# Any report fails its command (halt_on_error, no UBSan recovery), hence
# its test.
stage_matches() {
	[ -z "$PATTERN" ] || { [[ $PATTERN == san* || $PATTERN == fuzz* ]] && [[ $1 == *"$PATTERN"* ]]; }
}
SAN_BUILD=$REPO/build-san
# the subset: bad input, and isolation (its --init runs the sanitized init
# as the pod's PID 1); test_netlink (30 s of 1100 taps) runs unsanitized only
SAN_CLI=${QPOD_SAN_CLI:-bad_input isolation}
SAN_UNIT_SKIP=${QPOD_SAN_UNIT_SKIP:-test_netlink}
if [ -x "$SAN_BUILD/qpod" ]; then
	export ASAN_OPTIONS=log_path=stderr:halt_on_error=1:detect_leaks=0:detect_stack_use_after_return=0
	export UBSAN_OPTIONS=log_path=stderr:halt_on_error=1:print_stacktrace=1
	for t in "$SAN_BUILD"/tests/test_*; do
		[ -x "$t" ] || continue
		[[ " $SAN_UNIT_SKIP " == *" $(basename "$t") "* ]] && continue
		stage_matches "san/unit/$(basename "$t")" || continue
		ran=$((ran + 1))
		CMOCKA_MESSAGE_OUTPUT=TAP run_one "san/unit/$(basename "$t")" "$t"
	done
	san_cli=0
	for f in $SAN_CLI; do
		stage_matches "san/cli/$f.bats" || continue
		ran=$((ran + 1)) san_cli=1
		run_one "san/cli/$f.bats" env QPOD="$SAN_BUILD/qpod" QPOD_BUILD="$SAN_BUILD" \
			"$BATS" --tap "tests/cli/$f.bats"
	done
	if [ "$san_cli" = 1 ]; then
		logs=$(find "$QPOD_ROOTFS" -xdev \( -name 'asan.*' -o -name 'ubsan.*' -o -name '*.sanitizer*' \) 2>/dev/null)
		if [ -n "$logs" ]; then
			echo "FAIL san: sanitizer logs in the test rootfs"
			echo "$logs" | add_failure "san: sanitizer logs written into the pod's rootfs"
			failed=$((failed + 1))
		fi
	fi
	unset ASAN_OPTIONS UBSAN_OPTIONS
fi

# ---- fuzz targets, briefly, from the committed seed corpus ----
for t in "$BUILD"/fuzz/fuzz_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	stage_matches "fuzz/$name" || continue
	ran=$((ran + 1))
	run_one "fuzz/$name" tests/fuzz/run.sh "$BUILD/fuzz" "${FUZZ_SECONDS:-2}" "${name#fuzz_}"
done

if [ "$ran" -eq 0 ] && [ "$failed" -eq 0 ]; then
	echo "no test files${PATTERN:+ match \"$PATTERN\"} (build first: make)"
	failed=1
fi

if [ -s "$skips" ]; then
	echo
	echo "Skipped (what this host lacks):"
	cat "$skips"
fi
if [ -s "$failures" ]; then
	echo
	echo "Failures:"
	cat "$failures"
	echo
fi
summary="$passed passed, $failed failed"
[ "$skipped" -gt 0 ] && summary+=", $skipped skipped"
echo "$summary"
[ "$failed" -eq 0 ]
