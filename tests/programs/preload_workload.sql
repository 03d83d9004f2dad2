-- SPDX-License-Identifier: MIT
-- sqlite3 workload for the LD_PRELOAD test.
create table t(a integer primary key, b text, c blob);
with recursive c(x) as (select 1 union all select x + 1 from c where x < 5000)
insert into t(b, c) select printf('row%d', x), zeroblob(x % 700) from c;
create index tb on t(b);
delete from t where a % 3 = 0;
pragma integrity_check;
select count(*), sum(length(c)) from t;
