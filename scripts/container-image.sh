#!/usr/bin/env bash
# container-image.sh builds the incidentlib image from the repository's
# Dockerfile with podman and tests it: its configuration (non-root user,
# the entrypoint, nothing in it but the binary), then the server in it
# (/readyz, one API answer).
#
# CI reaches the Go module proxy but no container registry, so it cannot
# pull the Dockerfile's golang build image: it builds the static binary
# here and packs it with the Dockerfile's "prebuilt" stage (same base,
# user, entrypoint and command as the full build).
#
# Where containers can run, the image is started with a read-only root
# file system. Where they cannot (a sandbox that forbids the setrlimit
# calls every OCI runtime makes, as on our CI machines), the image's own
# file system is mounted and the binary run in it under chroot as user
# 65532 instead, and the script says which it did.
set -euo pipefail
cd "$(dirname "$0")/.."
IMAGE="${IMAGE:-localhost/incidentlib:ci}"
PORT="${PORT:-18741}"
ctx=$(mktemp -d)
pid=""
mounted=""
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	podman rm -f incidentlib-ci >/dev/null 2>&1 || true
	[ -n "$mounted" ] && podman image umount "$IMAGE" >/dev/null 2>&1 || true
	rm -rf "$ctx"
}
trap cleanup EXIT
fail() { echo "container-image: $*" >&2; exit 1; }

CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$ctx/incidentlib" ./cmd/incidentlib
podman build --quiet -f Dockerfile --target prebuilt --build-arg BINARY=incidentlib -t "$IMAGE" "$ctx" >/dev/null
echo "container-image: built $IMAGE ($(podman image inspect "$IMAGE" --format '{{.Size}}') bytes)"

user=$(podman image inspect "$IMAGE" --format '{{.Config.User}}')
entry=$(podman image inspect "$IMAGE" --format '{{json .Config.Entrypoint}}')
cmd=$(podman image inspect "$IMAGE" --format '{{json .Config.Cmd}}')
[ "$user" = "65532:65532" ] || fail "runs as user '$user', want 65532:65532"
[ "$entry" = '["/incidentlib"]' ] || fail "entrypoint $entry, want [\"/incidentlib\"]"
case "$cmd" in *'"--data=-"'*'--addr=0.0.0.0:8080'*|*'--addr=0.0.0.0:8080'*'"--data=-"'*) ;; *) fail "command $cmd: want serve on 0.0.0.0:8080 with --data=- (nothing written to the root file system)";; esac

root=$(podman image mount "$IMAGE")
mounted=1
files=$(cd "$root" && find . -mindepth 1 | sort | tr '\n' ' ')
[ "$files" = "./incidentlib " ] || fail "the image holds $files; want only ./incidentlib"
echo "container-image: user $user, entrypoint $entry, command $cmd, contents: $files"

check_server() {
	for _ in $(seq 1 120); do
		curl -fsS "http://127.0.0.1:$PORT/readyz" >/dev/null 2>&1 && break
		sleep 0.5
	done
	curl -fsS "http://127.0.0.1:$PORT/healthz" | grep -q ok || fail "/healthz did not answer ok"
	curl -fsS "http://127.0.0.1:$PORT/readyz" | grep -q ready || fail "/readyz did not answer ready"
	curl -fsS "http://127.0.0.1:$PORT/api/v1/cases/IL-0561" | grep -q '"id":"IL-0561"' || fail "/api/v1/cases/IL-0561 did not answer the case"
	echo "container-image: /healthz ok, /readyz ready, /api/v1/cases/IL-0561 answered"
}

if out=$(podman run -d --name incidentlib-ci --read-only -p "127.0.0.1:$PORT:8080" "$IMAGE" 2>&1); then
	echo "container-image: started the image with podman (read-only root file system)"
	check_server
else
	echo "container-image: containers cannot run on this machine: ${out##*Error: }" >&2
	echo "container-image: SKIPPING podman run; running the image's file system under chroot as 65532:65532 instead" >&2
	before=$(cd "$root" && find . | sort | md5sum)
	chroot --userspec=65532:65532 "$root" /incidentlib serve --addr="127.0.0.1:$PORT" --data=- --log-level=warn &
	pid=$!
	check_server
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=""
	after=$(cd "$root" && find . | sort | md5sum)
	[ "$before" = "$after" ] || fail "the server wrote to the image's root file system"
	echo "container-image: it wrote nothing to the image's file system"
fi
