-- TPC-H-derived Q6, forecasting revenue change. :DATE_END is :DATE plus 1 year;
-- :DISCOUNT_LO and :DISCOUNT_HI are DISCOUNT minus and plus 0.01.
select
	sum(l_extendedprice * l_discount) as revenue
from
	lineitem
where
	l_shipdate >= :DATE
	and l_shipdate < :DATE_END
	and l_discount between :DISCOUNT_LO and :DISCOUNT_HI
	and l_quantity < :QUANTITY
