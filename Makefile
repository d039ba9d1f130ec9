# sluice — see README.md. `make run` runs the demo, `make test` the whole suite.
GO       ?= go
BIN      := bin/host
GOWASM   := GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -trimpath -ldflags='-s -w'
# Every Go plugin is a folder under plugins/ holding a main.go.
GO_PLUGINS := $(patsubst plugins/%/main.go,%,$(wildcard plugins/*/main.go))
FUZZTIME ?= 10s

.PHONY: all build plugins run demo-plugins test fuzz bench check clean tools

all: build plugins

build:
	$(GO) build -o $(BIN) ./cmd/host

plugins: $(foreach p,$(GO_PLUGINS),plugins/$(p)/$(p).wasm)

plugins/%.wasm: FORCE
	$(GOWASM) -o $@ ./$(dir $@)

FORCE:

# The demo: configs/quickstart.yaml (generator -> Wasm filter -> Wasm map ->
# keyBy -> sum -> print). `make demo-plugins` shows the plugins one by one.
run: build plugins
	./$(BIN) run configs/quickstart.yaml

demo-plugins: build plugins
	./scripts/demo.sh

# The whole suite: unit, golden, end-to-end and plugin tests, then a short
# fuzz of every decoder.
test: tools build plugins
	$(GO) vet ./...
	$(GO) test -count=1 ./...
	$(MAKE) fuzz

tools:
	./scripts/tools.sh
	./scripts/tools-browser.sh

fuzz:
	$(GO) test -run='^$$' -fuzz='^FuzzReader$$' -fuzztime=$(FUZZTIME) ./abi
	$(GO) test -run='^$$' -fuzz='^FuzzScanPaths$$' -fuzztime=$(FUZZTIME) ./abi
	$(GO) test -run='^$$' -fuzz='^FuzzCheckBatch$$' -fuzztime=$(FUZZTIME) ./abi
	$(GO) test -run='^$$' -fuzz='^FuzzCheckBatchEnds$$' -fuzztime=$(FUZZTIME) ./abi
	$(GO) test -run='^$$' -fuzz='^FuzzSplit$$' -fuzztime=$(FUZZTIME) ./sdk/go
	$(GO) test -run='^$$' -fuzz='^FuzzParse$$' -fuzztime=$(FUZZTIME) ./host/pipeline
	$(GO) test -run='^$$' -fuzz='^FuzzCheckOutput$$' -fuzztime=$(FUZZTIME) ./host/plugin
	$(GO) test -run='^$$' -fuzz='^FuzzInstrument$$' -fuzztime=$(FUZZTIME) ./host/plugin/fuel

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
