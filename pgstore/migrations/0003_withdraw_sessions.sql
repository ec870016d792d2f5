-- Maintainers may withdraw a published case: its row stays (so replicas
-- that follow the change feed see it go) but it is served nowhere, and a
-- purge can empty it and its old versions.
ALTER TABLE cases ADD COLUMN withdrawn_at timestamptz;
ALTER TABLE cases ADD COLUMN withdrawn_by text NOT NULL DEFAULT '';
ALTER TABLE cases ADD COLUMN withdraw_reason text NOT NULL DEFAULT '';
-- The team that published a public case owns it (with the maintainers);
-- '' for the shipped corpus and imported files, which maintainers own.
ALTER TABLE cases ADD COLUMN owner_team text NOT NULL DEFAULT '';

-- A maintainer looks after the whole library, across teams.
ALTER TABLE accounts DROP CONSTRAINT accounts_role_check;
ALTER TABLE accounts ADD CONSTRAINT accounts_role_check CHECK (role IN ('reader', 'submitter', 'reviewer', 'admin', 'maintainer'));

-- A session is bound to the token that signed it in: it dies with it.
ALTER TABLE tokens ADD COLUMN parent_id bigint REFERENCES tokens (id);
CREATE INDEX tokens_parent ON tokens (parent_id);
CREATE INDEX tokens_account ON tokens (account_id);

-- Each team's private cases draw from a block of IDs of their own, so a
-- team's numbers say nothing of how many cases other teams have.
CREATE TABLE team_id_blocks (
	team    text PRIMARY KEY,
	from_id integer NOT NULL UNIQUE,
	to_id   integer NOT NULL
);
