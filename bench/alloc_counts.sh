#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Instructions of one command under one allocator, counted by callgrind
# (counts, not time: the machine's load does not move them):
#   total      the whole process (Ir)
#   allocator  the self cost of every function in LIB's object (its libc
#              calls, e.g. the page heap's mutex, count in the total only)
#   calls      calls to malloc, free, calloc, realloc and operator
#              new/delete (for programs that run for a fixed time, such as
#              larson and xmalloc-test: divide by these)
#
# usage: bench/alloc_counts.sh LIB.so [--keep FILE] -- CMD [ARGS...]
#   LIB.so       preloaded library (heapscope's, or a peer's)
#   --keep FILE  keep callgrind's output there (for callgrind_annotate)
# Prints one line: total=N allocator=N calls=N (malloc=N free=N ...).
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 LIB.so [--keep FILE] -- CMD [ARGS...]" >&2; exit 2; }
LIB=$(readlink -f "$1")
shift
OUT=
if [ "$1" = --keep ]; then
	OUT=$2
	shift 2
fi
[ "$1" = -- ] || { echo "$0: expected -- before the command" >&2; exit 2; }
shift
[ -r "$LIB" ] || { echo "$0: cannot read $LIB" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cg=${OUT:-$tmp/cg.out}
LD_PRELOAD=$LIB valgrind --tool=callgrind --callgrind-out-file="$cg" "$@" \
	>/dev/null 2>"$tmp/err" || { echo "$0: the command failed under callgrind:" >&2; tail -5 "$tmp/err" >&2; exit 1; }
/usr/bin/python3 - "$cg" "$LIB" <<'EOF'
import os, re, sys
path, lib = sys.argv[1], os.path.realpath(sys.argv[2])
names = {}  # compressed names: "(id) name" the first time, "(id)" after

def name(kind, v):
    m = re.match(r'\((\d+)\)(?: (.*))?$', v)
    if not m:
        return v
    if m.group(2) is not None:
        names[kind, m.group(1)] = m.group(2)
    return names.get((kind, m.group(1)), '')

call = re.compile(r'^(malloc|free|calloc|realloc|operator new.*|operator delete.*)$')
total = own = 0
calls = {}
ob = cfn = ''
skip = False
for line in open(path, errors='replace'):
    line = line.rstrip('\n')
    if line.startswith('summary:') or line.startswith('totals:'):
        total = int(line.split()[1])
    elif line.startswith('ob='):
        ob = os.path.realpath(name('ob', line[3:])) if '/' in line else name('ob', line[3:])
    elif line.startswith('cob='):
        name('ob', line[4:])
    elif line.startswith('cfn='):
        cfn = name('fn', line[4:])
    elif line.startswith('fn='):
        name('fn', line[3:])
    elif line.startswith('calls='):
        skip = True  # the next cost line is the call's inclusive cost
        if call.match(cfn):
            calls[cfn] = calls.get(cfn, 0) + int(line[6:].split()[0])
    elif line and line[0] in '0123456789+-*':
        if skip:
            skip = False
        elif ob == lib:
            own += int(line.split()[-1])
print('total=%d allocator=%d calls=%d (%s)' % (total, own, sum(calls.values()),
      ' '.join('%s=%d' % (k.replace(' ', ''), v) for k, v in sorted(calls.items()))))
EOF
