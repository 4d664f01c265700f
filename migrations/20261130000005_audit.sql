-- The audit log: who registered, changed or removed which server or A2A agent, and when.
CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,            -- seconds since the epoch
    actor TEXT NOT NULL,         -- the agent (token `sub`) that made the change
    action TEXT NOT NULL,        -- server.register, server.update, server.unregister, agent.register, ...
    target TEXT NOT NULL,        -- the server or agent id
    detail TEXT NOT NULL DEFAULT ''
);
