#!/usr/bin/env bash
# Installs the toolchains the test suite needs when they are missing and we
# are root (as on CI and a fresh dev machine); otherwise says exactly what
# is missing and how to install it, and fails.
set -euo pipefail
missing=()
command -v wat2wasm >/dev/null || missing+=(wabt)
command -v kcat >/dev/null || missing+=(kcat) # the Kafka end-to-end test's independent client
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "tools: installing ${missing[*]} (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
echo "tools: missing ${missing[*]}; install with: sudo apt-get install ${missing[*]}" >&2
exit 1
