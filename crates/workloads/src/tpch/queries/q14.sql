-- TPC-H-derived Q14, promotion effect. :DATE_END is :DATE plus 1 month.
select
	100.00 * sum(case
		when p_type like 'PROMO%'
			then l_extendedprice * (1 - l_discount)
		else 0
	end) / sum(l_extendedprice * (1 - l_discount)) as promo_revenue
from
	lineitem,
	part
where
	l_partkey = p_partkey
	and l_shipdate >= :DATE
	and l_shipdate < :DATE_END
