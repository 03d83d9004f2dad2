#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# test_secure_exec.sh LIB TARGET - issue 14 item 1: with libheapscope in
# /etc/ld.so.preload, a setuid-root program run by `nobody` ignores every
# HEAPSCOPE_* option (secure-execution mode, AT_SECURE), as glibc ignores
# MALLOC_* there: HEAPSCOPE_PROFILE_AT_EXIT aimed at a root-owned directory
# creates no file and a root-owned file keeps its content and mtime, and
# the program's output (stdout, stderr, exit status) is the same as with
# a clean environment.  Controls, so the test can fail: the same program
# without the setuid bit honours the same environment (run as root it
# writes the profile into the root-owned directory and overwrites a file
# there; run as nobody it writes one into nobody's directory), and its
# output shows the options taking effect (period 1, statistics on stderr).
#
# Everything runs in a private mount namespace (unshare -m): /etc is a
# tmpfs copy of the host's with ld.so.preload added, the programs sit on
# a tmpfs of their own (mounted without nosuid, checked with findmnt), so
# the host's /etc and file systems are never touched (checked at the end).
# TARGET: tests/programs/secure_target.c.  Exit 77 = skip (not root, no
# unshare/setpriv, setuid not effective here), a failure when CI=true.
set -u

skip() {
	echo "SKIP: $*"
	if [ "${CI:-}" = "true" ]; then exit 1; fi
	exit 77
}

# ---- inside the namespace: $0 --inside LIB TARGET WORK ----
if [ "${1:-}" = "--inside" ]; then
	LIB=$2 TARGET=$3 work=$4
	failed=0
	fail() { echo "FAIL: $*"; failed=1; }
	mount -t tmpfs -o mode=755 hs-etc "$work/etc" || exit 70
	cp -a /etc/. "$work/etc/" || exit 70
	mount -t tmpfs -o mode=755 hs-bin "$work/bin" || exit 70
	case ",$(findmnt -no OPTIONS "$work/bin")," in
	*,nosuid,*) echo "SKIP: $work/bin mounted nosuid"; exit 77 ;;
	esac
	bin=$work/bin
	install -m 0755 "$LIB" "$bin/libheapscope.so"
	install -m 0755 "$TARGET" "$bin/plain"
	install -m 4755 -o root -g root "$TARGET" "$bin/suid"
	echo "$bin/libheapscope.so" >"$work/etc/ld.so.preload"
	mount --bind "$work/etc" /etc || exit 70

	rootdir=$work/rootdir nobodydir=$work/nobodydir
	mkdir -m 0755 "$rootdir" && mkdir -m 0755 "$nobodydir"
	chown 65534:65534 "$nobodydir"
	printf 'precious root data\n' >"$rootdir/precious"
	touch -d '2020-01-02 03:04:05' "$rootdir/precious"
	cp -a "$rootdir/precious" "$rootdir/control"
	state() { # what must not change: names, sizes, mtimes, contents
		(cd "$rootdir" && ls -ld --time-style=full-iso . &&
			ls -lA --time-style=full-iso && sha256sum -- *)
	}
	state >"$work/state.before"

	hostile() { # PROFILE: every HEAPSCOPE_* option, set away from its default
		echo "HEAPSCOPE_PROFILE_AT_EXIT=$1" HEAPSCOPE_SAMPLE_RATE=1 \
			HEAPSCOPE_SAMPLE_SEED=7 HEAPSCOPE_VERBOSE=2 \
			HEAPSCOPE_RELEASE_RATE=0 HEAPSCOPE_SAMPLED_CACHE=0 \
			HEAPSCOPE_HUGEPAGE_AFTER=0 \
			HEAPSCOPE_PROXY_MAX=0 HEAPSCOPE_REGION_BLOCK_MAX=0
	}
	run() { # NAME USER PROGRAM [VAR=VALUE...]: NAME.out, .err, .rc
		local name=$1 user=$2 prog=$3
		shift 3
		if [ "$user" = nobody ]; then
			setpriv --reuid=65534 --regid=65534 --clear-groups \
				env -i PATH=/usr/bin:/bin "$@" "$prog" \
				>"$work/$name.out" 2>"$work/$name.err"
		else
			env -i PATH=/usr/bin:/bin "$@" "$prog" \
				>"$work/$name.out" 2>"$work/$name.err"
		fi
		echo $? >"$work/$name.rc"
	}
	same() { # A B: the same stdout, stderr and exit status
		for x in out err rc; do
			cmp -s "$work/$1.$x" "$work/$2.$x" ||
				fail "$2.$x differs from $1.$x: $(head -c 300 "$work/$2.$x")"
		done
	}

	# the clean run: the library is loaded, the program is privileged
	run clean nobody "$bin/suid"
	cat "$work/clean.out"
	grep -q '^heapscope=1 ' "$work/clean.out" ||
		fail "libheapscope not loaded from /etc/ld.so.preload: $(cat "$work/clean.out" "$work/clean.err")"
	grep -q ' secure=1 uid=65534 euid=0 ' "$work/clean.out" ||
		{ echo "SKIP: setuid not effective here (no_new_privs?)"; exit 77; }
	grep -q ' period=2097152 ' "$work/clean.out" || fail "default period expected"
	[ -s "$work/clean.err" ] && fail "stderr not empty: $(head -3 "$work/clean.err")"

	# hostile environments: a new file, an existing one, pprof
	for t in new:new precious:precious pb:new.pb.gz; do
		# shellcheck disable=SC2046 # word splitting of hostile's output
		run "hostile_${t%%:*}" nobody "$bin/suid" $(hostile "$rootdir/${t#*:}")
		same clean "hostile_${t%%:*}"
	done
	state >"$work/state.after"
	if cmp -s "$work/state.before" "$work/state.after"; then
		echo "ok: setuid as nobody: no file created or changed, output unchanged"
	else
		fail "the root-owned directory changed: $(diff "$work/state.before" "$work/state.after")"
	fi

	# controls: the same program without the setuid bit takes the options
	run ctl_root root "$bin/plain" $(hostile "$rootdir/new")
	[ -s "$rootdir/new" ] || fail "control: root run wrote no $rootdir/new"
	run ctl_root_existing root "$bin/plain" $(hostile "$rootdir/control")
	grep -q 'precious' "$rootdir/control" &&
		fail "control: root run did not overwrite $rootdir/control"
	grep -q ' period=1 secure=0 uid=0 euid=0 ' "$work/ctl_root.out" ||
		fail "control: root run: $(cat "$work/ctl_root.out")"
	run ctl_nobody nobody "$bin/plain" $(hostile "$nobodydir/heap")
	[ -s "$nobodydir/heap" ] || fail "control: nobody run wrote no profile"
	[ "$(stat -c %u "$nobodydir/heap" 2>/dev/null)" = 65534 ] ||
		fail "control: the profile is not nobody's"
	grep -q ' period=1 secure=0 uid=65534 euid=65534 ' "$work/ctl_nobody.out" ||
		fail "control: nobody run: $(cat "$work/ctl_nobody.out")"
	grep -q '^heapscope: ' "$work/ctl_nobody.err" ||
		fail "control: HEAPSCOPE_VERBOSE=2 printed no statistics"
	[ "$failed" = 0 ] && echo "ok: controls: without setuid every option is honoured"
	exit "$failed"
fi

# ---- outside: set up, enter the namespace, check the host ----
LIB=$1 TARGET=$2
[ "$(id -u)" -eq 0 ] || skip "needs root (unshare -m, mount, setuid)"
for c in unshare setpriv findmnt install; do
	command -v "$c" >/dev/null || skip "$c missing (util-linux, coreutils)"
done
host_state() { ls -la --time-style=full-iso /etc/ld.so.preload 2>&1; cat /etc/ld.so.preload 2>&1; }
before=$(host_state)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
mkdir "$work/etc" "$work/bin"
unshare -m --propagation private "$0" --inside "$LIB" "$TARGET" "$work"
rc=$?
[ "$(host_state)" = "$before" ] || { echo "FAIL: the host's /etc/ld.so.preload changed"; rc=1; }
findmnt -n "$work/bin" >/dev/null && { echo "FAIL: a mount leaked out of the namespace"; rc=1; }
[ $rc = 77 ] && skip "see above"
[ $rc = 70 ] && { echo "FAIL: cannot set up the mount namespace"; rc=1; }
exit $rc
