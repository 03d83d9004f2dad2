#!/bin/sh
# SPDX-License-Identifier: MIT
# What sampling costs in memory: bench/sampling_memory.c for every size mix,
# preloaded with libheapscope.so, with sampling off and at the default
# period (HEAPSCOPE_SAMPLE_SEED fixed), and the RSS difference.
#
#   bench/sampling_memory.sh LIBHEAPSCOPE.so [HEAP_MIB] [SEED] [ENV...]
#
# CHURN=N in the environment: N rounds of freeing every other object and
# refilling (sampling_memory.c) before measuring; default 0 (fresh heap).
# ENV: extra VAR=VALUE for the sampled runs (e.g. HEAPSCOPE_PROXY_MAX=256K).
# Prints the program's line per run and a summary: costs as % of the live
# heap's requested bytes; rss_diff = RSS(default) - RSS(off).
set -eu
lib=$(readlink -f "$1")
heap=${2:-1024}
seed=${3:-1}
shift $(($# < 3 ? $# : 3))
here=$(cd "$(dirname "$0")" && pwd)
bin=/tmp/sampling_memory.$$
cc -O2 -Wall -Wextra -Werror -fno-builtin-malloc -fno-builtin-free \
	-I"$here/../include" "$here/sampling_memory.c" -o "$bin" -lm
trap 'rm -f "$bin"' EXIT
val() { echo "$1" | tr ' ' '\n' | sed -n "s/^$2=//p"; }
printf '%-7s %8s %7s %7s %7s %7s %7s %9s %9s %9s\n' mix samples proxy% \
	round% record% total% resv% cached_MB rss_diff% rss_diff_MB
for mix in small wide python; do
	off=$(env HEAPSCOPE_SAMPLE_RATE=0 LD_PRELOAD="$lib" "$bin" $mix $heap 7 \
		"${CHURN:-0}")
	on=$(env HEAPSCOPE_SAMPLE_SEED=$seed "$@" LD_PRELOAD="$lib" "$bin" \
		$mix $heap 7 "${CHURN:-0}")
	echo "# off: $off" >&2
	echo "# on:  $on" >&2
	req=$(val "$on" requested)
	awk -v mix=$mix -v n="$(val "$on" samples)" -v req="$req" \
		-v px="$(val "$on" proxy)" -v rr="$(val "$on" rounding_res)" \
		-v rc="$(val "$on" record)" -v ca="$(val "$on" cached)" \
		-v tot="$(val "$on" cost_pct)" -v rv="$(val "$on" cost_reserved_pct)" \
		-v r1="$(val "$on" rss)" -v r0="$(val "$off" rss)" 'BEGIN {
		printf "%-7s %8d %7.3f %7.3f %7.3f %7.3f %7.3f %9.1f %9.3f %9.1f\n",
			mix, n, 100*px/req, 100*rr/req, 100*rc/req, tot, rv,
			ca/1048576, 100*(r1-r0)/req, (r1-r0)/1048576 }'
done
