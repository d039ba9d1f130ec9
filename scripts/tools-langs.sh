#!/usr/bin/env bash
# Installs the toolchains of the non-Go plugins when they are missing and we
# are root (as on CI): C (clang, lld, wasi-libc, compiler-rt for wasm32),
# Rust (Debian's rustc/cargo 1.63 with the wasm32 std), AssemblyScript and
# binaryen's wasm-opt, which the Rust build runs (node, npm, then `npm ci` in
# sdk/assemblyscript), WAT (wabt) and a native C compiler for the C SDK's
# tests. Otherwise it says exactly what is missing and how to install it,
# and fails.
set -euo pipefail
cd "$(dirname "$0")/.."

apt=()   # Debian packages to install
npm=no   # `npm ci` needed in sdk/assemblyscript

check() {
  apt=()
  npm=no
  command -v clang >/dev/null || apt+=(clang)
  command -v wasm-ld >/dev/null || apt+=(lld)
  [ -e /usr/lib/wasm32-wasi/crt1-reactor.o ] || apt+=(wasi-libc)
  if command -v clang >/dev/null; then
    local rt major
    rt="$(clang -print-resource-dir)/lib/wasi/libclang_rt.builtins-wasm32.a"
    major=$(clang -dumpversion | cut -d. -f1)
    [ -e "$rt" ] || apt+=("libclang-rt-$major-dev-wasm32")
  fi
  command -v cc >/dev/null || apt+=(gcc)
  [ -x /usr/bin/rustc ] || apt+=(rustc)
  [ -x /usr/bin/cargo ] || apt+=(cargo)
  if [ -x /usr/bin/rustc ]; then
    [ -d "$(/usr/bin/rustc --print sysroot)/lib/rustlib/wasm32-unknown-unknown/lib" ] || apt+=(libstd-rust-dev-wasm32)
  fi
  command -v node >/dev/null || apt+=(nodejs)
  command -v npm >/dev/null || apt+=(npm)
  command -v wat2wasm >/dev/null || apt+=(wabt)
  [ -x sdk/assemblyscript/node_modules/.bin/asc ] || npm=yes
  [ -x sdk/assemblyscript/node_modules/.bin/wasm-opt ] || npm=yes # binaryen, for the Rust plugins
}

check
[ ${#apt[@]} -eq 0 ] && [ $npm = no ] && exit 0

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  # Two rounds: what is needed can depend on what the first round installs
  # (clang's version names its wasm32 runtime package).
  for round in 1 2; do
    [ ${#apt[@]} -eq 0 ] && break
    echo "tools-langs: installing ${apt[*]} (apt)" >&2
    export DEBIAN_FRONTEND=noninteractive
    [ $round = 1 ] && apt-get update -qq >/dev/null
    apt-get install -y -qq "${apt[@]}" >/dev/null
    check
  done
  if command -v npm >/dev/null && [ $npm = yes ]; then
    echo "tools-langs: installing AssemblyScript and binaryen (npm ci in sdk/assemblyscript)" >&2
    (cd sdk/assemblyscript && npm ci --no-audit --no-fund --loglevel=error)
  fi
  check
  [ ${#apt[@]} -eq 0 ] && [ $npm = no ] && exit 0
fi

echo "tools-langs: the C, Rust and AssemblyScript plugins cannot be built or tested:" >&2
[ ${#apt[@]} -gt 0 ] && echo "  missing ${apt[*]}; install with: sudo apt-get install -y ${apt[*]}" >&2
[ $npm = yes ] && echo "  missing the AssemblyScript compiler or binaryen's wasm-opt; install with: (cd sdk/assemblyscript && npm ci)" >&2
exit 1
