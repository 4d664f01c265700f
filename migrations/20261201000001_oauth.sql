-- OAuth grants to upstream servers: the client registration and the credentials (tokens) the
-- bridge holds for a server, shared (`agent` '') or for one agent (its JWT `sub`) of a
-- `per_agent` server. Both are opaque JSON written by the upstream layer, always sealed;
-- removed with their server.
CREATE TABLE oauth_grants (
    server_id   TEXT NOT NULL REFERENCES servers (server_id) ON DELETE CASCADE,
    agent       TEXT NOT NULL DEFAULT '',
    client      TEXT,
    credentials TEXT,
    updated_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (server_id, agent)
);
