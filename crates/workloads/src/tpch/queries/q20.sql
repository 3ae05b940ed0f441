-- TPC-H-derived Q20, potential part promotion. :DATE_END is :DATE plus 1 year.
select
	s_name,
	s_address
from
	supplier,
	nation
where
	s_suppkey in (
		select
			ps_suppkey
		from
			partsupp
		where
			ps_partkey in (
				select
					p_partkey
				from
					part
				where
					p_name like :COLOR_PREFIX
			)
			and ps_availqty > (
				select
					0.5 * sum(l_quantity)
				from
					lineitem
				where
					l_partkey = ps_partkey
					and l_suppkey = ps_suppkey
					and l_shipdate >= :DATE
					and l_shipdate < :DATE_END
			)
	)
	and s_nationkey = n_nationkey
	and n_name = :NATION
order by
	s_name
