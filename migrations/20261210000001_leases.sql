-- Which replica runs each server: a lease it renews, taken over by another replica once it has
-- expired. Times are seconds since the epoch on the database's clock, the one clock replicas
-- share. Removed with their server. Plain SQL that SQLite and Postgres both run.
CREATE TABLE leases (
    server_id   TEXT PRIMARY KEY NOT NULL REFERENCES servers (server_id) ON DELETE CASCADE,
    replica     TEXT NOT NULL,
    expires_at  DOUBLE PRECISION NOT NULL,
    acquired_at DOUBLE PRECISION NOT NULL
);
CREATE INDEX leases_by_replica ON leases (replica);
