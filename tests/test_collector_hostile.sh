#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_collector_hostile.sh HEAPSCOPE HOSTILE_TARGET FAKE_TARGET - the
# collector as a root tool facing untrusted targets and hostile files
# (issue 7 items 7-9):
#  - a non-root user gets a clear refusal;
#  - a target whose registry is garbage (hostile_target MODE): the
#    collector ends in bounded time (timeout 60 s) and memory (max RSS
#    < 512 MiB), without a crash, with an error or a profile;
#  - -o: an existing file or a symlink is not replaced without --force,
#    and a symlink is never followed;
#  - a full (tmpfs 16k, filled) or read-only output disk: a clear error
#    and no file (or temporary file) left behind.
# Exit 77 = skip (not root / no BPF), a failure when CI=true.
set -u
HEAPSCOPE=$1 HOSTILE=$2 FAKE=$3

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root (BPF, setpriv, mount)"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF"

work=$(mktemp -d)
tpid="" mnt=""
cleanup() {
	[ -n "$tpid" ] && kill "$tpid" 2>/dev/null
	wait 2>/dev/null
	[ -n "$mnt" ] && umount "$mnt" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT
failed=0
fail() { echo "FAIL: $*"; failed=1; }

start() { # program args...: starts it, waits for "ready"
	# the previous run's "ready" must not count (the shell truncates
	# t.out in the child, after this function may have read it)
	rm -f "$work/t.out"
	"$@" >"$work/t.out" 2>"$work/t.err" &
	tpid=$!
	for _ in $(seq 1 100); do
		grep -q '^ready' "$work/t.out" 2>/dev/null && return 0
		sleep 0.05
	done
	fail "target $* did not start"
}
stop() { [ -n "$tpid" ] && kill "$tpid" 2>/dev/null; wait "$tpid" 2>/dev/null; tpid=""; }

# 1. privilege
if command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups \
		"$HEAPSCOPE" record -p 1 -d 1 >/dev/null 2>"$work/np.err"
	rc=$?
	if [ $rc -eq 0 ] || ! grep -qi "root" "$work/np.err"; then
		fail "non-root: exit $rc, $(cat "$work/np.err")"
	else
		echo "ok: non-root refused (exit $rc): $(head -1 "$work/np.err")"
	fi
fi

# 2. hostile registries
for mode in capacity unmapped cycle depth writer random; do
	start "$HOSTILE" "$mode"
	t0=$(date +%s%N)
	timeout 60 /usr/bin/time -f "maxrss_kib %M" "$HEAPSCOPE" record \
		-p "$tpid" -d 2 --lib libfakeheapscope -o "$work/$mode.folded" \
		>/dev/null 2>"$work/$mode.err"
	rc=$?
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	stop
	if grep -q "BPF not available" "$work/$mode.err"; then
		skip "$(head -1 "$work/$mode.err")"
	fi
	rss=$(awk '/maxrss_kib/ { print $2 }' "$work/$mode.err")
	if [ $rc -eq 124 ] || [ $rc -ge 128 ] || grep -q "Command terminated by signal" "$work/$mode.err"; then
		fail "hostile $mode: collector exit $rc after $ms ms"
		cat "$work/$mode.err"
	elif [ "${rss:-0}" -ge $((512 * 1024)) ]; then
		fail "hostile $mode: collector max RSS ${rss} KiB"
	else
		msg=$(grep -v maxrss "$work/$mode.err" | grep -i "registry\|error\|cannot\|invalid" | head -1)
		echo "ok: hostile $mode: exit $rc in $ms ms, max RSS ${rss} KiB, ${msg:-profile $(wc -l <"$work/$mode.folded" 2>/dev/null || echo 0) lines}"
	fi
done

# 3. output files: no clobbering without --force, no symlink following
rec() { # out-file extra args: one short recording of the fake target
	start "$FAKE" 1500
	"$HEAPSCOPE" record -p "$tpid" -d 1 --lib libfakeheapscope -o "$@" \
		>/dev/null 2>"$work/rec.err"
	local rc=$?
	stop
	return $rc
}
echo precious >"$work/exists"
if rec "$work/exists"; then
	fail "existing output replaced without --force"
elif ! grep -q "force" "$work/rec.err" || [ "$(cat "$work/exists")" != precious ]; then
	fail "existing output: $(cat "$work/rec.err")"
else
	echo "ok: existing file kept: $(grep force "$work/rec.err")"
fi
echo secret >"$work/victim"
ln -s "$work/victim" "$work/link"
if rec "$work/link"; then
	fail "symlink output accepted without --force"
fi
[ "$(cat "$work/victim")" = secret ] || fail "symlink followed: victim changed"
if rec "$work/link" --force; then
	[ "$(cat "$work/victim")" = secret ] || fail "--force followed the symlink"
	[ -L "$work/link" ] && fail "--force: the symlink is still there"
	echo "ok: symlink not followed; --force replaced the link itself"
else
	fail "--force: $(cat "$work/rec.err")"
fi
# a FIFO (as /dev/null would be) is never replaced, even with --force
mkfifo "$work/fifo"
if rec "$work/fifo" --force || [ ! -p "$work/fifo" ]; then
	fail "a FIFO at -o was replaced"
else
	echo "ok: non-regular -o refused: $(head -1 "$work/rec.err")"
fi
ls "$work"/*.XXXXXX* "$work"/exists.* 2>/dev/null && fail "temporary files left"

# 4. full and read-only output disks
mnt=$work/mnt
mkdir -p "$mnt"
if mount -t tmpfs -o size=16k tmpfs "$mnt" 2>/dev/null; then
	dd if=/dev/zero of="$mnt/filler" bs=4k 2>/dev/null
	if rec "$mnt/heap.folded"; then
		fail "full disk: record succeeded"
	else
		left=$(ls "$mnt" | grep -v '^filler$')
		[ -z "$left" ] || fail "full disk: left behind: $left"
		echo "ok: full disk: $(head -1 "$work/rec.err")"
	fi
	umount "$mnt"
	mount -t tmpfs -o size=16k,ro tmpfs "$mnt"
	if rec "$mnt/heap.folded"; then
		fail "read-only disk: record succeeded"
	else
		[ -z "$(ls "$mnt")" ] || fail "read-only disk: files left"
		echo "ok: read-only disk: $(head -1 "$work/rec.err")"
	fi
	umount "$mnt"
	mnt=""
else
	echo "note: cannot mount tmpfs here; disk tests not run"
fi
exit $failed
