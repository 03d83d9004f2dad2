-- SPDX-License-Identifier: MIT
-- Fixed SQL workload for sqlite3 under LD_PRELOAD (bench/run.sh runs it as
-- `sqlite3 :memory: < sqlite_workload.sql`). Deterministic: no random().
-- Row count is set by run.sh through the first line it prepends:
-- CREATE TEMP TABLE param(n) AS ... ; see run.sh.
PRAGMA cache_size = -65536;
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < (SELECT n FROM param))
INSERT INTO t SELECT i, (i * 7919) % 1000, printf('%08x-%s', (i * 2654435761) % 4294967296, substr('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 1 + i % 40, 8 + i % 40)), (i % 977) / 7.0 FROM s;
CREATE INDEX t_a ON t(a);
CREATE INDEX t_b ON t(b);
SELECT a, count(*), round(avg(c), 3), length(group_concat(substr(b, 1, 4))) FROM t GROUP BY a ORDER BY 3 DESC LIMIT 3;
UPDATE t SET b = b || '-' || a WHERE a % 3 = 0;
DELETE FROM t WHERE a % 5 = 0;
CREATE TABLE u AS SELECT a, max(c) AS mc, count(*) AS k FROM t GROUP BY a;
SELECT count(*), sum(u.k) FROM t JOIN u ON t.a = u.a WHERE t.c > u.mc / 2;
SELECT b FROM t ORDER BY b DESC LIMIT 1;
SELECT count(DISTINCT substr(b, 10)) FROM t;
