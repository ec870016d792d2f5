// Package vocabulary holds the library's controlled vocabulary as shipped.
package vocabulary

import _ "embed"

// YAML is vocabulary.yaml, the controlled vocabulary.
//
//go:embed vocabulary.yaml
var YAML []byte

// FileName is how problems in the shipped vocabulary are reported.
const FileName = "vocabulary/vocabulary.yaml"

// AliasesYAML is aliases.yaml: other names of the vocabulary's terms.
//
//go:embed aliases.yaml
var AliasesYAML []byte

// AliasesFileName is how problems in the shipped aliases are reported.
const AliasesFileName = "vocabulary/aliases.yaml"

// SynonymsYAML is synonyms.yaml: synonyms and abbreviations search expands
// queries with.
//
//go:embed synonyms.yaml
var SynonymsYAML []byte

// SynonymsFileName is how problems in the shipped synonyms are reported.
const SynonymsFileName = "vocabulary/synonyms.yaml"

// SignaturesYAML is signatures.yaml: the error messages, statuses and
// alert texts search recognises in a pasted query.
//
//go:embed signatures.yaml
var SignaturesYAML []byte

// SignaturesFileName is how problems in the shipped signatures are reported.
const SignaturesFileName = "vocabulary/signatures.yaml"
