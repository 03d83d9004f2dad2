#!/bin/sh
# SPDX-License-Identifier: MIT
# test_preload_shim.sh LIB SHIM ORDER - runs a few programs with LIB (the
# allocator) and SHIM (tests/programs/shim_mmap.c) preloaded together,
# ORDER "lib-first" or "shim-first"; the caller sets HEAPSCOPE_SAMPLE_RATE.
# Each must exit 0 with the same stdout as without preload (ctest's
# TIMEOUT catches a hang).  Then the shim frees a block of its private
# mmap allocator through free(): a foreign pointer, which the allocator
# must report once and survive.
set -u
lib=$1 shim=$2 order=$3
case $order in
lib-first) pre="$lib:$shim" ;;
shim-first) pre="$shim:$lib" ;;
*) echo "bad order $order"; exit 2 ;;
esac
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail=0
run() {
	"$@" >"$out/plain" 2>/dev/null
	rc0=$?
	SHIM_REPORT=1 LD_PRELOAD=$pre "$@" >"$out/pre" 2>"$out/err"
	rc=$?
	if [ $rc -ne $rc0 ] || ! cmp -s "$out/plain" "$out/pre"; then
		echo "FAIL ($order): $* exit $rc (plain $rc0)"
		head -20 "$out/err"
		fail=1
	elif ! grep -q "shim: loaded" "$out/err"; then
		echo "FAIL ($order): shim not active in $*"
		fail=1
	else
		echo "ok ($order): $* - $(grep 'shim:' "$out/err" | tail -1)"
	fi
}
run ls -la /usr/lib
run sh -c 'for i in 1 2 3; do echo $i | sort -r | tr 1 x; done; cat /etc/os-release | wc -c'
if command -v python3 >/dev/null; then
	run python3 -c '
import threading, ctypes, json
def w(n):
    d = [bytes(i % 700) for i in range(5000)]
    return len(d)
ts = [threading.Thread(target=w, args=(i,)) for i in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
ctypes.CDLL("libm.so.6")
print(json.dumps({"ok": sum(range(1000))}))'
fi
# the foreign block
SHIM_FREE_FOREIGN=1 LD_PRELOAD=$pre /bin/true 2>"$out/err"
rc=$?
n=$(grep -c "not allocated by heapscope" "$out/err")
if [ $rc -ne 0 ] || [ "$n" -ne 1 ]; then
	echo "FAIL ($order): foreign free from the shim: exit $rc, $n reports"
	cat "$out/err"
	fail=1
else
	echo "ok ($order): foreign free reported once: $(cat "$out/err")"
fi
exit $fail
