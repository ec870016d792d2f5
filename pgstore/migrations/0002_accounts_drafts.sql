-- Accounts, their tokens and sessions, drafts under review, and private
-- cases that belong to one team.
ALTER TABLE cases ADD COLUMN team text NOT NULL DEFAULT '';

CREATE TABLE accounts (
	id         bigserial PRIMARY KEY,
	name       text NOT NULL UNIQUE,
	team       text NOT NULL DEFAULT '',
	role       text NOT NULL CHECK (role IN ('reader', 'submitter', 'reviewer', 'admin')),
	created_at timestamptz NOT NULL DEFAULT now(),
	disabled   boolean NOT NULL DEFAULT false
);

-- Only a SHA-256 of each token is kept: tokens are long random strings, so
-- the hash cannot be reversed by guessing.
CREATE TABLE tokens (
	id         bigserial PRIMARY KEY,
	account_id bigint NOT NULL REFERENCES accounts (id),
	hash       text NOT NULL UNIQUE,
	kind       text NOT NULL CHECK (kind IN ('api', 'session')),
	label      text NOT NULL DEFAULT '',
	created_at timestamptz NOT NULL DEFAULT now(),
	expires_at timestamptz NOT NULL,
	revoked_at timestamptz
);

CREATE TABLE drafts (
	id          bigserial PRIMARY KEY,
	case_id     text NOT NULL DEFAULT '',
	private     boolean NOT NULL DEFAULT false,
	team        text NOT NULL DEFAULT '',
	content     bytea NOT NULL,
	state       text NOT NULL CHECK (state IN ('draft', 'submitted', 'published', 'returned')),
	author      text NOT NULL,
	reviewer    text NOT NULL DEFAULT '',
	review_note text NOT NULL DEFAULT '',
	created_at  timestamptz NOT NULL DEFAULT now(),
	updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX drafts_team_state ON drafts (team, state);
