# sluice — see README.md. `make run` runs the demo, `make test` the whole suite.
GO       ?= go
BIN      := bin/host
# the version "host version" prints (without it, the build information's)
VERSION  ?= $(shell git describe --tags --always --dirty 2>/dev/null)
GOWASM   := GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w'
# Every Go plugin is a folder under plugins/ holding a main.go.
GO_PLUGINS := $(patsubst plugins/%/main.go,%,$(wildcard plugins/*/main.go))
# Fuzzing budgets are execution counts (-fuzztime=Nx, each about 10 s on
# the reference machine), not durations: with a duration, Go 1.26's fuzz
# coordinator can race its own deadline and fail a run that found nothing
# ("context deadline exceeded", go.dev/issue/75804, fixed in Go 1.27).
# FUZZTIME=30s (any -fuzztime value) sets one budget for every target.
FUZZTIME ?=
# Minimising each new input is capped (Go's default is 60 s an input, and a
# run that finds several spends minutes there with no execs counted).
fuzz1 = $(GO) test -run='^$$' -fuzz='^$(1)$$' -fuzztime=$(or $(FUZZTIME),$(2)) -fuzzminimizetime=$(or $(FUZZMINIMIZETIME),5s) $(3)

.PHONY: all build go-plugins plugins run demo-plugins test race fuzz bench check clean tools

all: build plugins

build:
	$(GO) build -ldflags='-X main.version=$(VERSION)' -o $(BIN) ./cmd/host

# go-plugins: the Go plugins alone (all the demo needs); plugins: every
# language (plugins.mk adds the others).
go-plugins: $(foreach p,$(GO_PLUGINS),plugins/$(p)/$(p).wasm)

plugins: go-plugins

plugins/%.wasm: FORCE
	$(GOWASM) -o $@ ./$(dir $@)

FORCE:

# The demo: configs/quickstart.yaml (generator -> Wasm filter -> Wasm map ->
# keyBy -> sum -> print). `make demo-plugins` shows the plugins one by one.
run: build go-plugins
	./$(BIN) run configs/quickstart.yaml

demo-plugins: build go-plugins
	./scripts/demo.sh

# The whole suite: unit, golden, end-to-end and plugin tests, the race
# detector over the packages that run goroutines, then a short fuzz of
# every decoder. cmd/host builds a scaffold of every plugin kind in every
# language (TestPluginInitKinds, minutes on 2 cores): past go test's default
# 10-minute limit per package, hence -timeout.
test: tools build plugins
	$(GO) vet ./...
	$(GO) test -count=1 -timeout=30m ./...
	$(MAKE) race
	$(MAKE) fuzz

# The engine (a goroutine per subtask), the server and its HTTP API (jobs
# of real plugins, many subtasks sharing a plugin host and a tenant's fuel
# pacer) and the connectors under -race: about 4.5 minutes on 2 shared
# cores. cmd/host and host/plugin took about 10 minutes each, bound by
# wazero compiling under the detector (RATIONALE.md: "Why does make test
# race only four packages?").
RACE_PKGS := ./host/runtime/... ./host/server/... ./host/web/... ./host/connector/...
race:
	$(GO) test -race -count=1 $(RACE_PKGS)

tools:
	./scripts/tools.sh
	./scripts/tools-browser.sh

fuzz:
	$(call fuzz1,FuzzReader,500000x,./abi)
	$(call fuzz1,FuzzScanPaths,100000x,./abi)
	$(call fuzz1,FuzzCheckBatch,450000x,./abi)
	$(call fuzz1,FuzzCheckBatchEnds,450000x,./abi)
	$(call fuzz1,FuzzSplit,300000x,./sdk/go)
	$(call fuzz1,FuzzParse,150000x,./host/pipeline)
	$(call fuzz1,FuzzCheckOutput,110000x,./host/plugin)
	$(call fuzz1,FuzzInstrument,180000x,./host/plugin/fuel)
	$(call fuzz1,FuzzDecode,200000x,./internal/wasmbin)
	$(call fuzz1,FuzzJSONToMsgpack,100000x,./host/codec)
	$(call fuzz1,FuzzMetadata,400000x,./host/checkpoint)
	$(call fuzz1,FuzzStateFile,500000x,./host/checkpoint)

bench: build plugins
	$(GO) run ./bench/cmd/benchtable -go $(GO) -out docs/benchmarks.md

check:
	$(GO) vet ./...
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || (gofmt -l $$(git ls-files '*.go'); exit 1)
	$(GO) mod tidy -diff

clean:
	rm -rf bin $(foreach p,$(GO_PLUGINS),plugins/$(p)/$(p).wasm)

# C, Rust, AssemblyScript and WAT plugins and their SDKs
include plugins.mk
