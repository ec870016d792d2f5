// Package cases holds the library's shipped corpus: one YAML file per case,
// embedded in the binary so incidentlib runs with no files beside it.
package cases

import "embed"

// FS holds every shipped case file at its root (IL-0561.yaml, …).
//
//go:embed *.yaml
var FS embed.FS
