-- Tool pinning: the digest of each tool's definition as first seen (or last approved), and that
-- definition (canonical JSON), to tell what a later listing changed. Removed with their server.
CREATE TABLE tool_pins (
    server_id  TEXT NOT NULL REFERENCES servers (server_id) ON DELETE CASCADE,
    tool       TEXT NOT NULL,
    digest     TEXT NOT NULL,
    definition TEXT NOT NULL,
    pinned_at  DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (server_id, tool)
);
