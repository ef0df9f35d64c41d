# otelcol-sentryprofile: build, run and test the collector distribution.
#
# A fresh machine needs only Go (and node/npm and Debian's chromium for the
# real-SDK e2e test): every other tool is installed at a pinned version into
# ./bin by the target that needs it, and the SDKs' npm packages into
# node_modules beside their programs under e2e/.

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := build

GO          ?= go
OCB_VERSION := v0.165.0
BIN_DIR     := $(CURDIR)/bin
OCB         := $(BIN_DIR)/builder
GOLANGCI_LINT_VERSION := v2.15.0
GOLANGCI_LINT := $(BIN_DIR)/golangci-lint
DIST_DIR    := $(CURDIR)/_build
DIST_NAME   := otelcol-sentryprofile
COLLECTOR   := $(BIN_DIR)/$(DIST_NAME)
SENTRYPROF  := $(BIN_DIR)/sentryprof
CONFIG      ?= config.yaml
FEATURE_GATES := --feature-gates=service.profilesSupport

# Flags for the unit and integration tests. The race detector is on: the
# receiver and exporter are concurrent servers, and measured on 2 cores the
# whole module takes under 3 minutes with it (16 s without, warm cache).
# `make test GOTEST_FLAGS=` turns it off.
GOTEST_FLAGS ?= -race
# Time each fuzz target runs in `make fuzz`, and the packages searched for
# targets.
FUZZTIME ?= 10s
# Bound on minimizing each new fuzz input: the HTTP handler target's coverage
# is not a pure function of its input (net/http goroutines), and unbounded
# minimization stalls it at 0 execs/s.
FUZZMINIMIZE ?= 200x
FUZZ_PKGS ?= ./...
# Extra flags for golangci-lint in `make lint`, e.g.
# LINT_FLAGS=--new-from-rev=main to see only what a branch adds.
LINT_FLAGS ?=
# E2E=1 makes the real-SDK test mandatory (CI); unset, `make test` runs it
# when node, npm and chromium are installed and says so when they are not.
E2E ?=
# The real-SDK clients' npm directories: `npm ci` runs in each when its
# lockfile is newer than its installed node_modules.
E2E_NPM_DIRS := e2e/node e2e/node10 e2e/node9 e2e/node8 e2e/browser e2e/symbolication e2e/otelnode
E2E_NPM_STAMPS := $(addsuffix /node_modules/.package-lock.json,$(E2E_NPM_DIRS))
# The per-client table TestSDKs writes and `make e2e` prints.
E2E_TABLE := $(CURDIR)/e2e/.work/sdks.txt

# The container image (deploy/image): the distribution rebuilt static and
# stripped of build paths and ids, put FROM scratch with its default
# configuration and Debian's CA bundle, written as an OCI archive.
DIST_VERSION  := $(shell sed -n 's/^  version: *//p' builder-config.yaml)
IMAGE_REF     ?= $(DIST_NAME):$(DIST_VERSION)
IMAGE_BIN     := $(BIN_DIR)/image/$(DIST_NAME)
IMAGE_ARCHIVE := $(BIN_DIR)/$(DIST_NAME)-oci.tar
IMAGE_DIGEST  := $(BIN_DIR)/$(DIST_NAME)-oci.digest
CA_CERTS      ?= /etc/ssl/certs/ca-certificates.crt

# Everything the distribution is built from: a change to any of these
# rebuilds it, so `make run` never starts a stale binary.
GO_SOURCES := $(shell find . -name '*.go' -not -name '*_test.go' \
	-not -path './_build/*' -not -path './e2e/*' -not -path '*/node_modules/*' 2>/dev/null)
DIST_INPUTS := builder-config.yaml go.mod go.sum $(GO_SOURCES) \
	$(wildcard replacements/*/go.mod replacements/*/go.sum)

.PHONY: bump-collector build run test unit smoke image image-test scale e2e e2e-deps load hostile bench fuzz lint generate clean

## build: install ocb if absent, generate and build the collector and sentryprof into ./bin
build: $(COLLECTOR) $(SENTRYPROF)

$(OCB):
	@mkdir -p $(BIN_DIR)
	GOBIN=$(BIN_DIR) $(GO) install go.opentelemetry.io/collector/cmd/builder@$(OCB_VERSION)

$(COLLECTOR): $(DIST_INPUTS) | $(OCB)
	$(OCB) --config builder-config.yaml
	install -m 0755 $(DIST_DIR)/$(DIST_NAME) $@

$(SENTRYPROF): $(DIST_INPUTS)
	@mkdir -p $(BIN_DIR)
	$(GO) build -trimpath -o $@ ./cmd/sentryprof

## run: build if needed, then start the collector with config.yaml (Sentry receiver on :8000)
run: $(COLLECTOR)
	@mkdir -p data
	$(COLLECTOR) --config $(CONFIG) $(FEATURE_GATES)

## test: lint, unit and integration tests, the built collector's smoke test, the container image's contents, then the real-SDK e2e test
test:
	@start=$$(date +%s); \
	$(MAKE) --no-print-directory lint; \
	$(MAKE) --no-print-directory unit; \
	$(MAKE) --no-print-directory smoke; \
	$(MAKE) --no-print-directory alerts-test; \
	$(MAKE) --no-print-directory image-test; \
	if [ "$(E2E)" = "1" ] || { command -v node && command -v npm && command -v chromium; } >/dev/null 2>&1; then \
		$(MAKE) --no-print-directory e2e; \
	else \
		echo "make test: node/npm/chromium not found, skipping the real-SDK e2e test (install them, or set E2E=1 to make it mandatory)"; \
	fi; \
	echo "make test: passed in $$(( $$(date +%s) - start ))s"

# The e2e package's own switches are cleared so that `go test ./...` stays
# the fast, hermetic part even when the caller exported E2E=1. The deploy
# module runs without -race: nothing in it runs concurrently, the race
# build of the Kubernetes API types costs minutes, and image-test then
# reuses this build.
unit:
	env -u E2E -u LOAD -u HOSTILE -u OTELCOL_BIN $(GO) test $(GOTEST_FLAGS) ./...
	cd compat/pyroscope/v04 && env -u E2E -u LOAD -u OTELCOL_BIN $(GO) test $(GOTEST_FLAGS) ./...
	cd deploy && env -u IMAGE_ARCHIVE -u SCALE -u OTELCOL_BIN $(GO) test ./...

## smoke: run the built collector with config.yaml and check what it writes, validate every example config, read sentryprof's pprof with go tool pprof
smoke: build
	OTELCOL_BIN=$(COLLECTOR) SENTRYPROF_BIN=$(SENTRYPROF) $(GO) test -count=1 -run '^(TestCollector|TestSentryprof)' -v ./e2e

## alerts-test: a real Prometheus (Debian's prometheus package) scrapes the built collector while envelopes are replayed: every rule of deploy/prometheus/rules.yaml and every panel of deploy/grafana/sentryprofile.json returns data, the alerts that should fire do (skips without prometheus unless REQUIRE_TOOLS=1)
.PHONY: alerts-test
alerts-test: $(COLLECTOR)
	cd deploy && OTELCOL_BIN=$(COLLECTOR) $(GO) test -count=1 -v -run '^TestLive$$' ./prometheus

## image: build the container image (static collector FROM scratch, non-root, default config on 0.0.0.0:8000) to bin/otelcol-sentryprofile-oci.tar without a container daemon; prints its digest
# The binary is linked again from ocb's sources in _build, with no VCS
# stamp and no build id, so that one checkout gives one digest.
image: $(COLLECTOR)
	@mkdir -p $(dir $(IMAGE_BIN))
	cd $(DIST_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o $(IMAGE_BIN) .
	cd deploy && $(GO) run ./cmd/ociimage -binary $(IMAGE_BIN) -config image/config.yaml \
		-cacerts $(CA_CERTS) -ref $(IMAGE_REF) -out $(IMAGE_ARCHIVE) | tee $(IMAGE_DIGEST)

## image-test: build the image, check its contents and configuration (and run it where podman is installed), and that a second build gives the same digest
image-test: image
	@again=$$(mktemp -d); trap 'rm -rf "$$again"' EXIT; \
	(cd $(DIST_DIR) && CGO_ENABLED=0 $(GO) build -trimpath -buildvcs=false -ldflags='-s -w -buildid=' -o "$$again/bin" .); \
	(cd deploy && $(GO) run ./cmd/ociimage -binary "$$again/bin" -config image/config.yaml \
		-cacerts $(CA_CERTS) -ref $(IMAGE_REF) -out "$$again/oci.tar") > "$$again/digest"; \
	if ! cmp -s $(IMAGE_ARCHIVE) "$$again/oci.tar"; then \
		echo "make image-test: a second build differs:"; cat $(IMAGE_DIGEST) "$$again/digest"; exit 1; \
	fi; \
	echo "make image-test: a second build gives the same archive, $$(cut -d' ' -f2 $(IMAGE_DIGEST))"
	cd deploy && IMAGE_ARCHIVE=$(IMAGE_ARCHIVE) IMAGE_DIGEST=$$(cut -d' ' -f2 $(IMAGE_DIGEST)) \
		OTELCOL_BIN=$(COLLECTOR) $(GO) test -count=1 -run '^(TestBuiltImage|TestManifestConfigs)' -v ./image ./kubernetes

## scale: measure span links with two collectors behind HAProxy (round robin, source-address hash, header hash) and real @sentry/node 11 processes, then what a SIGKILLed replica loses, on loopback; prints the tables BENCHMARKS.md records (SCALE_PROCESSES=8)
# Not part of `make test` (about 7 minutes). Installs Debian's haproxy
# when it is missing and this runs as root.
scale: $(COLLECTOR) e2e/node/node_modules/.package-lock.json
	@command -v haproxy >/dev/null 2>&1 || { \
		if [ "$$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends haproxy; \
		else echo "make scale: needs Debian's haproxy (apt-get install haproxy)"; exit 1; fi; }
	cd deploy && SCALE=1 OTELCOL_BIN=$(COLLECTOR) $(GO) test -count=1 -timeout 30m -v -run '^(TestScaleOut|TestReplicaDies)$$' ./scale

## e2e: run every real Sentry SDK (node 8, 9, 10 and 11, browser 10 and 11 in headless Chromium, sentry-go, Debian's sentry-python 1.x under WSGI) against the built collector, then print a per-client table; node 11 and node 9 also through forwarding to a stand-in Sentry; minified browser and Node builds through the symbolication processor; opentelemetry-go and opentelemetry-js exceptions and metrics through the exporter to a stand-in Sentry; each service's time in Pyroscope (or its model) against Sentry's rule
# Clients run four at a time: most of a run is waiting (collector start,
# the SDK's flush, Chromium), so more than the two cores pays.
e2e: $(COLLECTOR) $(E2E_NPM_STAMPS)
	@mkdir -p $(dir $(E2E_TABLE)); rm -f $(E2E_TABLE)
	@status=0; \
	E2E=1 OTELCOL_BIN=$(COLLECTOR) E2E_TABLE=$(E2E_TABLE) $(GO) test -count=1 -timeout 15m -parallel 4 -run '^(TestSDKs|TestSDKSignals|TestForwardRealSDK|TestSymbolicationRealBuilds|TestBridgeRealProducers|TestPyroscopeShowsSentrysTime)$$' -v ./e2e || status=$$?; \
	if [ -f $(E2E_TABLE) ]; then echo; echo "make e2e: per-client results"; cat $(E2E_TABLE); fi; \
	exit $$status

## e2e-deps: install the e2e clients' npm packages from their lockfiles
e2e-deps: $(E2E_NPM_STAMPS)

# npm ci writes node_modules/.package-lock.json last, so its age says
# whether the install is complete and current.
%/node_modules/.package-lock.json: %/package.json %/package-lock.json
	cd $* && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

## load: 30 s load, real-SDK-shaped load, slow-downstream, exporter-fault and SIGKILL tests, then the 5 MB chunk through the built collector vs encoding/json (loopback only)
load: $(COLLECTOR)
	LOAD=1 OTELCOL_BIN=$(COLLECTOR) $(GO) test -count=1 -timeout 20m -v -run 'Load|Exporter(Faults|SIGKILL)' ./reliability
	OTELCOL_BIN=$(COLLECTOR) $(GO) test -run='^$$' -bench='^BenchmarkBuiltCollector$$' -benchtime=3s -benchmem ./benchmarks | $(GO) run ./internal/benchtable -tee

## hostile: attack the built collector with the shapes of the defects found in review (README's four pipelines, examples/readable-frames.yaml, the exporter against a misbehaving Sentry) while correct requests keep arriving: it must stay up, under its RSS bound, answer them in time and lose nothing it answered 200 for
# Not part of `make test`: about three minutes, most of it attacks that
# hold connections or wait for queues (see reliability/README.md).
# The complexity guard (internal/complexityguard) is part of `go test
# ./...`, and so of `make test`.
hostile: $(COLLECTOR)
	HOSTILE=1 OTELCOL_BIN=$(COLLECTOR) $(GO) test -count=1 -timeout 15m -v -run '^TestHostileCollector' ./reliability

## bench: every benchmark, summarised as a table (MB/s, allocs/op, ratio to encoding/json)
bench:
	$(GO) test -run='^$$' -bench=. -benchmem ./... | $(GO) run ./internal/benchtable -tee

## fuzz: run every Fuzz target in the repository for FUZZTIME each
fuzz:
	@list=$$($(GO) test -list '^Fuzz' $(FUZZ_PKGS)); \
	targets=$$(echo "$$list" | awk '/^Fuzz/ { names = names " " $$1 } /^ok / { if (names != "") print $$2 names; names = "" }'); \
	if [ -z "$$targets" ]; then echo "fuzz: no Fuzz targets in $(FUZZ_PKGS)"; exit 0; fi; \
	echo "$$targets" | while read -r pkg names; do \
		for target in $$names; do \
			echo "fuzz: $$pkg $$target ($(FUZZTIME))"; \
			$(GO) test -run='^$$' -fuzz="^$$target\$$" -fuzztime=$(FUZZTIME) -fuzzminimizetime=$(FUZZMINIMIZE) "$$pkg"; \
		done; \
	done

$(GOLANGCI_LINT):
	@mkdir -p $(BIN_DIR)
	GOBIN=$(BIN_DIR) $(GO) install github.com/golangci/golangci-lint/v2/cmd/golangci-lint@$(GOLANGCI_LINT_VERSION)

## lint: gofmt (fails on any unformatted file) and go vet, then golangci-lint (.golangci.yml), on the module and the nested modules
lint: | $(GOLANGCI_LINT)
	@unformatted=$$(gofmt -l $$(find . -name '*.go' -not -path './_build/*' -not -path '*/node_modules/*')); \
	if [ -n "$$unformatted" ]; then echo "gofmt -l reports:"; echo "$$unformatted"; exit 1; fi
	$(GO) vet ./...
	cd compat/pyroscope/v04 && $(GO) vet ./...
	cd deploy && $(GO) vet ./...
	$(GOLANGCI_LINT) run $(LINT_FLAGS) ./...
	cd compat/pyroscope/v04 && $(GOLANGCI_LINT) run $(LINT_FLAGS) ./...
	cd deploy && $(GOLANGCI_LINT) run $(LINT_FLAGS) ./...

## bump-collector: move every collector and contrib module (go.mod files, builder-config.yaml, OCB_VERSION) to one release: make bump-collector COLLECTOR_VERSION=v0.166.0
bump-collector:
	@test -n "$(COLLECTOR_VERSION)" || { echo "make bump-collector: set COLLECTOR_VERSION, e.g. COLLECTOR_VERSION=v0.166.0"; exit 1; }
	$(GO) run ./internal/collectorversion/bump -version $(COLLECTOR_VERSION)
	$(GO) test -count=1 ./internal/collectorversion

## generate: regenerate the components' metadata code with mdatagen (a go tool of this module)
generate:
	$(GO) generate ./...

## clean: remove the generated distribution, ./bin and the default output in ./data
clean:
	rm -rf $(DIST_DIR) $(BIN_DIR) data
