# prebake: the two commands a newcomer needs are `make demo` and `make test`.
SHELL := /bin/bash
GO ?= go
BIN := bin/prebake
# demo: real POMs (with placeholder jars) in testdata/demo-repo; slf4j-api 1.7.36 loses to the transitive 2.0.7 (Ivy latest-revision).
DEMO_PACKAGES ?= ch.qos.logback:logback-classic:1.4.11 org.slf4j:slf4j-api:1.7.36
export PREBAKE_CI_CACHE ?= /var/cache/prebake-ci
# The JVM tier (spark-submit, Spark, Airflow, real pods) runs in every target but test-fast.
export PREBAKE_JVM ?= 1
PATH := $(shell $(GO) env GOPATH)/bin:$(PATH)
export PATH

.PHONY: build bed-bin test test-fast test-live unit lint bench bench-py demo demo-spark image parity-refresh parity-live parity-diff parity-fuzz parity-central parity-lines native-lines cluster cluster-down infra docs clean

# VERSION is what `prebake --version` prints: the checkout's tag (or commit), stamped at link time.
VERSION ?= $(shell git describe --tags --always --dirty 2>/dev/null)
LDFLAGS := $(if $(VERSION),-X github.com/prebake/prebake/cmd.version=$(VERSION))

build:
	$(GO) build -trimpath -ldflags '$(LDFLAGS)' -o $(BIN) ./cmd/prebake

## test: unit and integration tests (integration tests start real servers on 127.0.0.1), every journey on the real
## node included. It runs hack/infra.sh first (idempotent; cached by version), so a fresh clone needs nothing else.
## The real node is the run's test bed (hack/cluster run: started once unless `make cluster` already runs it, every
## test binary attaches to it a group of tests at a time). The CLI is built once (bin/prebake, PREBAKE_BIN) for
## every test binary; the live oracles re-ask the real spark-submit only when a stamp of their inputs changed
## (test-live forces them). It ends with a table of the time each test binary took (also in .test-times).
BED_DIR ?= $(CURDIR)/.cluster
test: infra build bed-bin
	bin/prebake-cluster run -dir $(BED_DIR) -- bash -c 'set -o pipefail; \
		PREBAKE_IT=1 PREBAKE_BIN=$(CURDIR)/$(BIN) $(GO) test -json -race -timeout 60m ./... \
		| $(GO) run ./hack/testtable -o .test-times'

bed-bin:
	$(GO) build -o bin/prebake-cluster ./hack/cluster

## test-live: the live oracles (test/parity: the real spark-submit's objects for every native case and per Spark line,
## the real spark-operator, the real spark-submit of each Ivy, the upgrade report on Central), re-asked whatever their
## stamps say; a pass records each new stamp beside its goldens (commit them).
test-live: infra build
	PREBAKE_IT=1 PREBAKE_JVM=1 PREBAKE_LIVE=1 PREBAKE_BIN=$(CURDIR)/$(BIN) $(GO) test -count=1 -timeout 90m ./test/parity/

## test-fast: the server tests (nginx, registry, versitygw, kube-apiserver) without the JVM tier
## (PREBAKE_JVM=0: no spark-submit, Spark, Airflow or real pods) and without -race; the servers
## must be installed (make test or hack/infra.sh once).
test-fast:
	PREBAKE_IT=1 PREBAKE_JVM=0 $(GO) test -timeout 40m ./...

## unit: tests that need no server.
unit:
	$(GO) test ./...

## docs: the command reference (docs/reference) and man pages (docs/man) from the cobra commands, the JSON schemas
## (docs/schemas) and the index of docs/json-output.md from cmd.JSONDocs;
## cmd's TestDocsCurrent fails when they are stale.
docs:
	$(GO) run ./hack/gendocs docs

lint:
	$(GO) vet ./...
	$(GO) mod tidy -diff
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	@if command -v staticcheck >/dev/null; then staticcheck ./...; else echo "staticcheck not installed (hack/infra.sh installs it)"; fi

bench: build
	PREBAKE_IT=1 PREBAKE_BIN=$(CURDIR)/$(BIN) $(GO) test -run='^$$' -bench=. -benchtime=1x -count=1 ./... 

## bench-py: make bench's Python rows alone (hack/benchpy: cold resolve + fetch of pandas + pyarrow against
## uv pip install --target, warm resolve over a process start with 0 index connections, the Python layer bake against
## its read + write + hash floor) and internal/wheel's install benchmarks.
bench-py: build
	PREBAKE_IT=1 PREBAKE_BIN=$(CURDIR)/$(BIN) $(GO) test -run='^$$' -bench=. -benchtime=1x -count=1 ./hack/benchpy/ ./internal/wheel/

## demo: the main job on the embedded defaults, with nothing outside this repository and no network:
## resolve real coordinates from testdata/demo-repo over file:// (prints the tree, writes .demo/prebake.lock),
## bake the jars into the synthetic base image as an OCI layout (oci:.demo/image) and into a file:// store (.demo/store).
demo: build
	@mkdir -p .demo
	$(BIN) resolve --no-default-repositories \
		--repositories file://$(CURDIR)/testdata/demo-repo/ \
		--cache $(CURDIR)/.demo/cache --lock .demo/prebake.lock \
		$(DEMO_PACKAGES)
	$(BIN) bake image --base oci:testdata/base-image:3.5.0 --target oci:.demo/image \
		--cache $(CURDIR)/.demo/cache --lock .demo/prebake.lock
	$(BIN) bake s3 --store file://$(CURDIR)/.demo/store \
		--cache $(CURDIR)/.demo/cache --lock .demo/prebake.lock
	@echo "image in oci:.demo/image, jar store in file://$(CURDIR)/.demo/store; next: README.md, \"Usage\""

## demo-spark: the demo's journey ending in a real local Spark job, when Spark is installed ($$SPARK_HOME, else the
## pyspark that hack/infra.sh installs): resolve dev.prebake.demo:greeting:1.0 (a real one-class jar) from
## testdata/spark-demo/repo into a lock, bake it into a file:// store, then `prebake submit` runs
## testdata/spark-demo/app.py with --master local[2]: prebake runs the real spark-submit with the rewritten argv
## (no --packages left, so Spark resolves nothing) and exits with its exit code.
SPARK_DEMO_HOME ?= $(or $(SPARK_HOME),$(wildcard $(PREBAKE_CI_CACHE)/pyspark-3.5.9/pyspark))
SPARK_DEMO_DIR ?= $(CURDIR)/.demo/spark
SPARK_DEMO_REPO := file://$(CURDIR)/testdata/spark-demo/repo/
demo-spark: build
	@test -n "$(SPARK_DEMO_HOME)" || { echo "demo-spark needs Spark: set SPARK_HOME, or run make infra"; exit 1; }
	@mkdir -p $(SPARK_DEMO_DIR)
	$(BIN) resolve --no-default-repositories --repositories $(SPARK_DEMO_REPO) \
		--cache $(SPARK_DEMO_DIR)/cache --lock $(SPARK_DEMO_DIR)/prebake.lock dev.prebake.demo:greeting:1.0
	$(BIN) bake s3 --store file://$(SPARK_DEMO_DIR)/store --cache $(SPARK_DEMO_DIR)/cache --lock $(SPARK_DEMO_DIR)/prebake.lock
	SPARK_HOME=$(SPARK_DEMO_HOME) PYTHONPATH=$(abspath $(SPARK_DEMO_HOME)/..)$(if $(PYTHONPATH),:$(PYTHONPATH)) \
		$(BIN) submit --no-default-repositories --repositories $(SPARK_DEMO_REPO) \
		--cache $(SPARK_DEMO_DIR)/cache --lock $(SPARK_DEMO_DIR)/prebake.lock --frozen -- \
		--master 'local[2]' --conf spark.ui.enabled=false --packages dev.prebake.demo:greeting:1.0 \
		$(CURDIR)/testdata/spark-demo/app.py

## image: prebake's own image (static binary + CA certificates on scratch, linux/amd64+arm64) as an OCI layout, built by prebake's layers package;
## its binary is stamped with VERSION as make build's is. It holds no writable directory: mount a volume for HOME and PREBAKE_CACHE.
IMAGE ?= oci:dist/prebake-image:latest
image:
	$(GO) run ./hack/image -target $(IMAGE) -version '$(VERSION)'

## parity-refresh: regenerate the golden .expected files with the real Ivy oracle.
parity-refresh:
	$(GO) run ./hack/parity -refresh

## parity-live: run the live Ivy oracle over every golden case and compare.
parity-live:
	$(GO) run ./hack/parity -live

## parity-diff: the differential run in CI: PARITY_SETS random coordinate sets per seed from ../shared/corpus,
## for each fixed seed of PARITY_SEEDS, through the real Ivy oracle and prebake; any difference fails.
PARITY_SEEDS ?= 1,2,3,777,4242,9001,31337,20261201
PARITY_SETS ?= 30
parity-diff:
	$(GO) run ./hack/parity -diff $(PARITY_SETS) -seeds $(PARITY_SEEDS) -j 2

## parity-fuzz: the same over SEEDS fresh random seeds (printed first; replay one with
## `go run ./hack/parity -diff $(PARITY_SETS) -seed N`).
SEEDS ?= 4
parity-fuzz:
	$(GO) run ./hack/parity -diff $(PARITY_SETS) -random $(SEEDS) -j 2

## parity-central: every case of testdata/central/cases.txt on the CI Spark lines (3.4, 3.5, 4.0, 4.3: internal/testenv
## SparkLines) through the real spark-submit and prebake on the machine's Maven Central; both must match the goldens
## (names and sha256). `go run ./hack/central -record -lines L` rewrites line L's goldens and adds to the recorded mirror.
parity-central:
	$(GO) run ./hack/central

## parity-lines: the same on every Spark line (3.4, 3.5-early, 3.5, 4.0, 4.1, 4.2, 4.3), installing the pyspark
## distributions CI does not (hack/infra.d/60-spark.sh, cached by version under $$PREBAKE_CI_CACHE).
parity-lines:
	PREBAKE_CI_CACHE="$${PREBAKE_CI_CACHE:-/var/cache/prebake-ci}" PREBAKE_SPARK_VERSIONS="$$($(GO) run ./hack/central -versions all)" \
		bash -euc 'log() { echo "infra: $$*" >&2; }; source hack/infra.d/00-lib.sh; source hack/infra.d/60-spark.sh'
	$(GO) run ./hack/central -lines all

## native-lines: the per-line native equivalence (TestNativeLinesEquivalenceIT: the real spark-submit of the oldest and
## newest patch of each Spark line 3.5-4.3, and the native builder, against the real kube-apiserver), on every patch of
## SPARK_LINE_PATCHES (internal/testenv SparkLinePatches), installing the pyspark distributions CI does not
## (.ci/run checks 3.5.9, 4.0.5 and 4.3.0 live; go test replays every patch's golden). Needs `make infra`.
SPARK_LINE_PATCHES := 3.5.0 3.5.9 4.0.0 4.0.5 4.1.0 4.1.4 4.2.0 4.2.1 4.3.0
native-lines:
	PREBAKE_SPARK_VERSIONS="$(SPARK_LINE_PATCHES)" bash -euc 'log() { echo "infra: $$*" >&2; }; source hack/infra.d/00-lib.sh; source hack/infra.d/60-spark.sh'
	PREBAKE_IT=1 PREBAKE_SPARK_LINES=all $(GO) test -count=1 -timeout 40m -run '^TestNativeLinesEquivalenceIT$$' ./test/parity/

## cluster: the tests' real single-node Kubernetes (internal/testenv/cluster), in the background, for a person:
## the same test bed `make test` runs (every test binary attaches to it: `go test -run X ./test/spark` uses it).
## Prints the kubeconfig, the registry on 127.0.0.1 and the Spark base images. Needs root and `make infra`.
## cluster-down stops it and leaves nothing running.
cluster: bed-bin
	bin/prebake-cluster up -dir $(BED_DIR)

cluster-down: bed-bin
	bin/prebake-cluster down -dir $(BED_DIR)

infra:
	hack/infra.sh

clean:
	rm -rf bin .demo .cluster
