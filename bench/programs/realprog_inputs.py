# SPDX-License-Identifier: MIT
"""Writes the inputs of bench/real_programs.sh into a directory, from a seed:
the same seed and scale give byte-identical files on any machine (only
random.Random(seed).random() and .getrandbits() are used, whose output
Python keeps stable across versions).

usage: realprog_inputs.py DIR SCALE SEED

Files (sizes at scale 1):
  text.txt     ~6.5 MB of prose-like lines, words drawn from a Zipf-like
               vocabulary (gawk word counts, perl, lua)
  records.tsv  ~21 MB of tab-separated records: id, name, city, amount, date
               (sort on several keys)
  data.json    ~13 MB: one array of objects with nested arrays and maps (jq,
               python3, ruby)
  doc.xml      ~22 MB: a catalogue of items with attributes, text and nested
               elements (xmllint, xsltproc)
  gen.c        ~115 KB of C, 220 functions: structs, switches, loops,
               inline helpers (gcc -O2, cppcheck)
  git.fi       ~20 MB git fast-import stream: 40 files edited over 600
               commits with fixed dates (git)
  gen.cpp      ~11 KB of C++, 12 namespaces of a record type, std::vector,
               std::map, std::string, a class template and lambdas (g++ -O2,
               cppcheck); 2 namespaces at the least
  graph.dot    ~0.7 MB: a directed graph of 9000 nodes and ~17 700 edges in
               components of 40-240 nodes, some labelled edges (dot)
  page.man     ~4.3 MB manual page: 3500 subsections of paragraphs, tagged
               paragraphs, examples, and a table every fourth (groff -t -man)
"""
import os
import random
import sys

LETTERS = "abcdefghijklmnopqrstuvwxyz"


def vocabulary(rng, n):
    seen, words = set(), []
    while len(words) < n:
        w = "".join(LETTERS[int(rng.random() * 26)] for _ in range(2 + int(rng.random() * 9)))
        if w not in seen:
            seen.add(w)
            words.append(w)
    return words


def zipf_index(rng, n):
    """An index in [0, n) with P(i) roughly proportional to 1 / (i + 1)."""
    return min(n - 1, int(n ** rng.random()) - 1)


def write_text(path, rng, words, lines):
    with open(path, "w") as f:
        for _ in range(lines):
            k = 4 + int(rng.random() * 14)
            ws = [words[zipf_index(rng, len(words))] for _ in range(k)]
            if rng.random() < 0.3:
                ws[0] = ws[0].capitalize()
            f.write(" ".join(ws) + (". " if rng.random() < 0.5 else ", ") +
                    str(rng.getrandbits(16)) + "\n")


def write_records(path, rng, words, n):
    cities = words[:300]
    with open(path, "w") as f:
        for i in range(n):
            f.write("%d\t%s %s\t%s\t%d.%02d\t2026-%02d-%02d\n" % (
                rng.getrandbits(31), words[zipf_index(rng, len(words))].capitalize(),
                words[int(rng.random() * len(words))].capitalize(),
                cities[zipf_index(rng, len(cities))], rng.getrandbits(17),
                rng.getrandbits(6) % 100, 1 + i % 12, 1 + rng.getrandbits(5) % 28))


def jstr(s):
    return '"' + s + '"'


def write_json(path, rng, words, n):
    cats = words[:40]
    with open(path, "w") as f:
        f.write("[\n")
        for i in range(n):
            tags = ",".join(jstr(words[zipf_index(rng, len(words))])
                            for _ in range(int(rng.random() * 6)))
            attrs = ",".join('"%s":%d' % (words[100 + j * 7 + int(rng.random() * 7)],
                                          rng.getrandbits(12))
                             for j in range(int(rng.random() * 5)))
            hist = ",".join("%d" % rng.getrandbits(10) for _ in range(int(rng.random() * 8)))
            f.write('{"id":%d,"name":"%s %s","category":"%s","value":%d.%d,'
                    '"active":%s,"tags":[%s],"attrs":{%s},"history":[%s],'
                    '"owner":{"user":"%s","level":%d}}%s\n' % (
                        i, words[zipf_index(rng, len(words))],
                        words[int(rng.random() * len(words))],
                        cats[zipf_index(rng, len(cats))], rng.getrandbits(10),
                        rng.getrandbits(3), "true" if rng.random() < 0.5 else "false",
                        tags, attrs, hist, words[int(rng.random() * 2000)],
                        rng.getrandbits(3), "," if i + 1 < n else ""))
        f.write("]\n")


def write_xml(path, rng, words, n):
    kinds = words[:25]
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<catalog version="1">\n')
        for i in range(n):
            f.write('  <item id="i%d" kind="%s" stock="%d">\n' % (
                i, kinds[zipf_index(rng, len(kinds))], rng.getrandbits(9)))
            f.write("    <name>%s %s</name>\n" % (
                words[zipf_index(rng, len(words))].capitalize(),
                words[int(rng.random() * len(words))]))
            f.write("    <price currency=\"EUR\">%d.%02d</price>\n" % (
                rng.getrandbits(11), rng.getrandbits(6) % 100))
            f.write("    <tags>" + "".join(
                "<tag>%s</tag>" % words[zipf_index(rng, len(words))]
                for _ in range(int(rng.random() * 5))) + "</tags>\n")
            f.write("    <desc>" + " ".join(
                words[zipf_index(rng, len(words))]
                for _ in range(5 + int(rng.random() * 20))) + "</desc>\n")
            if rng.random() < 0.3:
                f.write('    <supplier ref="s%d"><contact>%s</contact></supplier>\n' % (
                    rng.getrandbits(10), words[int(rng.random() * len(words))]))
            f.write("  </item>\n")
        f.write("</catalog>\n")


def write_c(path, rng, n):
    """n functions over a few struct types: enough control flow and inlining
    for gcc -O2 to spend its time in the middle end, not the parser."""
    out = ["/* generated by bench/programs/realprog_inputs.py */",
           "#include <stddef.h>",
           "struct s0 { int a, b; long c; double d; struct s0 *next; };",
           "struct s1 { unsigned char k[16]; int v[8]; struct s0 *h; };",
           "static inline int mix(int x, int y) { return (x * 31) ^ (y >> 3); }",
           "static inline long fold(const struct s1 *p) {",
           "  long r = 0; for (int i = 0; i < 8; i++) r += p->v[i] * (i + 1); return r; }"]
    for i in range(n):
        k = [1 + rng.getrandbits(8) for _ in range(8)]
        body = ["long f%d(struct s1 *p, struct s0 *q, int n) {" % i,
                "  long acc = %d;" % k[0],
                "  for (int i = 0; i < n; i++) {",
                "    switch ((i + %d) %% 6) {" % k[1],
                "    case 0: acc += mix(p->v[i & 7], %d); break;" % k[2],
                "    case 1: acc ^= (long)p->k[i & 15] << (i & 7); break;",
                "    case 2: if (q) { acc += q->a * %d + q->b; q = q->next; } break;" % k[3],
                "    case 3: acc = acc * %d + fold(p); break;" % k[4],
                "    case 4: p->v[(i + %d) & 7] += (int)acc; break;" % k[5],
                "    default: acc -= (long)(q ? q->d * %d.5 : %d); break;" % (k[6], k[7]),
                "    }",
                "  }"]
        if i:
            body.append("  if (acc & %d) acc += f%d(p, q, n / 2);" % (k[0], int(rng.random() * i)))
        body += ["  return acc;", "}"]
        out.extend(body)
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_cpp(path, rng, words, n):
    """n namespaces, each with its own record type and functions over it:
    std::vector, std::map and std::string, a class template instantiated
    anew per namespace, searches with lambdas. Each namespace makes g++'s
    front end instantiate templates again, and -O2 inline them (a
    std::sort per namespace would double the time of each)."""
    out = ["// generated by bench/programs/realprog_inputs.py",
           "#include <algorithm>", "#include <map>", "#include <numeric>",
           "#include <string>", "#include <vector>", "",
           "template <typename T, int N> struct Acc {",
           "  std::map<std::string, std::vector<T>> groups;",
           "  void add(const std::string &key, T x) { groups[key].push_back(x * N); }",
           "  T total() const {",
           "    T r{};",
           "    for (const auto &g : groups)",
           "      r = std::accumulate(g.second.begin(), g.second.end(), r);",
           "    return r;",
           "  }",
           "};", "",
           "template <typename C, typename P> long count_where(const C &c, P p) {",
           "  return (long)std::count_if(c.begin(), c.end(), p);",
           "}"]
    for i in range(n):
        k = [1 + rng.getrandbits(7) for _ in range(8)]
        w = [words[zipf_index(rng, len(words))] for _ in range(2)]
        out += ["",
                "namespace m%d {" % i,
                "struct Item {",
                "  std::string name;",
                "  int k;",
                "  double v;",
                "};",
                "",
                "long run(const std::vector<std::string> &in) {",
                "  std::vector<Item> items;",
                "  for (const auto &s : in)",
                "    items.push_back(Item{s + \"%s\", (int)s.size() * %d %% %d, s.size() * %d.5});"
                % (w[0], k[0], 7 + k[1], k[2]),
                "  Acc<long, %d> acc;" % k[3],
                "  std::map<std::string, int> last;",
                "  for (const auto &it : items) {",
                "    acc.add(it.name.substr(0, %d), it.k);" % (1 + k[4] % 5),
                "    last[it.name + \"%s\"] = it.k;" % w[1],
                "  }",
                "  auto above = [&](int lo) { return count_where(items, [lo](const Item &x) { return x.k > lo; }); };",
                "  auto hit = std::find_if(items.begin(), items.end(), [](const Item &x) {",
                "    return x.v > %d && x.name.find('%s') != std::string::npos;" % (k[5], w[0][0]),
                "  });",
                "  long r = acc.total() + above(%d) + (hit == items.end() ? 0 : hit->k);" % k[6],
                "  for (const auto &p : last)",
                "    r = r * %d + (long)p.first.size() + p.second;" % (31 + k[7])]
        out += ["  return r;", "}", "} // namespace m%d" % i]
    out += ["", "long run_all(const std::vector<std::string> &in) {", "  long r = 0;"]
    out += ["  r += m%d::run(in);" % i for i in range(n)]
    out += ["  return r;", "}"]
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_dot(path, rng, words, n):
    """A graph of n nodes in components of 40-240 nodes: in each, a node
    has one to three edges from the 30 nodes before it, some labelled.
    pack=true makes dot lay out each component on its own and pack them,
    so the time grows with n about linearly (one component of n nodes
    grows as n^2 or worse, in the network simplex of dot's positions)."""
    shapes = ["box", "ellipse", "diamond", "record"]
    with open(path, "w") as f:
        f.write("digraph g {\n  pack=true;\n  node [shape=box];\n")
        start = 0
        while start < n:
            size = min(n - start, 40 + int(rng.random() * 200))
            f.write("  subgraph c%d {\n" % start)
            for i in range(start, start + size):
                f.write('    n%d [label="%s\\n%d"%s];\n' % (
                    i, words[zipf_index(rng, len(words))], i,
                    "" if rng.random() < 0.8 else ", shape=" + shapes[int(rng.random() * 4)]))
            for i in range(start + 1, start + size):
                for _ in range(1 + int(rng.random() * 3)):
                    j = i - 1 - int(rng.random() * min(i - start, 30))
                    f.write("    n%d -> n%d%s;\n" % (
                        j, i, "" if rng.random() < 0.9 else ' [label="%s"]' % words[int(rng.random() * 500)]))
            f.write("  }\n")
            start += size
        f.write("}\n")


def write_man(path, rng, words, n):
    """A manual page (groff -man) of n subsections: filled and hyphenated
    paragraphs with bold and italic words, tagged and indented paragraphs,
    a table (tbl) every fourth subsection, unfilled examples. The date in
    .TH is fixed: the output has no date of its own."""
    def sentence(k):
        ws = []
        for _ in range(k):
            w = words[zipf_index(rng, len(words))]
            r = rng.random()
            if r < 0.04:
                w = "\\fB%s\\fP" % w
            elif r < 0.08:
                w = "\\fI%s\\fP" % w
            ws.append(w)
        ws[0] = ws[0].capitalize()
        return " ".join(ws) + "."

    out = ['.\\" generated by bench/programs/realprog_inputs.py',
           '.TH GENERATED 7 2026-01-01 bench "Generated manual"',
           ".SH NAME", "generated \\- %s" % sentence(6)]
    for i in range(n):
        if i % 5 == 0:
            out += [".SH %s" % words[zipf_index(rng, len(words))].upper()]
        out += [".SS %s" % sentence(2 + int(rng.random() * 4))[:-1]]
        for _ in range(1 + int(rng.random() * 3)):
            out.append(".PP")
            out += [sentence(5 + int(rng.random() * 15)) for _ in range(2 + int(rng.random() * 5))]
        if rng.random() < 0.5:
            for _ in range(2 + int(rng.random() * 4)):
                out += [".TP", ".B \\-\\-%s" % words[int(rng.random() * 2000)],
                        sentence(8 + int(rng.random() * 20))]
        if rng.random() < 0.3:
            out += [".RS", ".IP \\(bu 2", sentence(10), ".IP \\(bu 2", sentence(12), ".RE"]
        if rng.random() < 0.3:
            out += [".PP", ".nf", ".RS 4"]
            out += ["%s(%d, %s);" % (words[int(rng.random() * 300)], rng.getrandbits(12),
                                      words[zipf_index(rng, len(words))])
                    for _ in range(2 + int(rng.random() * 6))]
            out += [".RE", ".fi"]
        if i % 4 == 0:
            out += [".PP", ".TS", "center box;", "l l n n.", "name\tkind\tcount\tsize", "_"]
            for _ in range(5 + int(rng.random() * 15)):
                out.append("%s\t%s\t%d\t%d.%02d" % (
                    words[zipf_index(rng, len(words))], words[int(rng.random() * 40)],
                    rng.getrandbits(16), rng.getrandbits(10), rng.getrandbits(6) % 100))
            out.append(".TE")
    with open(path, "w") as f:
        f.write("\n".join(out) + "\n")


def write_git(path, rng, words, files, commits):
    """fast-import stream: 'files' files of ~200 lines, each commit rewrites a
    few lines of a few files (so deltas and diffs have work to do)."""
    content = [[" ".join(words[zipf_index(rng, len(words))] for _ in range(8))
                for _ in range(200)] for _ in range(files)]
    with open(path, "wb") as f:
        def data(b):
            f.write(b"data %d\n" % len(b) + b + b"\n")
        for c in range(commits):
            f.write(b"commit refs/heads/main\n")
            t = 1700000000 + c * 3600
            f.write(b"author Bench <bench@example.invalid> %d +0000\n" % t)
            f.write(b"committer Bench <bench@example.invalid> %d +0000\n" % t)
            data(b"commit %d: %s" % (c, words[c % len(words)].encode()))
            touched = range(files) if c == 0 else sorted({int(rng.random() * files)
                                                         for _ in range(3)})
            for fi in touched:
                lines = content[fi]
                for _ in range(0 if c == 0 else 1 + int(rng.random() * 6)):
                    j = int(rng.random() * len(lines))
                    r = rng.random()
                    new = " ".join(words[zipf_index(rng, len(words))] for _ in range(8))
                    if r < 0.6:
                        lines[j] = new
                    elif r < 0.8:
                        lines.insert(j, new)
                    elif len(lines) > 50:
                        del lines[j]
                f.write(b"M 100644 inline src/f%03d.txt\n" % fi)
                data(("\n".join(lines) + "\n").encode())
            f.write(b"\n")


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: realprog_inputs.py DIR SCALE SEED")
    out, scale, seed = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    os.makedirs(out, exist_ok=True)

    def n(base):
        return max(10, int(base * scale))

    # One generator per file, seeded from (seed, file): a file does not change
    # when another file's size does.
    def rng(i):
        return random.Random(seed * 1000 + i)

    words = vocabulary(rng(0), 50000)
    write_text(os.path.join(out, "text.txt"), rng(1), words, n(80000))
    write_records(os.path.join(out, "records.tsv"), rng(2), words, n(400000))
    write_json(os.path.join(out, "data.json"), rng(3), words, n(60000))
    write_xml(os.path.join(out, "doc.xml"), rng(4), words, n(70000))
    write_c(os.path.join(out, "gen.c"), rng(5), n(220))
    write_git(os.path.join(out, "git.fi"), rng(6), words, 40, n(600))
    # g++ -O2 spends ~0.15 s per namespace: 12 at scale 1, and fewer than
    # n()'s floor of 10 at small scales.
    write_cpp(os.path.join(out, "gen.cpp"), rng(7), words, max(2, int(12 * scale)))
    write_dot(os.path.join(out, "graph.dot"), rng(8), words, n(9000))
    write_man(os.path.join(out, "page.man"), rng(9), words, n(3500))


if __name__ == "__main__":
    main()
