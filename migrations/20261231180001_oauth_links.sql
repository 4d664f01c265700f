-- OAuth authorization links waiting for their person, by their unguessable `state`: what
-- finishing the flow needs (the PKCE verifier, the client registration, the redirect URI and
-- resource asked for), as opaque JSON the upstream layer writes, always sealed in `flow`. Kept in
-- the store so the callback completes on any replica; each is taken (deleted) once. `agent` is
-- the one the link counts against, `grant_agent` whose grant it authorizes ('' the shared one);
-- `registered_at` is the `created_at` of the server the link was made for: a server removed and
-- registered again under the same id is not that server. No foreign key: a link outlives its
-- server, to say so when opened. Times are the database's clock, the one replicas share.
-- Plain SQL that SQLite and Postgres both run.
CREATE TABLE oauth_links (
    state         TEXT PRIMARY KEY NOT NULL,
    server_id     TEXT NOT NULL,
    grant_agent   TEXT NOT NULL,
    agent         TEXT NOT NULL,
    registered_at DOUBLE PRECISION NOT NULL,
    flow          TEXT NOT NULL,
    created_at    DOUBLE PRECISION NOT NULL,
    expires_at    DOUBLE PRECISION NOT NULL
);
CREATE INDEX oauth_links_agent ON oauth_links (agent, created_at);
CREATE INDEX oauth_links_expires ON oauth_links (expires_at);
