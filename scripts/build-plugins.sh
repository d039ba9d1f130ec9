#!/usr/bin/env bash
# Builds the non-Go plugins offline, one step per language, and runs the
# native tests of the guest SDKs:
#
#   scripts/build-plugins.sh [c|rust|as|wat|test]...   (default: c rust as wat)
#
#   c     plugins/<name>/c/*.c         -> plugins/<name>/<name>-c.wasm     (clang, wasi-libc)
#   rust  plugins/<name>/rust/         -> plugins/<name>/<name>-rust.wasm  (Debian rustc 1.63, wasm-opt)
#   as    plugins/<name>/as/<name>.ts  -> plugins/<name>/<name>-as.wasm    (AssemblyScript 0.28)
#   wat   plugins/wat/<name>.wat       -> plugins/wat/<name>.wasm          (wabt)
#   test  sdk/c, sdk/rust (+ the Rust plugins' own tests), sdk/assemblyscript
#
# scripts/tools-langs.sh installs or names the toolchains. Overrides:
# CLANG, CC, CARGO, RUSTC, RUSTDOC, WAT2WASM.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

CLANG=${CLANG:-clang}
CC=${CC:-cc}
# Debian's rustc 1.63 has the wasm32 std; a rustup toolchain on PATH may not.
CARGO=${CARGO:-/usr/bin/cargo}
export RUSTC=${RUSTC:-/usr/bin/rustc} RUSTDOC=${RUSTDOC:-/usr/bin/rustdoc}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/.cache/rust-target}
# A 64 KiB stack (rustc's default is 1 MiB), placed first so an overflow traps;
# bulk memory: copies are memory.copy (the host's memmove), not a byte loop.
export CARGO_TARGET_WASM32_UNKNOWN_UNKNOWN_RUSTFLAGS="-C link-arg=-zstack-size=65536 -C link-arg=--stack-first -C target-feature=+bulk-memory"
WAT2WASM=${WAT2WASM:-wat2wasm}
ASDIR=sdk/assemblyscript
ASC=$ASDIR/node_modules/.bin/asc
# binaryen's optimizer, pinned with the AssemblyScript compiler (package.json)
WASM_OPT=$ASDIR/node_modules/.bin/wasm-opt

say() { echo "build-plugins: $*" >&2; }

# Every C plugin is compiled together with the SDK: one translation unit set,
# LTO across them, the stack first (an overflow traps instead of corrupting
# data), 64 KiB of stack, no debug sections.
build_c() {
  for dir in plugins/*/c; do
    [ -d "$dir" ] || continue
    local name; name=$(basename "$(dirname "$dir")")
    say "c: $name"
    "$CLANG" --target=wasm32-wasi -O2 -flto -mbulk-memory -mexec-model=reactor -std=c11 -Wall -Wextra -Werror \
      -Wl,--stack-first -Wl,-z,stack-size=65536 -Wl,--strip-all \
      -I sdk/c sdk/c/sluice.c "$dir"/*.c -o "plugins/$name/$name-c.wasm"
  done
}

# wasm-opt -O3 after rustc: 3-4% off the valid filter (RATIONALE.md, "Why
# wasm-opt for Rust only?"); for C it measured within noise, and asc runs
# binaryen itself.
build_rust() {
  as_tools
  for toml in plugins/*/rust/Cargo.toml; do
    [ -f "$toml" ] || continue
    local dir name; dir=$(dirname "$toml"); name=$(basename "$(dirname "$dir")")
    say "rust: $name"
    (cd "$dir" && "$CARGO" build --offline --quiet --release --target wasm32-unknown-unknown)
    "$WASM_OPT" -O3 --enable-bulk-memory "$CARGO_TARGET_DIR/wasm32-unknown-unknown/release/sluice_${name//-/_}.wasm" \
      -o "plugins/$name/$name-rust.wasm"
  done
}

# The AssemblyScript compiler and binaryen come from npm, pinned by
# package-lock.json.
as_tools() {
  if [ ! -x "$ASC" ] || [ ! -x "$WASM_OPT" ]; then
    say "as: npm ci in $ASDIR"
    (cd "$ASDIR" && npm ci --no-audit --no-fund --loglevel=error)
  fi
}

build_as() {
  as_tools
  for src in plugins/*/as/*.ts; do
    [ -f "$src" ] || continue
    local name; name=$(basename "$(dirname "$(dirname "$src")")")
    [ "$(basename "$src" .ts)" = "$name" ] || continue
    say "as: $name"
    # --runtime stub: no GC (the SDK allocates nothing per record);
    # --use abort=: the host provides no env.abort, the SDK's handler sends
    # the text through the error import and traps.
    "$ASC" "$src" --runtime stub -O3 \
      --use abort=sdk/assemblyscript/assembly/abort/sluiceAbort -o "plugins/$name/$name-as.wasm"
  done
}

build_wat() {
  for src in plugins/wat/*.wat; do
    [ -f "$src" ] || continue
    say "wat: $(basename "$src")"
    "$WAT2WASM" "$src" -o "${src%.wat}.wasm"
  done
}

run_tests() {
  say "test: sdk/c (native)"
  mkdir -p .cache
  # with ASan and UBSan: the tests cut envelopes to exact-size buffers, a read
  # past one is an error
  "$CC" -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra -Werror \
    sdk/c/test/sluice_test.c sdk/c/sluice.c -o .cache/sluice_c_test
  ./.cache/sluice_c_test
  # and with clang's, which also flags pointer arithmetic on NULL (NULL + 0),
  # which gcc's UBSan lets pass; clang is the wasm compiler, so it is here
  if "$CLANG" --version >/dev/null 2>&1; then
    "$CLANG" -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra -Werror \
      sdk/c/test/sluice_test.c sdk/c/sluice.c -o .cache/sluice_c_test_clang
    ./.cache/sluice_c_test_clang
  else
    say "test: sdk/c under clang's sanitizers SKIPPED: no $CLANG (apt-get install clang)"
  fi
  "$CC" -std=c11 -O1 -g -fsanitize=address,undefined -fno-sanitize-recover=all -Wall -Wextra -Werror \
    sdk/c/test/alloc_test.c -o .cache/sluice_alloc_test
  ./.cache/sluice_alloc_test
  say "test: sdk/rust and the Rust plugins (native)"
  (cd sdk/rust && "$CARGO" test --offline --quiet)
  for toml in plugins/*/rust/Cargo.toml; do
    [ -f "$toml" ] && (cd "$(dirname "$toml")" && "$CARGO" test --offline --quiet)
  done
  say "test: sdk/assemblyscript (node)"
  as_tools
  node "$ASDIR/tests/run.mjs"
}

steps=("$@")
[ ${#steps[@]} -gt 0 ] || steps=(c rust as wat)
for step in "${steps[@]}"; do
  case $step in
    c) build_c ;;
    rust) build_rust ;;
    as) build_as ;;
    wat) build_wat ;;
    test) run_tests ;;
    *) echo "usage: $0 [c|rust|as|wat|test]..." >&2; exit 2 ;;
  esac
done
