-- The 2025-11-25 sessions of /mcp, shared by replicas: any replica that gets a request of a
-- session it has not seen restores it from here (replaying the client's initialize to a fresh
-- session worker under the same id). `agent_id` is the agent whose token opened it (NULL only
-- until the opener's answer has gone out); `uris` (a JSON array) and `log_level` are what it
-- asked for, so the replica holding its GET stream sends it what it subscribed to;
-- `stream_replica` is that replica (the server's requests go out there, and the client's answers
-- to them are relayed there from the replica they reach). Times are
-- seconds since the epoch on the database's clock; a session unused for longer than its idle
-- timeout is gone. Plain SQL that SQLite and Postgres both run.
CREATE TABLE mcp_sessions (
    session_id TEXT PRIMARY KEY NOT NULL,
    agent_id   TEXT,
    state      TEXT NOT NULL,
    uris       TEXT NOT NULL DEFAULT '[]',
    log_level  TEXT,
    stream_replica TEXT,
    created_at DOUBLE PRECISION NOT NULL,
    used_at    DOUBLE PRECISION NOT NULL
);
CREATE INDEX mcp_sessions_agent ON mcp_sessions (agent_id, used_at);
CREATE INDEX mcp_sessions_used ON mcp_sessions (used_at);
