# Pangolin Ingress Controller. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := help

GO          ?= go
BIN         := $(CURDIR)/bin
# The released version: VERSION is the one place it is written. config/manager, the chart
# and this Makefile follow it (internal/manifests fails when they disagree);
# `make set-version NEW_VERSION=vX.Y.Z` changes them all. docs/releasing.md.
VERSION     := $(shell cat $(CURDIR)/VERSION)
IMAGE_REPO  := ghcr.io/stefb69/pangolin-ingress-controller
IMAGE       ?= $(IMAGE_REPO):$(VERSION)
# The control plane (etcd, kube-apiserver, kube-controller-manager) is downloaded from the
# official releases, verified, or else built from the Go module proxy, once per machine, and
# cached outside the clone; see hack/controlplane/build.sh.
CONTROLPLANE = $(shell hack/controlplane/build.sh)
TEST_TIMEOUT ?= 45m
comma := ,

# Tools built from the Go module proxy into bin/, one version each, pinned here, each in
# its own module (go install pkg@version), never in PIC's go.mod. The binary name carries
# the version, so changing it rebuilds. kustomize v5.8.3 needs Go 1.27; v5.8.2
# (kustomize/api v0.21.2) is the newest that builds with Go 1.26. golangci-lint takes
# several minutes to build on 2 cores, once.
KUSTOMIZE_VERSION      ?= v5.8.2
GOLANGCI_LINT_VERSION  ?= v2.15.0
ACTIONLINT_VERSION     ?= v1.7.12
CONTROLLER_GEN_VERSION ?= v0.23.0
KUSTOMIZE      := $(BIN)/kustomize-$(KUSTOMIZE_VERSION)
GOLANGCI_LINT  := $(BIN)/golangci-lint-$(GOLANGCI_LINT_VERSION)
ACTIONLINT     := $(BIN)/actionlint-$(ACTIONLINT_VERSION)
CONTROLLER_GEN := $(BIN)/controller-gen-$(CONTROLLER_GEN_VERSION)

# go-install-tool builds the package $(2) at version $(3), whose binary is $(4), into $(1).
define go-install-tool
@mkdir -p $(BIN)
GOBIN=$(BIN) $(GO) install $(2)@$(3)
mv -f $(BIN)/$(4) $(1)
endef

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-22s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: build
build: ## Build the controller binary into bin/manager.
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN)/manager ./cmd/manager

.PHONY: controlplane
controlplane: ## Download (or else build), once per machine, etcd, kube-apiserver and kube-controller-manager; print where.
	@start=$$(date +%s); dir=$$(hack/controlplane/build.sh); \
	  echo "control plane: $$dir (ready in $$(( $$(date +%s) - start ))s)"

# Needs dl.k8s.io and github.com. Run it after changing a version in hack/controlplane/*/go.mod.
.PHONY: controlplane-checksums
controlplane-checksums: ## Record in hack/controlplane/release-checksums the SHA-256 of the pinned control-plane release files.
	hack/controlplane/build.sh --record-checksums

.PHONY: fmt
fmt: ## gofmt the tree.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet, and fail on unformatted files.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "run make fmt"; exit 1; }
	$(GO) vet ./...

# PIC's own API groups, whose CRDs PIC installs (config/crd/pic). internal/apis/tunnel is
# pangolin-operator's: the operator installs those CRDs, so no CRD is generated from it.
PIC_API_PATHS := ./internal/apis/access/...
PIC_CRD_DIR   := config/crd/pic

.PHONY: generate
generate: $(CONTROLLER_GEN) ## Generate the DeepCopy methods of internal/apis (zz_generated.deepcopy.go) and PIC's CRDs (config/crd/pic) with controller-gen.
	$(CONTROLLER_GEN) object paths=./internal/apis/...
	$(CONTROLLER_GEN) crd paths=$(PIC_API_PATHS) output:crd:dir=$(PIC_CRD_DIR)

.PHONY: lint
lint: vet generate-check $(GOLANGCI_LINT) $(ACTIONLINT) ## go vet, gofmt, golangci-lint (.golangci.yml), actionlint on the workflows, generated code up to date.
	@start=$$(date +%s); $(GOLANGCI_LINT) run ./... && echo "golangci-lint: clean in $$(( $$(date +%s) - start ))s"
	$(ACTIONLINT)

# Each generated file must be what controller-gen writes today from the types beside it,
# and config/crd/pic must hold exactly the CRDs it writes (none missing, none stale).
.PHONY: generate-check
generate-check: $(CONTROLLER_GEN)
	@for f in $$(git ls-files '*zz_generated.deepcopy.go'); do \
	  $(CONTROLLER_GEN) object paths=./$$(dirname $$f) output:object:stdout | diff -u $$f - >/dev/null \
	    || { echo "$$f is out of date: run make generate"; exit 1; }; \
	done
	@tmp=$$(mktemp -d); trap 'rm -rf "$$tmp"' EXIT; \
	  $(CONTROLLER_GEN) crd paths=$(PIC_API_PATHS) output:crd:dir=$$tmp \
	  && diff -ru -x kustomization.yaml $(PIC_CRD_DIR) $$tmp >/dev/null \
	  || { echo "$(PIC_CRD_DIR) is out of date: run make generate"; exit 1; }

##@ Testing

# The core's coverage is measured by the same run, every test counting (envtest and e2e
# included): -coverpkg instruments the core packages in every test binary, and
# hack/coverage fails when a core package is under COVERAGE_MIN percent of its statements.
COVERED_PACKAGES := ./internal/engine/...,./internal/hostname/...,./internal/tunnel/...,./internal/controller/...,./sinks/...,./sources/...,./internal/pangolinsim/...
COVERAGE_MIN     ?= 80

.PHONY: test
test: lint controlplane build ## Run every test (unit, golden, envtest, e2e on the local control plane) after make lint; fail under COVERAGE_MIN % on the core.
	@start=$$(date +%s); \
	  KUBEBUILDER_ASSETS="$$(hack/controlplane/build.sh)" PIC_MANAGER_BINARY=$(BIN)/manager \
	  $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -coverpkg=$(COVERED_PACKAGES) -coverprofile=cover.out ./... ; status=$$?; \
	  echo "tests finished in $$(( $$(date +%s) - start ))s"; [ $$status -eq 0 ] || exit $$status
	$(GO) run ./hack/coverage -min $(COVERAGE_MIN) cover.out

.PHONY: test-unit
test-unit: ## Run the tests that need no control plane (go test -short).
	$(GO) test -count=1 -short ./...

# Plain `go test` runs the fuzz targets' seeds (f.Add and testdata/fuzz/<target>/) too;
# `make fuzz` mutates them. A crasher is written to testdata/fuzz/<target>/: keep it as a seed.
# Go minimizes every new interesting input for up to a minute by default, and a worker that
# minimizes fuzzes nothing: with short budgets on few cores that was most of the run.
FUZZTIME     ?= 30s
FUZZFLAGS    ?= -fuzzminimizetime=3s
FUZZ_TARGETS := ./internal/hostname:FuzzNormalize ./sources:FuzzParseOptions ./sources/ingress:FuzzTranslate

# Go 1.26 may end a clean -fuzztime run with a bare "context deadline exceeded" and no
# failing input (go.dev/issue/75804, fixed in Go 1.27): that alone is not a failure.
.PHONY: fuzz
fuzz: ## Fuzz host parsing, annotation parsing and Ingress translation, FUZZTIME (30s) each.
	@for target in $(FUZZ_TARGETS); do pkg=$${target%%:*}; name=$${target##*:}; log=$$(mktemp); \
	  echo "== $$name ($$pkg) for $(FUZZTIME)"; \
	  $(GO) test -run '^$$' -fuzz "^$$name\$$" -fuzztime $(FUZZTIME) $(FUZZFLAGS) $$pkg 2>&1 | tee $$log; status=$${PIPESTATUS[0]}; \
	  if [ $$status -ne 0 ] && grep -qx '    context deadline exceeded' $$log && ! grep -q 'Failing input written' $$log; then \
	    echo "$$name: only the Go 1.26 fuzztime race (go.dev/issue/75804), no failing input: passed"; status=0; fi; \
	  rm -f $$log; [ $$status -eq 0 ] || exit $$status; \
	done

.PHONY: coverage
coverage: controlplane ## Coverage per package of the core by their own tests only (make test measures it by every test and enforces COVERAGE_MIN).
	KUBEBUILDER_ASSETS="$$(hack/controlplane/build.sh)" $(GO) test -count=1 -coverpkg=$(COVERED_PACKAGES) -coverprofile=cover.out \
	  $(subst $(comma), ,$(COVERED_PACKAGES)) | grep -v "^?"
	@$(GO) run ./hack/coverage cover.out

##@ Packaging

.PHONY: docker-build
docker-build: ## Build the container image IMAGE (needs a Docker engine; the release builds it for amd64 and arm64).
	docker build -t $(IMAGE) .

.PHONY: set-version
set-version: ## Set the released version everywhere: make set-version NEW_VERSION=vX.Y.Z (docs/releasing.md).
	@[[ "$(NEW_VERSION)" =~ ^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?$$ ]] \
	  || { echo "NEW_VERSION=$(NEW_VERSION): want vX.Y.Z or vX.Y.Z-rc.N"; exit 1; }
	echo "$(NEW_VERSION)" > VERSION
	sed -i -E 's/^version: .*/version: $(patsubst v%,%,$(NEW_VERSION))/; s/^appVersion: .*/appVersion: "$(NEW_VERSION)"/' charts/pangolin-ingress-controller/Chart.yaml
	sed -i -E 's/^(    newTag: ).*/\1$(NEW_VERSION)/' config/manager/kustomization.yaml
	@git diff --stat -- VERSION charts/pangolin-ingress-controller/Chart.yaml config/manager/kustomization.yaml

##@ Demo

.PHONY: demo
demo: controlplane build ## Run PIC on a local control plane with sample objects and print what it creates (DEMO_ONESHOT=1 exits).
	$(GO) run ./hack/demo

##@ Manifests

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Build the pinned kustomize into bin/.

.PHONY: manifests
manifests: $(KUSTOMIZE) ## Render config/default into dist/install.yaml (IMAGE=<image> sets the image).
	@rm -rf dist/.overlay && mkdir -p dist/.overlay
	@cd dist/.overlay && $(KUSTOMIZE) create --resources ../../config/default \
	  && $(KUSTOMIZE) edit set image $(IMAGE_REPO)=$(IMAGE)
	$(KUSTOMIZE) build dist/.overlay > dist/install.yaml.tmp
	@mv dist/install.yaml.tmp dist/install.yaml && rm -rf dist/.overlay
	@echo "dist/install.yaml: $$(grep -c '^kind:' dist/install.yaml) objects, image $(IMAGE)"

##@ End-to-end

E2E_CLUSTER ?= local
E2E_TIMEOUT ?= 20m

.PHONY: test-e2e
test-e2e: build $(if $(filter kind,$(E2E_CLUSTER)),,controlplane) ## Run the e2e suite (e2e/) against bin/manager on a local control plane, both CRD variants (E2E_CLUSTER=kind: on kind).
	@start=$$(date +%s); \
	  E2E_CLUSTER=$(E2E_CLUSTER) PIC_MANAGER_BINARY=$(BIN)/manager \
	  $(GO) test -count=1 -timeout $(E2E_TIMEOUT) -v ./e2e/ ; status=$$?; \
	  echo "e2e finished in $$(( $$(date +%s) - start ))s"; exit $$status

##@ Performance

# BENCH_SIZES (100,1000,5000), BENCH_SHAPES (single,multi), BENCH_UPDATES (200),
# BENCH_RESYNC (30s) and BENCH_OUT (bench/results.json) tune the run; see hack/bench.
.PHONY: bench
bench: controlplane build ## Measure PIC on a local control plane (convergence, steady state, change latency, memory, startup); writes bench/results.json.
	PIC_MANAGER_BINARY=$(BIN)/manager $(GO) run ./hack/bench

##@ Tools

.PHONY: tools
tools: $(KUSTOMIZE) $(GOLANGCI_LINT) $(ACTIONLINT) $(CONTROLLER_GEN) ## Build every pinned tool into bin/.

$(KUSTOMIZE):
	$(call go-install-tool,$@,sigs.k8s.io/kustomize/kustomize/v5,$(KUSTOMIZE_VERSION),kustomize)

$(GOLANGCI_LINT):
	$(call go-install-tool,$@,github.com/golangci/golangci-lint/v2/cmd/golangci-lint,$(GOLANGCI_LINT_VERSION),golangci-lint)

$(ACTIONLINT):
	$(call go-install-tool,$@,github.com/rhysd/actionlint/cmd/actionlint,$(ACTIONLINT_VERSION),actionlint)

$(CONTROLLER_GEN):
	$(call go-install-tool,$@,sigs.k8s.io/controller-tools/cmd/controller-gen,$(CONTROLLER_GEN_VERSION),controller-gen)
