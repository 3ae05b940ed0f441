-- TPC-H-derived Q4, order priority checking. :DATE_END is :DATE plus 3 months.
select
	o_orderpriority,
	count(*) as order_count
from
	orders
where
	o_orderdate >= :DATE
	and o_orderdate < :DATE_END
	and exists (
		select
			*
		from
			lineitem
		where
			l_orderkey = o_orderkey
			and l_commitdate < l_receiptdate
	)
group by
	o_orderpriority
order by
	o_orderpriority
