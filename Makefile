# Pangolin Ingress Controller. `make help` lists the targets.
SHELL := /usr/bin/env bash -o pipefail
.DEFAULT_GOAL := help

GO          ?= go
BIN         := $(CURDIR)/bin
IMAGE       ?= pangolin-ingress-controller:dev
# The control plane (etcd, kube-apiserver, kube-controller-manager) is built from the Go
# module proxy once per machine and cached outside the clone; see hack/controlplane.
CONTROLPLANE = $(shell hack/controlplane/build.sh)
TEST_TIMEOUT ?= 45m
comma := ,

##@ General

.PHONY: help
help: ## Show this help.
	@awk 'BEGIN {FS = ":.*##"; printf "Usage: make <target>\n"} /^[a-zA-Z_0-9-]+:.*?##/ { printf "  \033[36m%-16s\033[0m %s\n", $$1, $$2 } /^##@/ { printf "\n\033[1m%s\033[0m\n", substr($$0, 5) }' $(MAKEFILE_LIST)

##@ Development

.PHONY: build
build: ## Build the controller binary into bin/manager.
	CGO_ENABLED=0 $(GO) build -trimpath -ldflags='-s -w' -o $(BIN)/manager ./cmd/manager

.PHONY: controlplane
controlplane: ## Build (once per machine) etcd, kube-apiserver and kube-controller-manager; print where.
	@start=$$(date +%s); dir=$$(hack/controlplane/build.sh); \
	  echo "control plane: $$dir (ready in $$(( $$(date +%s) - start ))s)"

.PHONY: fmt
fmt: ## gofmt the tree.
	gofmt -w $$(git ls-files '*.go')

.PHONY: vet
vet: ## go vet, and fail on unformatted files.
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); echo "run make fmt"; exit 1; }
	$(GO) vet ./...

##@ Testing

.PHONY: test
test: controlplane vet build ## Run every test: unit, golden, envtest and e2e on the local control plane.
	@start=$$(date +%s); \
	  KUBEBUILDER_ASSETS="$$(hack/controlplane/build.sh)" PIC_MANAGER_BINARY=$(BIN)/manager \
	  $(GO) test -count=1 -timeout $(TEST_TIMEOUT) -cover ./... ; status=$$?; \
	  echo "tests finished in $$(( $$(date +%s) - start ))s"; exit $$status

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

COVERED_PACKAGES := ./internal/engine/...,./internal/hostname/...,./internal/tunnel/...,./internal/controller/...,./sinks/...,./sources/...

.PHONY: coverage
coverage: controlplane ## Coverage per package of the core (engine, sink, sources, controller), by all their tests.
	KUBEBUILDER_ASSETS="$$(hack/controlplane/build.sh)" $(GO) test -count=1 -coverpkg=$(COVERED_PACKAGES) -coverprofile=cover.out \
	  $(subst $(comma), ,$(COVERED_PACKAGES)) | grep -v "^?"
	@$(GO) run ./hack/coverage cover.out

##@ Packaging

.PHONY: docker-build
docker-build: ## Build the container image (needs a Docker engine).
	docker build -t $(IMAGE) .

##@ Demo

.PHONY: demo
demo: controlplane build ## Run PIC on a local control plane with sample objects and print what it creates (DEMO_ONESHOT=1 exits).
	$(GO) run ./hack/demo

##@ Manifests

# Tools built from the Go module proxy into bin/, one version each, pinned here. The binary
# name carries the version, so changing it rebuilds. kustomize v5.8.3 needs Go 1.27;
# v5.8.2 (kustomize/api v0.21.2) is the newest that builds with Go 1.26.
KUSTOMIZE_VERSION ?= v5.8.2
KUSTOMIZE         := $(BIN)/kustomize-$(KUSTOMIZE_VERSION)

.PHONY: kustomize
kustomize: $(KUSTOMIZE) ## Build the pinned kustomize into bin/.

$(KUSTOMIZE):
	@mkdir -p $(BIN)
	GOBIN=$(BIN) $(GO) install sigs.k8s.io/kustomize/kustomize/v5@$(KUSTOMIZE_VERSION)
	mv -f $(BIN)/kustomize $@

.PHONY: manifests
manifests: $(KUSTOMIZE) ## Render config/default into dist/install.yaml (IMAGE=<image> sets the image).
	@rm -rf dist/.overlay && mkdir -p dist/.overlay
	@cd dist/.overlay && $(KUSTOMIZE) create --resources ../../config/default \
	  && $(KUSTOMIZE) edit set image pangolin-ingress-controller=$(IMAGE)
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
