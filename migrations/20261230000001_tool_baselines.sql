-- Tool pinning: the servers whose first listing has been pinned. A tool that appears in a later
-- listing is new to the bridge: announced, and held back under quarantine. A server pinned
-- before this table existed has had its first listing. Removed with its server.
CREATE TABLE tool_baselines (
    server_id TEXT PRIMARY KEY REFERENCES servers (server_id) ON DELETE CASCADE,
    listed_at DOUBLE PRECISION NOT NULL
);
INSERT INTO tool_baselines (server_id, listed_at)
    SELECT server_id, MIN(pinned_at) FROM tool_pins GROUP BY server_id;
