# SPDX-License-Identifier: MIT
# bench/real_programs.sh: the gawk workload. Word, bigram and word-length
# frequencies of a text (associative arrays of many short strings), printed
# in a fixed order (gawk's sorted_in: by count, ties by index).
{
	for (i = 1; i <= NF; i++) {
		w = tolower($i)
		gsub(/[^a-z0-9]/, "", w)
		if (w == "")
			continue
		n[w]++
		if (prev != "")
			bi[prev " " w]++
		prev = w
		len[length(w)]++
	}
	prev = ""
}
END {
	for (b in bi)
		if (bi[b] >= 4)
			top[b] = bi[b]
	PROCINFO["sorted_in"] = "@val_num_desc"
	for (w in n)
		printf "%s %d\n", w, n[w]
	for (b in top)
		printf "%s %d\n", b, top[b]
	PROCINFO["sorted_in"] = "@ind_num_asc"
	for (l in len)
		printf "len %d %d\n", l, len[l]
	print length(n), length(bi), length(top)
}
