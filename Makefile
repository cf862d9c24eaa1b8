# Cairn: a tamper-evident audit chain for LLM calls and a federation that cross-anchors them.

# Versions of the tools the Makefile builds from the Go module proxy.
CONTROLLER_TOOLS_VERSION ?= v0.21.0
GOLANGCI_LINT_VERSION ?= v2.15.0
ENVTEST_K8S_VERSION ?= 1.36.3

LOCALBIN ?= $(CURDIR)/bin
CONTROLLER_GEN ?= $(LOCALBIN)/controller-gen-$(CONTROLLER_TOOLS_VERSION)
GOLANGCI_LINT ?= $(LOCALBIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
CAIRN ?= $(LOCALBIN)/cairn
ENVTEST_ASSETS = $$(KUBE_VERSION=$(ENVTEST_K8S_VERSION) hack/setup-envtest.sh)
# cert-manager's and the Prometheus operator's CRDs, which test/install dry-runs config/ with.
EXTERNAL_CRDS = $$(hack/setup-crds.sh)
# The env file hack/rekor-up.sh writes: REKOR_URL, REKOR_CLI and the rest.
REKOR_ENV = $${CAIRN_REKOR_STATE:-$${TMPDIR:-/tmp}/cairn-rekor-$$(id -u)}/env
# The env file hack/rekor-v2-up.sh writes: REKOR_V2_URL, TSA_URL and the rest.
REKOR_V2_ENV = $${CAIRN_REKOR_V2_STATE:-$${TMPDIR:-/tmp}/cairn-rekor-v2-$$(id -u)}/env
# The env file hack/postgres-up.sh writes: CAIRN_POSTGRES_DSN and the rest.
POSTGRES_ENV = $${CAIRN_POSTGRES_STATE:-$${TMPDIR:-/tmp}/cairn-postgres-$$(id -u)}/env

VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null || echo dev)
LDFLAGS ?= -X github.com/cairn-dev/cairn/internal/version.Version=$(VERSION)

# Bash with pipefail so a failing stage of a pipe fails the recipe.
SHELL = /usr/bin/env bash -o pipefail
.SHELLFLAGS = -ec

.PHONY: all
all: build

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "\nUsage:\n  make \033[36m<target>\033[0m\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) } ' $(MAKEFILE_LIST)

##@ Development

.PHONY: manifests
manifests: controller-gen ## Generate CRDs and RBAC from the API and controller markers.
	"$(CONTROLLER_GEN)" rbac:roleName=manager-role crd webhook paths="./..." output:crd:artifacts:config=config/crd/bases output:rbac:artifacts:config=config/rbac output:webhook:artifacts:config=config/webhook

.PHONY: generate
generate: controller-gen ## Generate DeepCopy methods from the API types.
	"$(CONTROLLER_GEN)" object:headerFile="hack/boilerplate.go.txt" paths="./..."

.PHONY: fmt
fmt: ## Run gofmt on the tree.
	gofmt -l -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## Run go vet.
	go vet ./...

.PHONY: lint
lint: golangci-lint ## Run golangci-lint.
	"$(GOLANGCI_LINT)" run ./...

.PHONY: test
test: manifests generate fmt vet setup-envtest setup-crds rekor-up rekor-v2-up postgres-up setup-chromium omniwitness-build sigstore-verify-build ## Run every test against a real API server (envtest), real Rekor v1 and v2 logs, a real PostgreSQL, a real Chromium, transparency-dev's own witness, sigstore-go and the machine's python3.
	browsers=$$(mktemp) && trap 'rm -f "$$browsers"' EXIT && \
	set -a && . "$(REKOR_ENV)" && . "$(REKOR_V2_ENV)" && . "$(POSTGRES_ENV)" && set +a && \
	CAIRN_REQUIRE_REKOR=1 CAIRN_REQUIRE_REKOR_V2=1 CAIRN_REQUIRE_POSTGRES=1 CAIRN_REQUIRE_CHROMIUM=1 CAIRN_REQUIRE_PYTHON=1 CAIRN_REQUIRE_OMNIWITNESS=1 CAIRN_BROWSER_LOG="$$browsers" \
		KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" CAIRN_EXTERNAL_CRDS="$(EXTERNAL_CRDS)" go test ./... -count=1 -timeout 45m -coverprofile cover.out && \
	echo "== the browser tests: the browser each ran, and what it asked for on its own (refused; no page asked)" && \
	awk -F '\t' '{ printf "  %-44s %s: %s\n", $$1, $$2, $$3 } END { if (NR == 0) print "  no browser test ran" }' "$$browsers"
	@echo "== the log, its witnessing loop and the witness again, under the race detector"
	set -a && . "$(REKOR_ENV)" && . "$(REKOR_V2_ENV)" && set +a && \
		go test -race ./internal/tlog ./internal/witnessd ./pkg/witness -count=1 -timeout 20m
	@echo "== the controllers' log specs again, against the local Rekor"
	set -a && . "$(REKOR_ENV)" && set +a && CAIRN_FEDERATION_LOG=rekor \
		KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test ./controllers -count=1 -timeout 30m -run TestControllers -args -ginkgo.label-filter=log
	@echo "== the controllers' log specs again, against the local Rekor v2, each receipt checked by sigstore-go too"
	set -a && . "$(REKOR_ENV)" && . "$(REKOR_V2_ENV)" && set +a && CAIRN_FEDERATION_LOG=rekor-v2 CAIRN_SIGSTORE_VERIFY="$(SIGSTORE_VERIFY)" \
		KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test ./controllers -count=1 -timeout 30m -run TestControllers -args -ginkgo.label-filter=log

.PHONY: bench
bench: setup-envtest ## Run the benchmarks (see docs/BENCHMARKS.md).
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" go test ./... -run '^$$' -bench . -benchmem

.PHONY: bench-compare
bench-compare: ## Run the seal, verify and OTLP benchmarks and the CLI paths against the original's algorithm re-stated (hack/bijotel_restated.py), in one run, and print the ratios (a few minutes; BENCH_COUNT=3).
	hack/bench-compare.sh

LOADTEST_FLAGS ?=

.PHONY: loadtest
loadtest: setup-envtest ## Run the load test: 1,000 operators for a simulated week on loopback, at most 30 minutes (see docs/BENCHMARKS.md; LOADTEST_FLAGS=-h lists its flags).
	go run ./cmd/cairn-loadtest -assets "$(ENVTEST_ASSETS)" $(LOADTEST_FLAGS)

SOAK_DURATION ?= 30m

SCREENSHOTS_DIR ?= docs/screenshots

.PHONY: screenshots
screenshots: setup-chromium ## Regenerate the README's screenshots of the dashboard and the federation's page.
	tmp=$$(mktemp -d) && CAIRN_TEST_ARTIFACTS="$$tmp" CAIRN_REQUIRE_CHROMIUM=1 \
		go test ./internal/api ./webhook -count=1 -run 'TestDashboardInTheBrowser|TestPublicPageInBrowser' && \
	mkdir -p "$(SCREENSHOTS_DIR)" && \
	cp "$$tmp/TestDashboardInTheBrowser/overview.png" "$(SCREENSHOTS_DIR)/dashboard.png" && \
	cp "$$tmp/TestPublicPageInBrowser/receipt_valid.png" "$(SCREENSHOTS_DIR)/federation-page.png" && \
	rm -rf "$$tmp"

DEV_FLAGS ?=

FUZZTIME ?= 5m

.PHONY: fuzz
fuzz: ## Run every fuzz target for FUZZTIME (default 5m) and keep the interesting inputs.
	hack/fuzz.sh $(FUZZTIME)

.PHONY: soak
soak: ## Run `cairn serve` under a steady OTLP load for SOAK_DURATION (default 30m); fail on memory or fd growth.
	CAIRN_SOAK=1 SOAK_DURATION=$(SOAK_DURATION) go test ./test/soak -count=1 -v -timeout 0 -run TestSoak

.PHONY: dev
dev: build setup-envtest ## Run the whole system locally: control plane, CRDs, manager (DEV_FLAGS=--fresh starts over).
	KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" "$(CAIRN)" dev $(DEV_FLAGS)

DEV_DIR ?= .cairn-dev

.PHONY: demo
demo: build setup-envtest ## Tell the whole story: three organizations, one federation (against a running `make dev`, else its own).
	@if "$(CAIRN)" demo --check --dir "$(DEV_DIR)" 2>/dev/null; then \
		"$(CAIRN)" demo --dir "$(DEV_DIR)"; \
	else \
		KUBEBUILDER_ASSETS="$(ENVTEST_ASSETS)" "$(CAIRN)" dev --demo --dir "$(DEV_DIR)" $(DEV_FLAGS); \
	fi

##@ Build

.PHONY: build
build: manifests generate fmt vet ## Build bin/cairn.
	CGO_ENABLED=0 go build -ldflags "$(LDFLAGS)" -o "$(CAIRN)" ./cmd/cairn

IMG ?= cairn:latest

.PHONY: docker-build
docker-build: ## Build the manager image IMG (needs a Docker engine).
	docker build --build-arg VERSION=$(VERSION) -t $(IMG) .

##@ Dependencies

.PHONY: rekor-up
rekor-up: ## Start a local Rekor v1 stack for the integration tests (hack/rekor-up.sh; rekor-down stops it).
	hack/rekor-up.sh up >/dev/null

.PHONY: rekor-down
rekor-down: ## Stop the local Rekor stack.
	hack/rekor-down.sh

.PHONY: rekor-v2-up
rekor-v2-up: ## Start a local Rekor v2 (rekor-tiles) and an RFC 3161 timestamp authority (hack/rekor-v2-up.sh; rekor-v2-down stops them).
	hack/rekor-v2-up.sh up >/dev/null

# SIGSTORE_VERIFY is hack/sigstore-verify (its own module: sigstore-go, nothing of Cairn's)
# built into the cache; the Go build cache makes a rebuild a second.
SIGSTORE_VERIFY = $${CAIRN_CACHE_DIR:-$${XDG_CACHE_HOME:-$$HOME/.cache}/cairn}/sigstore-verify/sigstore-verify

.PHONY: sigstore-verify-build
sigstore-verify-build: ## Build hack/sigstore-verify, sigstore-go's check of anchor bundles, for the Rekor v2 specs.
	cd hack/sigstore-verify && CGO_ENABLED=0 go build -o "$(SIGSTORE_VERIFY)" .

.PHONY: rekor-v2-down
rekor-v2-down: ## Stop the local Rekor v2 and timestamp authority (their keys and log stay).
	hack/rekor-v2-up.sh down

.PHONY: postgres-up
postgres-up: ## Start a private PostgreSQL for the history store's tests (hack/postgres-up.sh; postgres-down stops it).
	hack/postgres-up.sh up >/dev/null

.PHONY: omniwitness-build
omniwitness-build: ## Build transparency-dev's witness (omniwitness) for the interoperability tests (hack/omniwitness.sh).
	hack/omniwitness.sh build >/dev/null

.PHONY: postgres-down
postgres-down: ## Stop the private PostgreSQL (its data stays).
	hack/postgres-down.sh

.PHONY: setup-chromium
setup-chromium: ## Install Debian's chromium for the /docs and /redoc browser test (hack/setup-chromium.sh).
	hack/setup-chromium.sh >/dev/null

.PHONY: setup-envtest
setup-envtest: ## Build kube-apiserver, kubectl and etcd from the module proxy into the cache.
	@echo "envtest binaries in $(ENVTEST_ASSETS)"

.PHONY: setup-crds
setup-crds: ## Fetch cert-manager's and the Prometheus operator's CRDs from the module proxy into the cache.
	@echo "external CRDs in $(EXTERNAL_CRDS)"

.PHONY: controller-gen
controller-gen: $(CONTROLLER_GEN) ## Install controller-gen into bin/.
$(CONTROLLER_GEN):
	$(call go-install-tool,$@,sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_TOOLS_VERSION))

.PHONY: golangci-lint
golangci-lint: $(GOLANGCI_LINT) ## Install golangci-lint into bin/.
$(GOLANGCI_LINT):
	$(call go-install-tool,$@,github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION))

# go-install-tool builds package $2 at version $3 into the versioned path $1.
define go-install-tool
@mkdir -p "$(LOCALBIN)"; tmp=$$(mktemp -d); \
echo "Installing $(2)@$(3)"; \
GOBIN="$$tmp" GOTOOLCHAIN=local go install "$(2)@$(3)"; \
mv "$$tmp/$$(basename $(2))" "$(1)"; rm -rf "$$tmp"
endef
