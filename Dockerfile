# syntax=docker/dockerfile:1
#
# mcptape in a container, to run beside an MCP server (see
# deploy/kubernetes/ and docs/many-replicas.md):
#
#   docker build -t mcptape .
#   docker run --rm -v tapes:/tapes -p 127.0.0.1:8931:8931 mcptape \
#     record --upstream http://host.docker.internal:3000/mcp --listen 0.0.0.0:8931 \
#     -o /tapes/api.jsonl.zst --rotate 1h --keep-size 5G
#
# Two stages: a static binary built with the Go toolchain, then an image
# holding nothing else (distroless "static": CA certificates for https
# upstreams, /etc/passwd, tzdata; no shell), run as the distroless
# "nonroot" user (65532). Tapes go to the /tapes volume, owned by that user.

ARG GO_VERSION=1.26
FROM golang:${GO_VERSION}-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION}" -o /out/mcptape ./cmd/mcptape \
 && mkdir -p /out/tapes

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/mcptape /usr/local/bin/mcptape
COPY --from=build --chown=65532:65532 /out/tapes /tapes
USER 65532:65532
VOLUME ["/tapes"]
# 8931: the recording proxy; 9090: --metrics (by convention of the examples)
EXPOSE 8931 9090
ENTRYPOINT ["/usr/local/bin/mcptape"]
CMD ["--help"]
