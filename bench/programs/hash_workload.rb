# SPDX-License-Identifier: MIT
# bench/real_programs.sh: the ruby workload. Parses a JSON array of objects
# (data.json) into hashes and arrays, builds a Struct and a string key per
# object, groups them by category, owner and tag (hashes of arrays), tallies
# words, sorts by computed keys and prints formatted lines. Everything
# printed is in a sorted order.
# usage: ruby --disable=gems hash_workload.rb DATA.json
require "json"

Rec = Struct.new(:id, :key, :category, :value, :total, :tags)

data = JSON.parse(File.read(ARGV[0]))
recs = data.map do |o|
  first, last = o["name"].split(" ")
  key = "#{last.capitalize}, #{first.tr('aeiou', 'AEIOU')} (#{o['owner']['user']})"
  Rec.new(o["id"], key, o["category"], o["value"], o["history"].sum + o["attrs"].values.sum,
          o["tags"].map(&:upcase).sort.uniq)
end

recs.group_by(&:category).sort_by { |c, l| [-l.size, c] }.each do |c, list|
  list.sort_by! { |r| [-r.value, r.id] }
  avg = list.sum(&:value) / list.size
  top = list.first(3).map { |r| format("%s=%.1f", r.key, r.value) }
  printf("cat %-10s %6d %9.3f %s\n", c, list.size, avg, top.join("; "))
end

by_tag = Hash.new { |h, k| h[k] = [] }
recs.each { |r| r.tags.each { |t| by_tag[t] << r.id } }
by_tag.select { |_, ids| ids.size >= 5 }.sort.each do |t, ids|
  puts "tag #{t} #{ids.size} #{ids.first(5).join(',')}"
end

owners = data.each_with_object(Hash.new { |h, k| h[k] = Hash.new(0) }) do |o, h|
  o["attrs"].each { |k, v| h[o["owner"]["user"]][k] += v }
end
owners.keys.sort.each do |u|
  a = owners[u]
  next if a.size < 3
  puts "owner #{u} " + a.sort_by { |k, v| [-v, k] }.map { |k, v| "#{k}:#{v}" }.join(" ")
end

words = data.flat_map { |o| o["name"].split(" ") }.tally
words.select { |_, n| n >= 2 }.sort_by { |w, n| [-n, w] }.each { |w, n| puts "word #{w} #{n}" }

recs.sort_by! { |r| [r.key, r.id] }
recs.each_slice(3) do |s|
  r = s[0]
  printf("rec %6d %-40s %-10s %8.1f %8d %s\n", r.id, r.key, r.category, r.value, r.total, r.tags.join("|"))
end
printf("records %d categories %d tags %d owners %d words %d\n", recs.size,
       recs.map(&:category).uniq.size, by_tag.size, owners.size, words.size)
