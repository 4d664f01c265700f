-- Registered MCP servers: the whole MCPServerConfig (allow lists and secrets included) as JSON,
-- and the agent that registered it. Plain SQL that SQLite and Postgres both run.
CREATE TABLE servers (
    server_id  TEXT PRIMARY KEY NOT NULL,
    owner      TEXT NOT NULL,
    config     TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
