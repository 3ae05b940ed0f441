-- The tables examples/shop/queries.sql reads and writes.
CREATE TABLE item (id INT PRIMARY KEY, name VARCHAR(40), price DECIMAL(10,2), qty INT);
INSERT INTO item VALUES (1, 'apple', 1.20, 10), (2, 'Banana', 0.55, 7), (3, 'cherry', 3.10, 3),
  (4, 'date', 2.00, 12), (5, 'Elder', 9.99, 1), (6, 'fig', 4.25, 6);
CREATE TABLE sale (id INT PRIMARY KEY, item_id INT, n INT);
INSERT INTO sale VALUES (1, 1, 2), (2, 1, 1), (3, 2, 5), (4, 4, 1), (5, 6, 3), (6, 3, 2);
