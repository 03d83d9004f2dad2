-- SPDX-License-Identifier: MIT
-- Issue 7 item 4: a heavy, deterministic sqlite3 workload (no random(),
-- no time): 300,000 orders over 20,000 customers and 2,000 products,
-- indexes, joins, grouped aggregates, updates, deletes, a rebuild, VACUUM,
-- then PRAGMA integrity_check.  Run by tests/realprog_sqlite3.sh on a file
-- database; every output line must be identical to glibc's.
PRAGMA page_size = 4096;
PRAGMA cache_size = -8000;
PRAGMA journal_mode = DELETE;
CREATE TABLE customer(id INTEGER PRIMARY KEY, name TEXT NOT NULL, region INTEGER, note TEXT);
CREATE TABLE product(id INTEGER PRIMARY KEY, title TEXT NOT NULL, price INTEGER, blob BLOB);
CREATE TABLE orders(id INTEGER PRIMARY KEY, cust INTEGER REFERENCES customer(id),
                    prod INTEGER REFERENCES product(id), qty INTEGER, day INTEGER, memo TEXT);
BEGIN;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
INSERT INTO customer SELECT i, 'customer-' || i || '-' || hex(i * 2654435761 % 4294967296),
       i * 7919 % 37, substr(printf('%.*c', 20 + i % 200, 'n'), 1) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 2000)
INSERT INTO product SELECT i, 'product ' || printf('%06d', i * 104729 % 1000003),
       100 + i * 31 % 9900, zeroblob(16 + i % 3000) FROM n;
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300000)
INSERT INTO orders SELECT i, 1 + i * 48271 % 20000, 1 + i * 16807 % 2000, 1 + i % 17,
       i * 69621 % 3650, CASE WHEN i % 5 = 0 THEN printf('memo %d %s', i, hex(i * 31)) END FROM n;
COMMIT;
CREATE INDEX orders_cust ON orders(cust, day);
CREATE INDEX orders_prod ON orders(prod);
CREATE INDEX customer_region ON customer(region, name);
CREATE INDEX orders_memo ON orders(memo) WHERE memo IS NOT NULL;
SELECT 'rows', (SELECT count(*) FROM customer), (SELECT count(*) FROM product), (SELECT count(*) FROM orders);
-- joins and aggregates
SELECT c.region, count(*), sum(o.qty * p.price), max(o.day)
  FROM orders o JOIN customer c ON c.id = o.cust JOIN product p ON p.id = o.prod
 GROUP BY c.region ORDER BY c.region;
SELECT p.title, sum(o.qty) AS q FROM orders o JOIN product p ON p.id = o.prod
 GROUP BY p.id ORDER BY q DESC, p.id LIMIT 15;
SELECT c.name, count(o.id), total(o.qty) FROM customer c LEFT JOIN orders o ON o.cust = c.id
 WHERE c.region IN (3, 17, 29) GROUP BY c.id ORDER BY count(o.id) DESC, c.id LIMIT 20;
SELECT count(DISTINCT cust), count(DISTINCT prod), group_concat(DISTINCT qty) FROM orders WHERE day < 100;
-- updates, deletes, a correlated subquery
UPDATE orders SET qty = qty * 2, memo = coalesce(memo, '') || '+' WHERE day % 11 = 3;
UPDATE product SET blob = zeroblob(length(blob) * 2), price = price + 1 WHERE id % 7 = 0;
DELETE FROM orders WHERE cust % 13 = 0 OR (prod % 19 = 0 AND qty > 8);
DELETE FROM customer WHERE id NOT IN (SELECT cust FROM orders);
SELECT 'after delete', (SELECT count(*) FROM customer), (SELECT count(*) FROM orders), (SELECT sum(qty) FROM orders);
SELECT id, (SELECT count(*) FROM orders o2 WHERE o2.cust = c.id AND o2.day > 3000) AS late
  FROM customer c WHERE id % 997 = 1 ORDER BY id;
-- window functions and a temporary b-tree of strings
SELECT cust, day, qty, sum(qty) OVER (PARTITION BY cust ORDER BY day, id) FROM orders
 WHERE cust BETWEEN 100 AND 103 ORDER BY cust, day, id;
SELECT substr(memo, 1, 12), count(*) FROM orders WHERE memo IS NOT NULL
 GROUP BY substr(memo, 1, 12) ORDER BY 2 DESC, 1 LIMIT 10;
-- rebuild a table, drop and recreate an index, vacuum
CREATE TABLE orders2 AS SELECT * FROM orders ORDER BY day, id;
DROP TABLE orders;
ALTER TABLE orders2 RENAME TO orders;
CREATE INDEX orders_cust ON orders(cust, day);
DROP INDEX customer_region;
CREATE INDEX customer_region ON customer(region, name);
VACUUM;
SELECT 'after vacuum', (SELECT count(*) FROM orders), (SELECT sum(qty * day) FROM orders),
       (SELECT sum(length(blob)) FROM product);
PRAGMA integrity_check;
PRAGMA foreign_key_check;
