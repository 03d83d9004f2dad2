#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The allocator's layers (allocator/README.md): every #include "..." of an
# allocator file names a header its layer may use.  Dependencies go one
# way, base <- region <- sampling <- api and base <- core <- api; core and
# the sampling side (sampling/, region/) meet only in allocator/sampling.h
# (the core's view of sampling) and allocator/core/core.h (the sampling
# side's view of the core).  Prints each include that breaks the rule and
# exits 1 if there is one.
# usage: check_layers.sh ALLOCATOR_DIR
set -euo pipefail
dir=${1:?usage: check_layers.sh ALLOCATOR_DIR}
cd "$dir"
bad=0
allowed() { # layer header -> 0 if allowed
	local layer=$1 h=$2
	case $layer:$h in
	base:base/* | base:heapscope/abi.h) return 0 ;;
	top:base/*) return 0 ;;
	core:base/* | core:core/* | core:sampling.h) return 0 ;;
	region:base/* | region:region/* | region:sampling.h) return 0 ;;
	sampling:base/* | sampling:region/* | sampling:sampling/* | \
		sampling:sampling.h | sampling:core/core.h | sampling:heapscope/*) return 0 ;;
	api:*) return 0 ;;
	esac
	return 1
}
n=0
while IFS= read -r f; do
	case $f in
	./sampling.h) layer=top ;;
	./*/*) layer=${f#./}; layer=${layer%%/*} ;;
	*) continue ;;
	esac
	n=$((n + 1))
	while IFS= read -r h; do
		if ! allowed "$layer" "$h"; then
			echo "check_layers: $f ($layer) includes \"$h\"" >&2
			bad=1
		fi
	done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done < <(find . -name '*.[ch]' | sort)
[ "$n" -gt 0 ] || { echo "check_layers: no sources under $dir" >&2; exit 1; }
[ "$bad" = 0 ] && echo "check_layers: $n files, every include within its layer"
exit $bad
