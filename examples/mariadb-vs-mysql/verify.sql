-- Asked of every server over the same sysbench tables before anything is measured
-- (examples/mariadb-vs-mysql.toml's [verify]). Rows without ORDER BY are compared as a
-- set, and the record says so where they came in another order (MySQL 8.0 no longer
-- sorts a GROUP BY's groups); between MariaDB and MySQL numbers are compared by value.
SELECT COUNT(*), SUM(k), MIN(id), MAX(id) FROM sbtest1;
SELECT id % 7 AS m, COUNT(*), SUM(k) FROM sbtest1 GROUP BY id % 7;
SELECT id, k, c FROM sbtest1 WHERE id BETWEEN 10 AND 20;
SELECT id, k / 3, k * 1.5 FROM sbtest1 WHERE id <= 5 ORDER BY id;
SELECT AVG(k), STDDEV_POP(k) FROM sbtest1;
SELECT k, COUNT(*) FROM sbtest1 WHERE id <= 100 GROUP BY k HAVING COUNT(*) > 0;
