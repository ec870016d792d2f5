// Package vocabulary holds the library's controlled vocabulary as shipped.
package vocabulary

import _ "embed"

// YAML is vocabulary.yaml, the controlled vocabulary.
//
//go:embed vocabulary.yaml
var YAML []byte

// FileName is how problems in the shipped vocabulary are reported.
const FileName = "vocabulary/vocabulary.yaml"
