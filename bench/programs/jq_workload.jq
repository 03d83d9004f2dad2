# SPDX-License-Identifier: MIT
# bench/real_programs.sh: the jq workload. Group, aggregate, reshape and sort,
# as jq scripts do; every object of the input is touched several times.
(map(select(.active)) | group_by(.category) | map({
	category: .[0].category,
	n: length,
	total: (map(.value) | add),
	levels: (group_by(.owner.level) | map({key: (.[0].owner.level | tostring), value: length}) | from_entries)
})),
([.[] | select(.history | length > 4)
	| {id, name: (.name | ascii_upcase), h: (.history | sort | .[1:-1]), keys: (.attrs | keys)}]
	| sort_by(.name) | .[:20000]),
(group_by(.owner.user) | map({user: .[0].owner.user, n: length,
	total: (map(.history | add // 0) | add)}) | sort_by(-.total, .user) | .[:3000]),
(map(.tags | join(",")) | unique | length)
