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

.PHONY: all build demo test peers sysdeps bench fuzz lint clean

all: build

build:
	@mkdir -p $(BIN)
	$(GO) build -ldflags '$(LDFLAGS)' -o $(MCPTAPE) ./cmd/mcptape

## demo: build, then run the main job on the embedded reference server.
demo: build
	@bash scripts/demo.sh $(MCPTAPE)

## peers: install the pinned real MCP peers (npm and Go) and the conformance suite
## (Linux x86-64 only) used by end-to-end tests.
peers:
	$(GO) run ./internal/peertest/cmd/installpeers

## sysdeps: Debian packages the tests use (headless Chromium renders the HTML
## report). Installed only when missing and when apt-get can run.
sysdeps:
	@bash scripts/sysdeps.sh chromium

## test: the whole suite, with the race detector, end-to-end tests included.
test: peers sysdeps
	$(GO) vet ./...
	$(GO) test -race -timeout $(TEST_TIMEOUT) ./...

## bench: every performance target, each measured beside its baseline.
bench: peers
	@bash scripts/sysdeps.sh wrk zstd
	@bash scripts/bench.sh

## fuzz: a short run of every fuzz target.
fuzz:
	@bash scripts/fuzz.sh $(FUZZTIME)

lint:
	$(GO) vet ./...
	GOBIN=$(CURDIR)/$(BIN) $(GO) install honnef.co/go/tools/cmd/staticcheck@$(STATICCHECK_VERSION)
	$(BIN)/staticcheck ./...

clean:
	rm -rf $(BIN) .cache demo-out
