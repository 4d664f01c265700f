-- The trace a task was created in (OpenTelemetry, issue 41): its W3C context as a JSON object of text fields
-- (`traceparent`, and `tracestate` and `baggage` when set), so that a task polled again after a restart, or taken
-- over by another replica, runs in a span linked to it. NULL when no trace was exported as it was created. Plain SQL
-- for both backends.
ALTER TABLE tasks ADD COLUMN trace TEXT;
