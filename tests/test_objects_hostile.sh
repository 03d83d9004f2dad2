#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# The in-process symbol reader (allocator/api/objects.c) against hostile
# files (issue 17, item 5): objects_host dlopens libobjects_victim.so, the
# test renames a corrupted copy of the library over its path (the loaded
# image is intact, the file on disk is not), and the program allocates
# through it at period 1 and exits with HEAPSCOPE_PROFILE_AT_EXIT.  Cases
# (python3, fixed seeds): section header table offset, count and entry
# size out of range, .symtab offset, size, link and entry size wrong, its
# string table oversized or without a NUL, every st_name out of range,
# files truncated or not ELF, a different build id, and 24 runs of 32
# random bytes overwritten after the ELF header.  Each run must exit 0 and
# write a profile holding the library's stack (32 x 4096 bytes); each but
# the random ones must name victim_alloc (exported: dladdr names it
# whatever the file says).  Controls: an intact copy names the static keep_block
# (so the file really is read after the rename); a copy with another
# build id must not (its .symtab is not used).
# usage: test_objects_hostile.sh LIB HOST VICTIM
set -u
export LC_ALL=C # corrupted names are not UTF-8
LIB=$1 HOST=$2 VICTIM=$3
command -v python3 >/dev/null || { echo "SKIP: python3 missing"; [ "${CI:-}" = true ] && exit 1; exit 77; }
work=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$work"' EXIT
fail=0

python3 - "$VICTIM" "$work" <<'EOF'
import os, random, struct, sys
src, out = sys.argv[1], sys.argv[2]
data = bytearray(open(src, 'rb').read())
shoff, = struct.unpack_from('<Q', data, 0x28)
shnum, shstrndx = struct.unpack_from('<HH', data, 0x3c)
def sh(i): return shoff + 64 * i
def field(i, off, fmt): return struct.unpack_from(fmt, data, sh(i) + off)[0]
strsec = field(shstrndx, 24, '<Q')
names = {}
for i in range(shnum):
    n = field(i, 0, '<I')
    end = data.index(0, strsec + n)
    names[data[strsec + n:end].decode()] = i
symtab = names['.symtab']
strtab = field(symtab, 40, '<I')
cases = {}
def case(name, fn):
    d = bytearray(data)
    fn(d)
    cases[name] = d
def put(d, off, fmt, v): struct.pack_into(fmt, d, off, v)
case('control', lambda d: None)
case('shoff_huge', lambda d: put(d, 0x28, '<Q', 1 << 63))
case('shoff_end', lambda d: put(d, 0x28, '<Q', len(d) - 32))
case('shnum_big', lambda d: put(d, 0x3c, '<H', 0xffff))
case('shentsize', lambda d: put(d, 0x3a, '<H', 1))
case('symtab_size', lambda d: put(d, sh(symtab) + 32, '<Q', 1 << 62))
case('symtab_offset', lambda d: put(d, sh(symtab) + 24, '<Q', len(d) - 8))
case('symtab_offset_odd', lambda d: put(d, sh(symtab) + 24, '<Q', field(symtab, 24, '<Q') + 3))
case('symtab_link', lambda d: put(d, sh(symtab) + 40, '<I', 0xffffffff))
case('symtab_link_self', lambda d: put(d, sh(symtab) + 40, '<I', symtab))
case('symtab_entsize', lambda d: put(d, sh(symtab) + 56, '<Q', 7))
case('strtab_size', lambda d: put(d, sh(strtab) + 32, '<Q', 1 << 62))
def no_nul(d):
    o, z = field(strtab, 24, '<Q'), field(strtab, 32, '<Q')
    d[o:o + z] = b'A' * z
case('strtab_no_nul', no_nul)
def st_names(d):
    o, z = field(symtab, 24, '<Q'), field(symtab, 32, '<Q')
    for k in range(o, o + z, 24):
        put(d, k, '<I', 0xffffffff)
case('st_name_huge', st_names)
def other_id(d):
    i = names['.note.gnu.build-id']
    o = field(i, 24, '<Q')
    d[o + 16] ^= 0xff
case('build_id_other', other_id)
cases['truncated_half'] = data[:len(data) // 2]
cases['truncated_100'] = data[:100]
cases['empty'] = b''
cases['not_elf'] = bytes(random.Random(1).getrandbits(8) for _ in range(4096))
for s in range(24):
    r = random.Random(100 + s)
    d = bytearray(data)
    for _ in range(32):
        d[r.randrange(64, len(d))] = r.getrandbits(8)
    cases['random_%d' % s] = d
for name, d in cases.items():
    open(os.path.join(out, name + '.so'), 'wb').write(d)
EOF
[ -f "$work/control.so" ] || { echo "FAIL: could not make the corrupted copies"; exit 1; }

n=0
for bad in "$work"/*.so; do
	name=$(basename "$bad" .so)
	dir=$work/run_$name
	mkdir "$dir"
	cp "$VICTIM" "$dir/libobjects_victim.so"
	mkfifo "$dir/in"
	HEAPSCOPE_SAMPLE_RATE=1 HEAPSCOPE_PROFILE_AT_EXIT="$dir/heap.folded" \
		LD_PRELOAD="$LIB" "$HOST" "$dir/libobjects_victim.so" \
		<"$dir/in" >"$dir/out" 2>"$dir/err" &
	hpid=$!
	exec 3>"$dir/in"
	for _ in $(seq 1 200); do
		grep -q '^loaded' "$dir/out" 2>/dev/null && break
		sleep 0.02
	done
	# a new inode under the loaded library's name
	cp "$bad" "$dir/new.so" && mv -f "$dir/new.so" "$dir/libobjects_victim.so"
	echo go >&3
	exec 3>&-
	wait "$hpid"
	rc=$?
	n=$((n + 1))
	if [ $rc -ne 0 ]; then
		echo "FAIL: $name: the program exited $rc: $(head -3 "$dir/err")"; fail=1; continue
	fi
	# the 32 blocks of 4096 bytes allocated through the library, one stack
	if ! grep -qE '^_start;.*;main;.+;.+ 131072$' "$dir/heap.folded" 2>/dev/null; then
		echo "FAIL: $name: no stack of the library's 32 x 4096 bytes"; fail=1; continue
	fi
	# random bytes may rename a function (a corrupted string table whose
	# build id still matches); the other cases must fall back to dladdr
	case $name in
	random_*) ;;
	*) grep -q ';victim_alloc;' "$dir/heap.folded" ||
		{ echo "FAIL: $name: victim_alloc not named"; fail=1; } ;;
	esac
	case $name in
	control) grep -qE ';keep_block[.; ]' "$dir/heap.folded" ||
		{ echo "FAIL: control: keep_block not named"; cat "$dir/heap.folded"; fail=1; } ;;
	build_id_other) ! grep -q 'keep_block' "$dir/heap.folded" ||
		{ echo "FAIL: a file with another build id was used"; fail=1; } ;;
	esac
done
echo "$n files"
[ $fail -eq 0 ] && echo PASS
exit $fail
