#!/usr/bin/env bats
# tests/cli/usage.bats — qpod as a user first meets it: `qpod version` and
# `qpod help [COMMAND]` beside --version/--help, every command's --help
# (tests/unit/test_cli_help.c checks each against the options it parses),
# settings refused where they would have no effect, the man page generated
# from the --help texts, and the bash completion.

load helpers

commands() { "$QPOD" --help | awk '/^Commands:/ {f = 1; next} /^$/ {f = 0} f {print $1}'; }

@test "qpod version and qpod help are --version and --help" {
	run --separate-stderr "$QPOD" version
	assert_status 0
	assert_match "${lines[0]}" '^qpod version [0-9]'
	assert_eq "$output" "$("$QPOD" --version)" "qpod version"
	run --separate-stderr "$QPOD" help
	assert_status 0
	assert_eq "$output" "$("$QPOD" --help)" "qpod help"
	run --separate-stderr "$QPOD" help nosuch
	assert_qpod_error
	assert_contains "$stderr" 'unknown command "nosuch"'
	run --separate-stderr "$QPOD" version extra
	assert_qpod_error
}

@test "every command's --help is its own, and qpod help COMMAND prints it" {
	local n=0 c
	for c in $(commands); do
		run --separate-stderr "$QPOD" "$c" --help
		assert_status 0
		assert_match "${lines[0]}" "^Usage: qpod $c( |\$)" "$c --help"
		[ "$(wc -l <<<"$output")" -ge 2 ] || flunk "$c --help: only a usage line, no description"
		assert_eq "$("$QPOD" help "$c")" "$output" "qpod help $c"
		n=$((n + 1))
	done
	[ "$n" -ge 20 ] || flunk "only $n commands listed"
}

@test "settings without an effect where given are refused, not ignored" {
	make_bundle "$BUNDLE" '.process.args = ["true"]'
	run --separate-stderr qp create --detach "$ID" --bundle "$BUNDLE"
	assert_qpod_error
	assert_contains "$stderr" "--detach belongs to qpod run"
	run --separate-stderr qp create --timeline "$ID" --bundle "$BUNDLE"
	assert_qpod_error
	run --separate-stderr qp run --rm -d "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" "--rm needs a foreground run"
	run --separate-stderr qp run --timeline -d "$ID" --bundle "$BUNDLE"
	assert_qpod_error
	run --separate-stderr qp run --console-socket /tmp/nosuch.sock "$ROOTFS" -- true
	assert_qpod_error
	assert_contains "$stderr" "--console-socket belongs to the OCI form"
	run --separate-stderr qp list --quiet
	assert_status 0
	assert_eq "$output" "" "pods left"
}

@test "qpod(8) is generated from the --help texts: one section per command, renders cleanly" {
	local page=$QPOD_BUILD/qpod.8 text c
	[ -s "$page" ] || flunk "$page not built (make)"
	run groff -man -ww -z "$page"
	assert_status 0
	assert_eq "$output" "" "groff warnings"
	text=$(MANWIDTH=200 man -l "$page" 2>&1)
	assert_contains "$text" "QPOD(8)"
	for c in $(commands); do
		grep -qx "\.SS \"$c\"" "$page" || flunk "no section for $c in qpod.8"
		# every line of the command's help is in the rendered page
		while IFS= read -r line; do
			[ -z "${line// /}" ] && continue
			assert_contains "$text" "$(sed 's/^ *//' <<<"$line")" "qpod.8 section $c"
		done < <("$QPOD" "$c" --help)
	done
}

@test "bash completion: commands, a command's flags, pod IDs from qpod list" {
	make_bundle "$BUNDLE" "$(helper_args sleep 60)"
	qp_detached create "$ID" --bundle "$BUNDLE"
	complete_line() { # WORDS...: COMPREPLY for the last word, one per line
		bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _qpod
			printf "%s\n" "${COMPREPLY[@]}"' _ "$REPO/tools/qpod.bash-completion" "$@"
	}
	assert_eq "$(complete_line "$QPOD" st | sort | tr '\n' ' ')" "start state stats " "qpod st<TAB>"
	assert_eq "$(complete_line "$QPOD" ver)" "version" "qpod ver<TAB>"
	assert_eq "$(complete_line "$QPOD" density --ma)" "--max" "qpod density --ma<TAB>"
	assert_contains "$(complete_line "$QPOD" run --)" "--timeline" "qpod run --<TAB>"
	assert_eq "$(complete_line "$QPOD" --root "$ROOT" kill "${ID:0:${#ID}-1}")" "$ID" "qpod --root R kill ID<TAB>"
	assert_eq "$(complete_line "$QPOD" --root "$ROOT" delete "")" "$ID" "qpod --root R delete <TAB>"
	assert_eq "$(complete_line "$QPOD" help rep)" "replace
report" "qpod help rep<TAB>"
	qp delete --force "$ID"
}

@test "qpod state: the start timeline in ms to the microsecond, not raw doubles" {
	qp_detached run -d --name "$ID" "$ROOTFS" -- sleep 60
	run --separate-stderr qp state "$ID"
	assert_status 0
	assert_contains "$output" '"timeline"'
	assert_match "$output" '"start_total": [0-9]+\.[0-9]{3}[,}
]'
	! sed -n '/"timeline"/,/}/p' <<<"$output" | grep -qE '[0-9]\.[0-9]{4,}' ||
		flunk "raw doubles in the timeline:" "$output"
	qp delete --force "$ID"
}

@test "qpod help's bench line names the scenarios bench --help names" {
	# "Usage: qpod bench start|replace|... [OPTIONS]" against
	# "  bench      measure: start, replace, ... (qpod bench --help)"
	local usage summary
	usage=$("$QPOD" bench --help | sed -n 's/^Usage: qpod bench \([a-z|]*\) .*/\1/p' | tr '|' '\n' | sort)
	summary=$("$QPOD" help | sed -n 's/^  bench  *measure: \([a-z, ]*\) (.*/\1/p' | tr -d ' ' | tr ',' '\n' | sort)
	[ -n "$usage" ] || flunk "no scenarios in bench --help's usage line"
	assert_eq "$summary" "$usage" "qpod help's bench scenarios"
	# each is a scenario bench accepts (an unknown one is refused by name)
	for s in $usage; do
		run --separate-stderr "$QPOD" bench "$s" --format nosuch
		assert_qpod_error
		assert_not_contains "$stderr" "unknown scenario"
	done
}
