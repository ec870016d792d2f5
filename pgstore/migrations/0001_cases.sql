-- The shared library: case files as YAML, each write numbered from one
-- sequence so that replicas catch up by asking for what came after the last
-- number they saw. Writers take one advisory lock per transaction, so
-- numbers are committed in order and none is skipped by a reader.
CREATE SEQUENCE change_seq;

CREATE TABLE vocabulary (
	only_row     boolean PRIMARY KEY DEFAULT true CHECK (only_row),
	content      bytea NOT NULL,
	content_hash text NOT NULL,
	seq          bigint NOT NULL DEFAULT nextval('change_seq'),
	updated_at   timestamptz NOT NULL DEFAULT now(),
	updated_by   text NOT NULL
);

CREATE TABLE cases (
	id           text PRIMARY KEY,
	file_name    text NOT NULL,
	content      bytea NOT NULL,
	content_hash text NOT NULL,
	version      integer NOT NULL,
	seq          bigint NOT NULL DEFAULT nextval('change_seq'),
	updated_at   timestamptz NOT NULL DEFAULT now(),
	updated_by   text NOT NULL
);
CREATE INDEX cases_seq ON cases (seq);

-- Every version of every case, so a change can be seen as a diff and
-- nothing is lost without a trace.
CREATE TABLE case_versions (
	case_id      text NOT NULL,
	version      integer NOT NULL,
	content      bytea NOT NULL,
	content_hash text NOT NULL,
	created_at   timestamptz NOT NULL DEFAULT now(),
	created_by   text NOT NULL,
	PRIMARY KEY (case_id, version)
);

CREATE TABLE audit_log (
	id     bigserial PRIMARY KEY,
	at     timestamptz NOT NULL DEFAULT now(),
	actor  text NOT NULL,
	action text NOT NULL,
	object text NOT NULL,
	detail text NOT NULL DEFAULT ''
);

CREATE FUNCTION notify_change() RETURNS trigger AS $$
BEGIN
	PERFORM pg_notify('incidentlib_changes', NEW.seq::text);
	RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER cases_changed AFTER INSERT OR UPDATE ON cases
	FOR EACH ROW EXECUTE FUNCTION notify_change();
CREATE TRIGGER vocabulary_changed AFTER INSERT OR UPDATE ON vocabulary
	FOR EACH ROW EXECUTE FUNCTION notify_change();
