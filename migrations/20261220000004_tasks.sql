-- Tasks: tool calls run asynchronously (POST /v1/tools/call with `task`, or a task-augmented
-- `tools/call` on /mcp). A record outlives a restart: `upstream_task_id` set means the upstream
-- runs it (polled again after a restart); unset means this bridge ran it, and a restart ends it
-- `failed`. `replica` is the bridge that runs or polls it; the row goes at `expires_at`.
CREATE TABLE tasks (
    task_id          TEXT PRIMARY KEY,
    agent_id         TEXT NOT NULL,
    req_id           TEXT NOT NULL,
    name             TEXT NOT NULL,
    server_id        TEXT NOT NULL,
    tool             TEXT NOT NULL,
    status           TEXT NOT NULL,
    status_message   TEXT NOT NULL,
    upstream_task_id TEXT,
    replica          TEXT NOT NULL,
    result           TEXT,
    error_code       TEXT,
    ttl_ms           BIGINT NOT NULL,
    poll_interval_ms BIGINT NOT NULL,
    created_at       DOUBLE PRECISION NOT NULL,
    updated_at       DOUBLE PRECISION NOT NULL,
    expires_at       DOUBLE PRECISION NOT NULL
);
CREATE INDEX tasks_agent ON tasks (agent_id, created_at);
CREATE INDEX tasks_expires ON tasks (expires_at);
CREATE INDEX tasks_replica ON tasks (replica, status);
