-- Who sees what: access policies and toolsets defined through the API, each a JSON document
-- (the REST body) under its name. Those of the config file are not stored. Plain SQL that
-- SQLite and Postgres both run.
CREATE TABLE policies (
    name TEXT PRIMARY KEY NOT NULL,
    body TEXT NOT NULL
);
CREATE TABLE toolsets (
    name TEXT PRIMARY KEY NOT NULL,
    body TEXT NOT NULL
);
