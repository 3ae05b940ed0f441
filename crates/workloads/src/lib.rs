//! bakeoff-workloads: what is sent to the server, over the load engine. `kv` speaks
//! memcached's text protocol (get, set, add, delete, multi-get) with seeded key and value
//! generators and a check of every value read back.

pub mod kv;
