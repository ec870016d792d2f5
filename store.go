package incidentlib

import "context"

// StoredCase is one case file as a shared store keeps it: the same YAML a
// case directory holds, so one validator serves files and store alike.
type StoredCase struct {
	ID      string
	Name    string // file name, for problems: "IL-0561.yaml"
	Content []byte
	Hash    string // hex SHA-256 of Content
	Seq     int64  // the change that last wrote it
	// Team is the team a private case belongs to; "" for a public case.
	Team string
	// Withdrawn marks a change that takes the case out of the library (a
	// maintainer withdrew it); its Content is empty.
	Withdrawn bool
}

// CaseFeed is a shared store of case files that replicas follow: each keeps
// its own index, built from a snapshot and kept current from the changes
// after it. Package pgstore implements it over PostgreSQL.
type CaseFeed interface {
	// Snapshot returns the vocabulary file and every case, with the
	// sequence number they are current to.
	Snapshot(ctx context.Context) (vocabulary []byte, cases []StoredCase, seq int64, err error)
	// Since returns the cases written after seq, in order (a withdrawn
	// case with Withdrawn set), and the sequence number the answer is
	// current to.
	Since(ctx context.Context, seq int64) ([]StoredCase, int64, error)
	// Wait returns when the store may have changed since the last call, or
	// when ctx ends. It may return early; callers ask Since either way.
	Wait(ctx context.Context) error
}
