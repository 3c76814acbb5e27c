# tools/bench-lib.sh — shared by the tools/bench-*.sh scripts (sourced):
# timing of one command in microseconds, and min/max/avg/median in ms.

now_us() { echo "${EPOCHREALTIME/./}"; }

# time_us CMD...: wall time of CMD in microseconds (its output discarded)
time_us() {
	local s e
	s=$(now_us)
	"$@" >/dev/null
	e=$(now_us)
	echo $((e - s))
}

# stats US...: "min max avg median" in ms
stats() {
	printf '%s\n' "$@" | sort -n | awk '{v[NR]=$1; s+=$1} END {
		m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2;
		printf "%.2f %.2f %.2f %.2f\n", v[1]/1000, v[NR]/1000, s/NR/1000, m/1000 }'
}

host_line() {
	echo "host: $(uname -r), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
}
