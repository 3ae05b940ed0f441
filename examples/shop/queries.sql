-- What the shop asks most.
SELECT name, price FROM item WHERE id = 3;
SELECT name, price FROM item WHERE id = 5;
SELECT AVG(price) FROM item;
SELECT i.name, SUM(s.n) AS sold FROM item i JOIN sale s ON s.item_id = i.id GROUP BY i.name ORDER BY sold DESC, i.name;
SELECT name FROM item WHERE price > 2.00 ORDER BY name;
UPDATE item SET qty = qty + 1 WHERE id = 2;
SELECT qty FROM item WHERE id = 2;
