#!/bin/sh
# SPDX-License-Identifier: MIT
# realprog_sqlite3.sh LIB SQLITE3 SCRIPT [ORDERS] - issue 7 item 4: the sqlite3 CLI
# runs SCRIPT (tests/programs/realprog_heavy.sql: 300,000 rows, indexes,
# joins, window functions, updates, deletes, a table rebuild, VACUUM) on a
# fresh file database, once under glibc and once with LIB preloaded
# (HEAPSCOPE_SAMPLE_RATE from the caller's environment).  Fails unless both
# exit 0 with byte-identical output, PRAGMA integrity_check says "ok", and
# the two database files are byte-identical.  ORDERS (default 300000)
# scales the orders table (fewer at period 1, where every allocation is
# sampled and unwound).
set -u
lib=$(realpath "$1") sqlite=$2 script=$3 orders=${4:-300000}
work=$(mktemp -d /tmp/hs-realprog-sqlite.XXXXXX)
trap 'rm -rf "$work"' EXIT
trap 'exit 1' HUP INT TERM
sed "s/i < 300000)/i < $orders)/" "$script" >"$work/script.sql"
script=$work/script.sql
"$sqlite" -bail "$work/plain.db" <"$script" >"$work/plain" 2>"$work/plain.err"
rc_plain=$?
LD_PRELOAD=$lib "$sqlite" -bail "$work/pre.db" <"$script" >"$work/pre" 2>"$work/pre.err"
rc_pre=$?
failed=0
if [ $rc_plain -ne 0 ] || [ $rc_pre -ne 0 ]; then
	echo "FAIL: exit status plain $rc_plain, preloaded $rc_pre"
	cat "$work/plain.err" "$work/pre.err"
	exit 1
fi
if ! cmp -s "$work/plain" "$work/pre"; then
	echo "FAIL: output differs with LD_PRELOAD=$lib"
	diff "$work/plain" "$work/pre" | head -20
	failed=1
fi
if [ "$(grep -cx ok "$work/pre")" -ne 1 ]; then
	echo "FAIL: PRAGMA integrity_check is not ok"
	tail -5 "$work/pre"
	failed=1
fi
if ! cmp -s "$work/plain.db" "$work/pre.db"; then
	echo "FAIL: the database files differ"
	failed=1
fi
if [ -s "$work/pre.err" ]; then
	echo "FAIL: messages on stderr:"; head "$work/pre.err"
	failed=1
fi
[ $failed -eq 0 ] || exit 1
echo "HEAPSCOPE_SAMPLE_RATE=${HEAPSCOPE_SAMPLE_RATE-unset (default)}:" \
	"identical output ($(wc -l <"$work/pre") lines: $(grep -E '^(rows|after)' "$work/pre" | tr '\n' ' '))," \
	"integrity_check ok, identical $(wc -c <"$work/pre.db")-byte database"
