-- When each replica last reached NATS (seconds since the epoch on the database's clock; NULL
-- while it never has): written with its row while its bus is connected. A replica without the
-- bus lets its servers go only when another live replica reached NATS well after it lost it
-- (it alone is cut off); when NATS is down for all, every replica keeps serving what it holds
-- (registry/balance.rs). Plain SQL for both backends.
ALTER TABLE replicas ADD COLUMN bus_at DOUBLE PRECISION;
