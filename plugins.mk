# plugins.mk: the plugins in C, Rust, AssemblyScript and WAT, and the tests
# of their SDKs (issue 5). The Makefile includes it (`include plugins.mk`);
# it hooks into `tools`, `plugins`, `test` and `clean` by adding
# prerequisites, so the Makefile's own rules stay as they are.
#
#   make plugins-langs   every language below (after tools-langs)
#   make plugins-c       plugins/<name>/c/     -> plugins/<name>/<name>-c.wasm
#   make plugins-rust    plugins/<name>/rust/  -> plugins/<name>/<name>-rust.wasm
#   make plugins-as      plugins/<name>/as/    -> plugins/<name>/<name>-as.wasm
#   make plugins-wat     plugins/wat/*.wat     -> plugins/wat/*.wasm
#   make test-langs      native tests of sdk/c, sdk/rust, sdk/assemblyscript
#   make tools-langs     install the toolchains (root), or say what is missing

LANGS_BUILD := ./scripts/build-plugins.sh

.PHONY: plugins-langs plugins-c plugins-rust plugins-as plugins-wat tools-langs test-langs clean-langs

plugins-langs: plugins-c plugins-rust plugins-as plugins-wat

plugins-c plugins-rust plugins-as plugins-wat: tools-langs
	$(LANGS_BUILD) $(patsubst plugins-%,%,$@)

tools-langs:
	./scripts/tools-langs.sh

test-langs: tools-langs
	$(LANGS_BUILD) test

clean-langs:
	rm -rf plugins/*/*-c.wasm plugins/*/*-rust.wasm plugins/*/*-as.wasm plugins/wat/*.wasm .cache/rust-target .cache/sluice_c_test

# The main targets: `make plugins` builds every language, `make test` runs
# the SDKs' tests and, through go test, plugins/langtest, which then fails
# (instead of skipping) when a module is missing.
tools: tools-langs
plugins: plugins-langs
test: test-langs
clean: clean-langs
export SLUICE_REQUIRE_LANGS := 1
