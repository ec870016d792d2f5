# The incidentlib server in an image of one static binary: the corpus and
# vocabulary are compiled in, the search index is built at start in the
# directory --data names (an emptyDir in the Helm chart) or in memory
# (--data -), so the root file system can be read-only.
#
#   docker build -t incidentlib:VERSION .        # or: podman build
#   docker run --read-only -p 8080:8080 incidentlib:VERSION
#
# Probes: GET /healthz (liveness: the process answers) and GET /readyz
# (readiness: the library is loaded); docs/operations.md. The image has no
# shell or HTTP client for a HEALTHCHECK: the orchestrator probes over HTTP.
#
# Stage "prebuilt" packs a binary built beforehand (CGO_ENABLED=0) from
# the build context instead of compiling one, for machines that reach the
# Go module proxy but no container registry (.ci/run):
#   podman build --target prebuilt --build-arg BINARY=path/in/context .

ARG GO_IMAGE=golang:1.26-bookworm

FROM ${GO_IMAGE} AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/incidentlib ./cmd/incidentlib \
 && /out/incidentlib version

# What both ways share: no shell, no package manager, a user that is not
# root, and nothing written outside the data directory.
FROM scratch AS base
LABEL org.opencontainers.image.title="incidentlib" \
      org.opencontainers.image.description="The Incident Library: web pages, JSON API and MCP endpoint" \
      org.opencontainers.image.source="https://github.com/incidentlib/incidentlib"
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/incidentlib"]
CMD ["serve", "--addr=0.0.0.0:8080", "--data=-", "--log-format=json"]

FROM base AS prebuilt
ARG BINARY=incidentlib
COPY --chmod=0555 ${BINARY} /incidentlib

FROM base
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt
COPY --from=build --chmod=0555 /out/incidentlib /incidentlib
