// Package release holds no code, only the tests that the project can be
// installed and run the way its pages say: every command printed by the
// README, the docs, the chart's notes, the CI recipe and the web pages is
// one the built binaries accept, and (with INCIDENTLIB_INSTALL_TESTS=1) the
// documented go install works from a module proxy.
package release
