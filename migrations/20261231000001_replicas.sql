-- The replicas that are up: each renews its row with its leases, and deletes it when it stops;
-- servers are spread across the live ones (registry/balance.rs). `joined_at` says since when a
-- replica has been up without a break, so one that comes and goes is not handed servers at
-- once. Times are seconds since the epoch on the database's clock. Plain SQL for both backends.
CREATE TABLE replicas (
    replica    TEXT PRIMARY KEY NOT NULL,
    expires_at DOUBLE PRECISION NOT NULL,
    joined_at  DOUBLE PRECISION NOT NULL
);
