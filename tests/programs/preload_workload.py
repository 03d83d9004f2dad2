# SPDX-License-Identifier: MIT
# python3 workload for the LD_PRELOAD test (run with PYTHONMALLOC=malloc).
import collections
import json
import threading


def work(k, out):
    d = {str(i): [i] * (i % 17) for i in range(60000)}
    s = json.dumps(d)
    out[k] = (len(s), len(json.loads(s)),
              sum(collections.Counter(s).values()))


out = {}
ts = [threading.Thread(target=work, args=(k, out)) for k in range(4)]
for t in ts:
    t.start()
for t in ts:
    t.join()
print(sorted(out.items()))
print(sum(len(bytearray(n)) for n in range(0, 3000000, 100000)))
