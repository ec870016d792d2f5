#!/usr/bin/env bash
# kube-test-binaries.sh builds the kube-apiserver and etcd binaries that
# kubegap's integration suite runs on loopback, and prints the directory
# that holds them:
#
#   KUBEGAP_KUBE_BIN=$(scripts/kube-test-binaries.sh)
#   KUBEGAP_APISERVER_TESTS=1 KUBEGAP_KUBE_BIN=$KUBEGAP_KUBE_BIN \
#     go test -run APIServer -v ./kubegap/cluster
#
# Both are built from source through the Go module proxy, so CI needs no
# other download: k8s.io/kubernetes at KUBE_VERSION, with every staging
# module it lists (k8s.io/api, k8s.io/apiserver, ...) replaced by the
# published k8s.io/* release of the same minor and patch (v0.X.Y for
# v1.X.Y), and go.etcd.io/etcd/server/v3 at ETCD_VERSION, whose module root
# is etcd's main package.
#
# The binaries are cached outside the repository, keyed by version:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/incidentlib/kube/v<KUBE>-etcd-v<ETCD>/
# A second run finds them there and builds nothing. Nothing here is ever
# committed. Progress goes to stderr; stdout carries only the directory.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.37.2}"
ETCD_VERSION="${ETCD_VERSION:-3.7.3}"
STAGING_VERSION="0.${KUBE_VERSION#1.}"

cache="${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/incidentlib/kube/v${KUBE_VERSION}-etcd-v${ETCD_VERSION}"
# A cached binary is a regular executable file. An earlier version of this
# script moved etcd's build directory into the cache in place of the
# binary; test -x passes on a directory, exec does not, so such an entry
# is removed and built again.
usable() { [ -f "$1" ] && [ -x "$1" ]; }
for b in kube-apiserver etcd; do
	if [ -e "$cache/$b" ] && ! usable "$cache/$b"; then
		echo "kube-test-binaries: $cache/$b is not an executable file; building it again" >&2
		rm -rf "${cache:?}/$b"
	fi
done
if usable "$cache/kube-apiserver" && usable "$cache/etcd"; then
	echo "kube-test-binaries: cached in $cache" >&2
	echo "$cache"
	exit 0
fi
mkdir -p "$cache"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# Plain go build flags, so that the k8s.io/* packages the repository's own
# tests compile (client-go, apimachinery, api at the same release) come
# from the build cache this script fills.
export GOFLAGS="-mod=mod"

log() { printf 'kube-test-binaries: %s (%ss)\n' "$1" "$SECONDS" >&2; }

if ! usable "$cache/kube-apiserver"; then
	log "building kube-apiserver v$KUBE_VERSION (staging modules v$STAGING_VERSION)"
	mkdir -p "$work/kube"
	cd "$work/kube"
	go mod init kubetestbinaries/kube >/dev/null 2>&1
	# The staging modules are the replace lines of k8s.io/kubernetes' own
	# go.mod that point into ./staging; read them rather than keep a list
	# that goes stale with each release.
	gomod=$(go mod download -json "k8s.io/kubernetes@v$KUBE_VERSION" |
		sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
	[ -n "$gomod" ] || { echo "kube-test-binaries: cannot download k8s.io/kubernetes v$KUBE_VERSION" >&2; exit 1; }
	staging=$(sed -n 's#^[[:space:]]*\(k8s\.io/[A-Za-z0-9._-]*\) => \./staging/.*#\1#p' "$gomod")
	[ -n "$staging" ] || { echo "kube-test-binaries: no staging modules in $gomod" >&2; exit 1; }
	args=()
	for m in $staging; do args+=("-replace=$m=$m@v$STAGING_VERSION"); done
	go mod edit "${args[@]}" "-require=k8s.io/kubernetes@v$KUBE_VERSION"
	cat >tools.go <<-'EOF'
	//go:build tools

	package tools

	import _ "k8s.io/kubernetes/cmd/kube-apiserver"
	EOF
	go mod tidy -e >&2 2>&1 || true
	go build -ldflags=-s -o "$work/kube-apiserver" k8s.io/kubernetes/cmd/kube-apiserver
	mv "$work/kube-apiserver" "$cache/kube-apiserver"
	log "kube-apiserver done"
fi

if ! usable "$cache/etcd"; then
	log "building etcd v$ETCD_VERSION"
	mkdir -p "$work/etcd"
	cd "$work/etcd"
	go mod init kubetestbinaries/etcd >/dev/null 2>&1
	go mod edit "-require=go.etcd.io/etcd/server/v3@v$ETCD_VERSION"
	cat >tools.go <<-'EOF'
	//go:build tools

	package tools

	import _ "go.etcd.io/etcd/server/v3"
	EOF
	go mod tidy -e >&2 2>&1 || true
	# Not "$work/etcd": that is this build's directory, and go build -o
	# into an existing directory writes the binary inside it.
	go build -ldflags=-s -o "$work/etcd.bin" go.etcd.io/etcd/server/v3
	mv "$work/etcd.bin" "$cache/etcd"
	log "etcd done"
fi

for b in kube-apiserver etcd; do
	usable "$cache/$b" || { echo "kube-test-binaries: $cache/$b is not an executable file after the build" >&2; exit 1; }
done
echo "$cache"
