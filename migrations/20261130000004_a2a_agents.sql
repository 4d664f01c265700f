-- Registered A2A agents: where they are, the headers to send (secret values), the card as last
-- fetched, and the agent that registered them.
CREATE TABLE a2a_agents (
    agent_id   TEXT PRIMARY KEY NOT NULL,
    owner      TEXT NOT NULL,
    url        TEXT NOT NULL,
    headers    TEXT NOT NULL,
    card       TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    updated_at DOUBLE PRECISION NOT NULL
);
