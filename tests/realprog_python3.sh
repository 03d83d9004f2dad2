#!/bin/sh
# SPDX-License-Identifier: MIT
# realprog_python3.sh baseline DIR MODULE...
# realprog_python3.sh compare DIR LIB MODULE...
# Issue 7 item 4: Debian's /usr/bin/python3 (PYTHONMALLOC=malloc, so every
# object goes through malloc) runs modules of CPython's own regression
# suite (package libpython3.11-testsuite) with `python3 -m test -j1` (one
# worker process per module, so a crash is one module's result).
#  baseline: under glibc; writes DIR/python3_glibc.modules (module result)
#            and DIR/python3_glibc.cases ("module case outcome", outcome
#            ok/skipped/failure/error, from --junit-xml).
#  compare:  the same MODULEs with LIB preloaded (HEAPSCOPE_SAMPLE_RATE from
#            the caller's environment); fails unless every module has the
#            same result as under glibc, every test case the same outcome,
#            and no "heapscope:" report was printed.
# Exit 77 = skip (python3 or the test suite missing), a failure when CI=true.
set -u
mode=$1 dir=$2
shift 2
lib=""
if [ "$mode" = compare ]; then lib=$(realpath "$1"); shift; fi
PY=/usr/bin/python3
skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ -x $PY ] || skip "no $PY"
$PY -c 'import test.test_dict' 2>/dev/null ||
	skip "CPython's test suite missing (apt-get install libpython3.11-testsuite; scripts/bootstrap.sh)"
work=$(mktemp -d /tmp/hs-realprog-py.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM
mkdir -p "$dir"

# run OUT LIB MODULE...: regrtest over the modules (LIB "" = glibc);
# OUT.log, OUT.xml
run() {
	_out=$1 _lib=$2
	shift 2
	mkdir -p "$work/tmp"
	(
		cd "$work/tmp" || exit 1
		export TMPDIR="$work/tmp" PYTHONMALLOC=malloc PYTHONDONTWRITEBYTECODE=1
		if [ -n "$_lib" ]; then export LD_PRELOAD="$_lib"; fi
		exec $PY -m test -j1 --timeout 1200 --junit-xml "$_out.xml" "$@"
	) >"$_out.log" 2>&1
}
# summarize OUT: OUT.modules ("test_x passed"), OUT.cases ("id outcome")
summarize() {
	env -u LD_PRELOAD $PY - "$1" <<'EOF'
import re, sys, xml.etree.ElementTree as ET
out = sys.argv[1]
mods, order = {}, []
for line in open(out + ".log", errors="replace"):
    m = re.search(r"\] (test_\w+) (passed|failed|skipped|resource denied|"
                  r"crashed|timed out|env changed|uncaught exception|"
                  r"interrupted)", line)
    if m:
        mods[m.group(1)] = m.group(2)
        order.append(m.group(1))
cases = {}
try:
    root = ET.parse(out + ".xml").getroot()
    # one testsuite per module; doctest cases ("collections.Counter") are
    # named without it, so the suite's module is the one its other cases
    # name ("test.test_collections.TestCounter.test_basics")
    # (test_datetime's cases are all test.datetimetester.*: then the
    # suite's place in the run, which is the order of the log's results
    # with -j1, checked against every suite that names its module)
    suites = list(root.iter("testsuite"))
    names = []
    for suite in suites:
        mod = "?"
        for tc in suite.iter("testcase"):
            m = re.match(r"test\.(test_\w+)\.", tc.get("name", ""))
            if m:
                mod = m.group(1)
                break
        names.append(mod)
    if len(order) == len(suites) and all(
            n in ("?", o) for n, o in zip(names, order)):
        names = order
    for suite, mod in zip(suites, names):
        for tc in suite.iter("testcase"):
            outcome = "ok"
            for kind in ("failure", "error", "skipped"):
                if tc.find(kind) is not None:
                    outcome = kind
            cases[mod + " " + tc.get("name")] = outcome
except (OSError, ET.ParseError) as e:
    print("junit xml unreadable:", e, file=sys.stderr)
with open(out + ".modules", "w") as f:
    for k in sorted(mods):
        f.write(f"{k} {mods[k]}\n")
with open(out + ".cases", "w") as f:
    for k in sorted(cases):
        f.write(f"{k} {cases[k]}\n")
EOF
}

# summarize_modules PREFIX MODULE...: summarize PREFIX.log, then list
# every module missing from it as "missing" in PREFIX.modules (sorted).
summarize_modules() {
	local pfx=$1
	shift
	summarize "$pfx"
	for m in "$@"; do
		grep -q "^$m " "$pfx.modules" || echo "$m missing" >>"$pfx.modules"
	done
	sort -o "$pfx.modules" "$pfx.modules"
}

case $mode in
baseline)
	run "$work/glibc" "" "$@"
	# The module list is the argument list: a module missing from the log
	# is reported as "missing".
	summarize_modules "$work/glibc" "$@"
	cp "$work/glibc.modules" "$dir/python3_glibc.modules"
	cp "$work/glibc.cases" "$dir/python3_glibc.cases"
	grep -v ' passed$' "$dir/python3_glibc.modules" && {
		echo "modules that do not pass under plain glibc here (choose others):"
		tail -30 "$work/glibc.log"
		exit 1
	}
	echo "glibc baseline: $(wc -l <"$dir/python3_glibc.modules") modules passed," \
		"$(wc -l <"$dir/python3_glibc.cases") test cases" \
		"($(grep -c ' ok$' "$dir/python3_glibc.cases") ok," \
		"$(grep -c ' skipped$' "$dir/python3_glibc.cases") skipped)"
	;;
compare)
	[ -s "$dir/python3_glibc.modules" ] || { echo "no baseline in $dir"; exit 1; }
	run "$work/pre" "$lib" "$@"
	summarize_modules "$work/pre" "$@"
	failed=0
	# the baseline may hold more modules than this run (a subset at period 1)
	for m in "$@"; do grep "^$m " "$dir/python3_glibc.modules"; done |
		sort >"$work/glibc.modules"
	for m in "$@"; do grep "^$m " "$dir/python3_glibc.cases"; done |
		sort >"$work/glibc.cases"
	sort -o "$work/pre.cases" "$work/pre.cases"
	if ! cmp -s "$work/glibc.modules" "$work/pre.modules"; then
		echo "FAIL: module results differ (glibc < > preloaded):"
		diff "$work/glibc.modules" "$work/pre.modules"
		failed=1
	fi
	if ! cmp -s "$work/glibc.cases" "$work/pre.cases"; then
		echo "FAIL: test case outcomes differ (glibc < > preloaded):"
		diff "$work/glibc.cases" "$work/pre.cases" | head -40
		failed=1
	fi
	if grep -q '^heapscope:' "$work/pre.log"; then
		echo "FAIL: heapscope reports:"
		grep '^heapscope:' "$work/pre.log" | head
		failed=1
	fi
	if [ $failed -ne 0 ]; then
		echo "--- log tail"; tail -40 "$work/pre.log"
		exit 1
	fi
	echo "HEAPSCOPE_SAMPLE_RATE=${HEAPSCOPE_SAMPLE_RATE-unset (default)}:" \
		"$(wc -l <"$work/pre.modules") modules, $(wc -l <"$work/pre.cases")" \
		"test cases, same results as glibc"
	;;
*) echo "usage: $0 baseline|compare DIR [LIB] MODULE..."; exit 2 ;;
esac
exit 0
