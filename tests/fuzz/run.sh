#!/usr/bin/env bash
# tests/fuzz/run.sh — run libFuzzer targets from their committed seed
# corpus, TAP output (one line per target).
#   tests/fuzz/run.sh DIR SECONDS TARGET...
# DIR holds fuzz_TARGET binaries (make fuzz-bins); each runs SECONDS from
# tests/fuzz/corpus/TARGET, its new inputs in a scratch dir (the committed
# corpus is never written).  A crash leaves its input in
# $QPOD_FUZZ_ARTIFACTS (default /tmp/qpod-fuzz-artifacts) and fails.
set -uo pipefail

cd "$(dirname "$0")/../.." || exit 1
dir=$1 secs=$2
shift 2
artifacts=${QPOD_FUZZ_ARTIFACTS:-/tmp/qpod-fuzz-artifacts}
mkdir -p "$artifacts"

# the largest input each target needs: the channel's is one whole frame
# (QP_PROTO_FRAME_MAX: a 12-byte header and a 64 KiB payload)
max_len() {
	case $1 in
	channel) echo 65548 ;;
	spec | resources | state | result) echo 65536 ;;
	*) echo 16384 ;;
	esac
}

echo "1..$#"
i=0 failed=0
for t in "$@"; do
	i=$((i + 1))
	bin=$dir/fuzz_$t
	if [ ! -x "$bin" ]; then
		echo "not ok $i fuzz_$t # $bin not built (make fuzz-bins)"
		failed=1
		continue
	fi
	scratch=$(mktemp -d /tmp/qpod-fuzz-corpus.XXXXXX)
	log=$(mktemp /tmp/qpod-fuzz-log.XXXXXX)
	if "$bin" -max_total_time="$secs" -max_len="$(max_len "$t")" -timeout=10 -rss_limit_mb=1024 \
		-artifact_prefix="$artifacts/$t-" -print_final_stats=1 "$scratch" "tests/fuzz/corpus/$t" >"$log" 2>&1; then
		runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
		echo "ok $i fuzz_$t ($runs inputs in ${secs}s)"
	else
		echo "not ok $i fuzz_$t"
		tail -n 30 "$log" | sed 's/^/# /'
		failed=1
	fi
	rm -rf "$scratch" "$log"
done
exit $failed
