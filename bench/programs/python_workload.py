# SPDX-License-Identifier: MIT
"""Fixed Python workload for /usr/bin/python3 with PYTHONMALLOC=malloc, so
every object allocation goes through the preloaded allocator. Deterministic.
Argument 1: scale (default 1.0)."""
import json
import sys

scale = float(sys.argv[1]) if len(sys.argv) > 1 else 1.0
n = int(40000 * scale)


class Rec:
    __slots__ = ("k", "v", "tags")

    def __init__(self, k, v, tags):
        self.k, self.v, self.tags = k, v, tags


docs = []
for i in range(n):
    docs.append({"id": i, "name": "item-%d-%x" % (i, i * 2654435761 % 2**32),
                 "tags": ["t%d" % (j * i % 97) for j in range(i % 8)],
                 "score": (i * 7919 % 1000) / 10.0})
text = json.dumps(docs)
back = json.loads(text)
recs = [Rec(d["name"], d["score"], tuple(d["tags"])) for d in back]
recs.sort(key=lambda r: (r.v, r.k))
index = {}
for r in recs:
    for t in r.tags:
        index.setdefault(t, []).append(r.k)
words = " ".join(r.k for r in recs).split("-")
counts = {}
for w in words:
    counts[w[:3]] = counts.get(w[:3], 0) + 1
del docs, back, text
s = set()
for i in range(n * 2):
    s.add(str(i * 31 % (n + 7)))
    if i % 3 == 0:
        s.discard(str(i * 17 % (n + 7)))
print(len(recs), len(index), len(counts), len(s))
