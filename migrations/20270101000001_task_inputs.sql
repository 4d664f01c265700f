-- The input a `/mcp` client's task waits on (the 2026-07-28 tasks extension: `tasks/get` shows it in
-- `inputRequests`, `tasks/update` answers it), kept here so that every replica can show and take it, not only
-- the one running the task's call: `inputs` the server's requests the task waits on (a JSON array of
-- {key, kind, params}), `answers` the client's answers that replica has not taken yet (a JSON object by key).
-- Both NULL while the task waits on nothing. Plain SQL for both backends.
ALTER TABLE tasks ADD COLUMN inputs TEXT;
ALTER TABLE tasks ADD COLUMN answers TEXT;
