-- Resource subscriptions, per agent; removed with their server.
CREATE TABLE subscriptions (
    agent_id   TEXT NOT NULL,
    server_id  TEXT NOT NULL REFERENCES servers (server_id) ON DELETE CASCADE,
    uri        TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (agent_id, server_id, uri)
);
CREATE INDEX subscriptions_by_server ON subscriptions (server_id, uri);
