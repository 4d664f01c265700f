-- Calls held for a person's approval (a policy's `approve` rule). The call's task (in `tasks`,
-- status `input_required`, `replica` '' while no replica runs it) holds the caller's side; this row
-- holds what an approval runs: the caller's identity (its roles and claims, as the policies that
-- let it see the tool match them), the tool, the arguments and their hash. `state` moves from
-- `held` to `approved`, `denied` or `expired` once, by a conditional UPDATE: one decision wins.
-- Plain SQL for both backends.
CREATE TABLE approvals (
    task_id        TEXT PRIMARY KEY,
    caller         TEXT NOT NULL,
    identity       TEXT NOT NULL,
    tool           TEXT NOT NULL,
    toolset        TEXT NOT NULL,
    arguments      TEXT NOT NULL,
    args_sha256    TEXT NOT NULL,
    timeout        DOUBLE PRECISION,
    policy         TEXT NOT NULL,
    policy_version TEXT NOT NULL,
    approvers      TEXT NOT NULL,
    state          TEXT NOT NULL,
    decided_by     TEXT NOT NULL,
    created_at     DOUBLE PRECISION NOT NULL,
    expires_at     DOUBLE PRECISION NOT NULL
);
CREATE INDEX approvals_state ON approvals (state, expires_at);
-- The roles of the agents that opened an event stream, so that a held call can be announced to
-- every agent its approvers name, on whichever replica its stream is.
CREATE TABLE agent_roles (
    agent_id TEXT PRIMARY KEY,
    roles    TEXT NOT NULL,
    seen_at  DOUBLE PRECISION NOT NULL
);
