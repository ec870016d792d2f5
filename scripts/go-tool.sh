#!/usr/bin/env bash
# go-tool.sh installs one Go command at a pinned version through the Go
# module proxy (go install), caches it outside the repository keyed by its
# module path and version, and prints the path of the binary:
#
#   HELM=$(scripts/go-tool.sh helm.sh/helm/v3/cmd/helm@v3.22.0)
#
# ${XDG_CACHE_HOME:-$HOME/.cache}/incidentlib/tools/<package>@<version>/<name>
# A second run finds it there and builds nothing. Progress and the time a
# cold build took go to stderr; stdout carries only the path.
set -euo pipefail
spec="${1:?usage: go-tool.sh PACKAGE@VERSION}"
pkg="${spec%@*}"
ver="${spec##*@}"
[ "$pkg" != "$spec" ] && [ -n "$ver" ] || { echo "go-tool: name a version: PACKAGE@VERSION" >&2; exit 2; }
name="${pkg##*/}"
# A package path ending in a major-version element (…/goreleaser/v2) names
# its command by the element before.
case "$name" in v[0-9]*) name="${pkg%/*}"; name="${name##*/}" ;; esac
key=$(printf '%s@%s' "$pkg" "$ver" | tr '/' '_')
dir="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/incidentlib/tools/$key"
if [ -f "$dir/$name" ] && [ -x "$dir/$name" ]; then
	echo "go-tool: $spec cached in $dir" >&2
	echo "$dir/$name"
	exit 0
fi
mkdir -p "$dir.tmp"
start=$SECONDS
# Outside any module, so the tool's own go.mod decides its dependencies.
(cd "$dir.tmp" && GOBIN="$dir.tmp" GOFLAGS= go install "$spec") >&2
[ -x "$dir.tmp/$name" ] || { echo "go-tool: go install $spec made no $name" >&2; exit 1; }
rm -rf "$dir"
mv "$dir.tmp" "$dir"
echo "go-tool: built $spec in $((SECONDS - start)) s" >&2
echo "$dir/$name"
