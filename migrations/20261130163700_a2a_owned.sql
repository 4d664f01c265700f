-- Which caller (JWT `sub`) created each A2A task and context through the bridge: the bridge calls
-- an agent with its registrant's headers for every caller, so the agent cannot tell them apart.
-- `kind` is `task` or `context`; removed with their agent.
CREATE TABLE a2a_owned (
    agent_id   TEXT NOT NULL REFERENCES a2a_agents (agent_id) ON DELETE CASCADE,
    kind       TEXT NOT NULL,
    id         TEXT NOT NULL,
    caller     TEXT NOT NULL,
    created_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (agent_id, kind, id)
);
