# mcptape: build, demo, test, bench, fuzz, lint.
# Everything installs what it needs (Go modules, pinned npm peers) by itself.

GO        ?= go
BIN       := bin
MCPTAPE   := $(BIN)/mcptape
VERSION   ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS   := -X main.version=$(VERSION)
STATICCHECK_VERSION := v0.8.2
# Seconds per fuzz target for 'make fuzz'.
FUZZTIME  ?= 10s
# Test timeout per package.
TEST_TIMEOUT ?= 12m

export MCPTAPE_PEERS_DIR ?= $(CURDIR)/.cache/peers

# The other systems every package must build and vet for ('make cross').
CROSS_TARGETS := darwin/arm64 darwin/amd64 windows/amd64 freebsd/amd64 linux/arm64
# Tests run with the portable fallback paths forced ('make test-portable'):
# transport, internal/rawio, internal/http1 and internal/proc (children
# without a parent-death signal) whole, and of capture and loadgen the tests
# that go through the stdio pipes, the HTTP and WebSocket proxies and client
# connections (their end-to-end tests run the mcptape binary, built without the tag).
PORTABLE_RUN := ^(TestSetRawPortable|TestRunStdio|TestRecorder|TestProgress|TestHTTPLean|TestHTTPPassThrough|TestHTTPStreams|TestHTTPUpstream|TestWSProxy|TestNewWSProxy|TestCancelHTTP|TestCancelStdio|TestGetStream|TestSessionExpiry|TestExactCounts|TestBatches)

.PHONY: all build demo test cross test-portable dist peers sysdeps bench fuzz lint deploy-check clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(MCPTAPE) ./cmd/mcptape

## demo: build, then run the main job on the embedded reference server.
demo: build
	@bash scripts/demo.sh $(MCPTAPE)

## peers: install the pinned real MCP peers (npm and Go), the conformance suite and DuckDB
## (Linux x86-64 only) used by end-to-end tests.
peers:
	$(GO) run ./internal/peertest/cmd/installpeers

## sysdeps: Debian packages the tests use (headless Chromium renders the HTML
## report; zsh and fish check the completion scripts; python3 runs the
## streaming test peer testdata/streampeer). Installed only when
## missing and when apt-get can run.
sysdeps:
	@bash scripts/sysdeps.sh chromium zsh fish python3

## test: the whole suite, with the race detector, end-to-end tests included.
## 'go vet ./...' and 'make cross' (compiling only) run beside the race tests,
## which wait on peers, timers and sockets much of the time; their output
## follows the tests', and any failure fails 'make test'.
test: peers sysdeps
	bash scripts/beside.sh '$(GO) vet ./... && $(MAKE) --no-print-directory cross' \
		$(GO) test -race -timeout $(TEST_TIMEOUT) ./...
	@$(MAKE) --no-print-directory test-portable

## cross: build and vet every package, tests included, for macOS, Windows,
## FreeBSD and Linux on arm64, so that a break there fails here.
cross:
	@for t in $(CROSS_TARGETS); do \
		echo "cross: $$t"; \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) build ./... && \
		GOOS=$${t%/*} GOARCH=$${t#*/} $(GO) vet ./... || exit 1; \
	done

## test-portable: the portable fallback paths that macOS and Windows run
## (no raw pipe I/O, no /proc, no parent-death signal), forced on Linux by
## the mcptape_portable build tag.
test-portable:
	$(GO) test -race -timeout $(TEST_TIMEOUT) -tags mcptape_portable ./transport/ ./internal/rawio/ ./internal/http1/ ./internal/proc/
	$(GO) test -race -timeout $(TEST_TIMEOUT) -tags mcptape_portable -run '$(PORTABLE_RUN)' ./capture/ ./loadgen/

## dist: release binaries for six targets in dist/ (static, stripped,
## -trimpath, named with VERSION), their SHA-256 sums, checked; and a check
## that 'go install .../cmd/mcptape@VERSION' reports its version.
dist:
	@bash scripts/dist.sh $(VERSION) $(GO)
	@bash scripts/install-check.sh $(GO)

## bench: every performance target, each measured beside its baseline.
bench: peers
	@bash scripts/sysdeps.sh wrk zstd
	@bash scripts/bench.sh

## fuzz: a short run of every fuzz target.
fuzz:
	@bash scripts/fuzz.sh $(FUZZTIME)

## deploy-check: build the container image when a container engine runs here;
## in any case lint the Dockerfile with BuildKit's linter and decode the
## Kubernetes manifests strictly into the API's types (deploy/check, a module
## of its own so that its dependencies stay out of mcptape's).
deploy-check:
	@if command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then \
		docker build -t mcptape:check . ; \
	elif command -v podman >/dev/null 2>&1; then \
		podman build -t mcptape:check . ; \
	else echo "deploy-check: no container engine here: the image is not built, only linted"; fi
	cd deploy/check && $(GO) run . ../../Dockerfile ../kubernetes/sidecar.yaml

lint:
	$(GO) vet ./...
	GOBIN=$(CURDIR)/$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(BIN)/staticcheck ./...

clean:
	rm -rf $(BIN) .cache demo-out dist
