// Package incidentlib is the domain of the Incident Library: the case, the
// controlled vocabulary, the questions asked of a library (queries, filters,
// similar cases, topics) and the one error type every protocol maps.
//
// It imports no other package of this module. Loading and validating a
// corpus lives in package corpus; search lives in package engine; each
// protocol (HTML, JSON, MCP) and kubegap has a package of its own that speaks
// to the others only in the terms defined here.
package incidentlib
