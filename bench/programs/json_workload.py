# SPDX-License-Identifier: MIT
"""bench/real_programs.sh: the python3 workload, run by Debian's
/usr/bin/python3 -I with its default allocator (pymalloc for objects of up
to 512 bytes, malloc for the rest: lists, dicts and strings that grow).
json.loads a file (data.json), builds dicts, lists, sets and tuples from
it, sorts them, serialises them, and prints a summary as JSON. Everything printed is sorted or in
insertion order (str hashes are randomised per run).
usage: json_workload.py DATA.json"""
import json
import sys

with open(sys.argv[1]) as f:
    data = json.loads(f.read())

by_cat = {}     # category -> list of (value, id, name)
by_level = {}   # owner level -> {user: count}
tag_cats = {}   # tag -> set of categories
attr_sum = {}   # attribute name -> [count, sum, min, max]
pairs = set()   # (tag, tag) seen on one object
shapes = {}     # (number of tags, number of attributes, active) -> ids
for o in data:
    by_cat.setdefault(o["category"], []).append((o["value"], o["id"], o["name"]))
    users = by_level.setdefault(o["owner"]["level"], {})
    users[o["owner"]["user"]] = users.get(o["owner"]["user"], 0) + 1
    tags = o["tags"]
    for t in tags:
        tag_cats.setdefault(t, set()).add(o["category"])
    for a, b in zip(tags, tags[1:]):
        pairs.add((min(a, b), max(a, b)))
    for k, v in o["attrs"].items():
        s = attr_sum.get(k)
        if s is None:
            attr_sum[k] = [1, v, v, v]
        else:
            s[0] += 1
            s[1] += v
            s[2] = min(s[2], v)
            s[3] = max(s[3], v)
    shapes.setdefault((len(tags), len(o["attrs"]), o["active"]), []).append(o["id"])

# A reshaped copy of every object: new dicts, tuples and strings.
flat = [{"key": "%s/%s/%05d" % (o["category"], o["owner"]["user"], o["id"]),
         "words": tuple(sorted(set(o["name"].split()) | set(o["tags"]))),
         "hist": sorted(o["history"], reverse=True),
         "total": sum(o["history"]) + sum(o["attrs"].values()),
         "attrs": dict(sorted(o["attrs"].items()))} for o in data]
flat.sort(key=lambda d: (-d["total"], d["key"]))
text = json.dumps(flat, separators=(",", ":"))
for v in by_cat.values():
    v.sort()

out = {
    "categories": [[c, len(v), round(sum(x[0] for x in v) / len(v), 3), v[:3], v[-1]]
                   for c, v in sorted(by_cat.items())],
    "levels": [[lv, len(u), sorted(u.items(), key=lambda kv: (-kv[1], kv[0]))[:20]]
               for lv, u in sorted(by_level.items())],
    "tags": [[t, sorted(c)] for t, c in sorted(tag_cats.items()) if len(c) > 1],
    "pairs": sorted(pairs)[:5000],
    "npairs": len(pairs),
    "attrs": [[k] + s for k, s in sorted(attr_sum.items())],
    "shapes": [[list(k), len(v), v[:5]] for k, v in sorted(shapes.items())],
    "flat": flat[:2000] + flat[-2000:],
    "nflat": len(flat),
    "textlen": len(text),
}
# One line per key (indent= would take json's pure-Python encoder).
for k, v in sorted(out.items()):
    sys.stdout.write(json.dumps([k, v], separators=(",", ":")) + "\n")
