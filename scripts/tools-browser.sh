#!/usr/bin/env bash
# Installs what the dashboard's browser test (host/web, TestDashboardInChromium)
# needs: Debian's chromium and chromium-driver, when they are missing and we
# are root (as on CI); otherwise says exactly what is missing and fails.
set -euo pipefail
missing=()
[ -x /usr/bin/chromium ] || missing+=(chromium)
command -v chromedriver >/dev/null || missing+=(chromium-driver)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  echo "tools-browser: installing ${missing[*]} (apt)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "${missing[@]}" >/dev/null
  /usr/bin/chromium --version >&2
  exit 0
fi
echo "tools-browser: missing ${missing[*]}; install with: sudo apt-get install ${missing[*]}" >&2
exit 1
