-- The filesystem roots each agent exposes to the servers it owns, in the agent's order.
CREATE TABLE roots (
    agent_id TEXT NOT NULL,
    position INTEGER NOT NULL,
    uri      TEXT NOT NULL,
    name     TEXT NOT NULL,
    PRIMARY KEY (agent_id, position)
);
