-- SPDX-License-Identifier: MIT
-- bench/real_programs.sh: the lua5.4 workload. Over a text (text.txt): a
-- table of word counts, a table per line, string matching, gsub,
-- string.format and string.reverse, and sorts with comparison functions.
-- Everything printed is sorted (the order of pairs() over string keys
-- changes from run to run).
-- usage: lua5.4 table_workload.lua TEXT
local freq, lines, lens = {}, {}, {}
local n, nwords = 0, 0
for line in io.lines(arg[1]) do
	local body, num = line:match("^(.-)[.,] (%d+)$")
	if body then
		n = n + 1
		local words = {}
		for w in body:lower():gmatch("%a+") do
			words[#words + 1] = w
			freq[w] = (freq[w] or 0) + 1
			lens[#w] = (lens[#w] or 0) + 1
		end
		nwords = nwords + #words
		-- Upper-case the vowels of every other word, then write the
		-- line's first four runs of vowels twice.
		for i = 1, #words, 2 do
			words[i] = words[i]:gsub("[aeiou]", string.upper)
		end
		local key = table.concat(words, " "):gsub("([AEIOUaeiou]+)", "%1%1", 4)
		lines[n] = { key = key:sub(1, 40), num = tonumber(num), n = #words, text = key }
	end
end

local words = {}
for w in pairs(freq) do
	words[#words + 1] = w
end
table.sort(words, function(a, b)
	if freq[a] ~= freq[b] then
		return freq[a] > freq[b]
	end
	return a < b
end)
local out = {}
for i = 1, #words do
	out[i] = string.format("w %-12s %7d", words[i], freq[words[i]])
end
io.write(table.concat(out, "\n"), "\n")

-- Words by their reversed spelling, for words seen at least 3 times.
local revs = {}
for i = 1, #words do
	if freq[words[i]] >= 3 then
		revs[#revs + 1] = words[i]:reverse() .. " " .. words[i]
	end
end
table.sort(revs)
io.write(table.concat(revs, "\n"), "\n")

table.sort(lines, function(a, b)
	if a.key ~= b.key then
		return a.key < b.key
	end
	if a.num ~= b.num then
		return a.num < b.num
	end
	return a.text < b.text
end)
for i = 1, #lines do
	local l = lines[i]
	io.write(string.format("l %5d %2d %s\n", l.num, l.n, l.text))
end
for len = 1, 64 do
	if lens[len] then
		io.write(string.format("len %2d %d\n", len, lens[len]))
	end
end
io.write(string.format("lines %d words %d distinct %d reversed %d\n", n, nwords, #words, #revs))
