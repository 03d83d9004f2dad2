# SPDX-License-Identifier: MIT
"""demo_workload.py - the demo's real workload for Debian's CPython.

Run as: PYTHONMALLOC=malloc LD_PRELOAD=libheapscope.so /usr/bin/python3 demo_workload.py READY_FILE
It builds a realistic in-memory data set (parsed JSON documents, an index,
an in-memory SQLite database), then writes READY_FILE with the allocator's
own count of bytes in use (mallinfo2().uordblks, read through ctypes from
whatever malloc is in the process) and holds everything live until killed.
"""
import ctypes
import json
import random
import sqlite3
import sys
import time

random.seed(7)


class MallInfo2(ctypes.Structure):
    _fields_ = [(n, ctypes.c_size_t) for n in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks",
        "fsmblks", "uordblks", "fordblks", "keepcost")]


def in_use_bytes():
    libc = ctypes.CDLL(None)
    libc.mallinfo2.restype = MallInfo2
    return libc.mallinfo2().uordblks


def make_documents(n):
    words = [f"w{i:05d}" for i in range(5000)]
    docs = []
    for i in range(n):
        doc = {
            "id": i,
            "name": " ".join(random.choice(words) for _ in range(6)),
            "tags": [random.choice(words) for _ in range(8)],
            "score": random.random(),
        }
        docs.append(json.loads(json.dumps(doc)))
    return docs


def build_index(docs):
    index = {}
    for d in docs:
        for t in d["tags"]:
            index.setdefault(t, []).append(d["id"])
    return index


def build_database(docs):
    db = sqlite3.connect(":memory:")
    db.execute("create table doc(id integer primary key, name text, score real)")
    db.executemany("insert into doc values (?, ?, ?)",
                   ((d["id"], d["name"] * 4, d["score"]) for d in docs))
    db.execute("create index doc_name on doc(name)")
    db.execute("select count(*), avg(score) from doc where name like 'w0%'").fetchall()
    return db


def main():
    ready_file = sys.argv[1]
    t0 = time.time()
    docs = make_documents(300_000)
    index = build_index(docs)
    db = build_database(docs)
    blobs = [bytes(random.getrandbits(8) for _ in range(64)) * 256 for _ in range(2000)]
    with open(ready_file + ".tmp", "w") as f:
        f.write(f"{in_use_bytes()} {time.time() - t0:.2f}\n")
    import os
    os.rename(ready_file + ".tmp", ready_file)
    while True:  # hold the heap live until the demo kills us
        time.sleep(1)
    print(len(docs), len(index), db, len(blobs))


if __name__ == "__main__":
    main()
