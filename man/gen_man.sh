#!/bin/sh
# SPDX-License-Identifier: MIT
# gen_man.sh HEAPSCOPE ENV_DOC OUTDIR VERSION DATE DESCRIPTION PAGE...
# Writes OUTDIR/PAGE (and OUTDIR/PAGE.gz, gzip -9n) for each PAGE, each
# rendered by help2roff.awk from the help it documents:
#   heapscope.1            `HEAPSCOPE --help` (DESCRIPTION: its NAME line)
#   heapscope-CMD.1        `HEAPSCOPE CMD --help`, NAME line from the
#                          command list of `HEAPSCOPE --help`
#   libheapscope.7         the output of ENV_DOC (allocator/base/option_list.h)
# Fails when the commands of `HEAPSCOPE --help` are not the heapscope-CMD.1
# pages asked for (cmake/man.cmake's list), so a new command gets a page.
set -eu
bin=$1 envdoc=$2 out=$3 version=$4 date=$5 desc=$6
shift 6
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"

help=$("$bin" --help)
# "Commands:" section: "  NAME  summary" lines up to the next blank line
cmds=$(printf '%s\n' "$help" | awk '/^Commands:$/ {on = 1; next} on && /^$/ {exit} on {print $1}')
want=
for page in "$@"; do
	case $page in heapscope-*.1) c=${page#heapscope-}; want="$want ${c%.1}" ;; esac
done
[ "$(echo $cmds | tr ' ' '\n' | sort)" = "$(echo $want | tr ' ' '\n' | sort)" ] || {
	echo "gen_man.sh: heapscope --help lists commands '$(echo $cmds)', the man pages are for '$(echo $want)'; update HS_MAN_PAGES in cmake/man.cmake" >&2
	exit 1
}
seealso=$(for p in "$@"; do n=${p%.*}; echo "$n(${p##*.})"; done)

render() { # PAGE SECTION SUMMARY MANUAL < help
	refs=$(echo "$seealso" | grep -vx "$(echo "$1" | sed 's/[.]\([0-9]\)$/(\1)/')" | tr '\n' ' ')
	awk -v name="${1%.*}" -v section="$2" -v summary="$3" \
		-v source="heapscope $version" -v date="$date" -v manual="$4" \
		-v seealso="$refs" -f "$here/help2roff.awk" >"$out/$1.tmp"
	mv "$out/$1.tmp" "$out/$1"
	gzip -9n -c "$out/$1" >"$out/$1.gz"
}

for page in "$@"; do
	case $page in
	heapscope.1)
		printf '%s\n' "$help" | render "$page" 1 "$desc" "User Commands" ;;
	heapscope-*.1)
		c=${page#heapscope-}; c=${c%.1}
		summary=$(printf '%s\n' "$help" | awk -v c="$c" '/^Commands:$/ {on = 1; next} on && $1 == c {$1 = ""; sub(/^ +/, ""); print; exit}')
		"$bin" "$c" --help | render "$page" 1 "$summary" "User Commands" ;;
	libheapscope.7)
		"$envdoc" | render "$page" 7 "the heapscope malloc library and its environment options" "Miscellaneous Information Manual" ;;
	*)
		echo "gen_man.sh: no source for $page" >&2; exit 1 ;;
	esac
done
