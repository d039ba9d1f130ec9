#!/usr/bin/env bash
# The demo `make run` shows until the engine runs whole pipelines: each
# example plugin (built by `make plugins`) over sample records from
# plugins/testdata, through `bin/host plugin run`. Every output line is
# {"port": ..., "record": ...}; the summary line on stderr counts records.
set -euo pipefail
cd "$(dirname "$0")/.."
HOST=${HOST:-bin/host}
DATA=plugins/testdata

for p in valid enrich split high-temp reduce-sum; do
  if [ ! -f "plugins/$p/$p.wasm" ]; then
    echo "demo: plugins/$p/$p.wasm is missing; run 'make plugins' (or 'make run')" >&2
    exit 1
  fi
done

header() {
  echo
  echo "=== $1"
  shift
  for line in "$@"; do echo "    $line"; done
  echo
}

header "host plugin inspect plugins/valid/valid.wasm" \
  "What the host checks before it runs a plugin: the ABI v1 marker, the exports" \
  "and their signatures, the imports (only sluice_v1 and WASI), the memory it" \
  "declares. The kind comes from the plugin's own sluice_describe."
"$HOST" plugin inspect plugins/valid/valid.wasm

header "valid (filter) over $DATA/transactions.jsonl" \
  "Keeps the transactions whose amount is greater than 0: the ones with" \
  "amount -40, 0, -5 and 0 are dropped, 6 of 10 come out unchanged."
"$HOST" plugin run plugins/valid/valid.wasm --input "$DATA/transactions.jsonl"

header "enrich (map) with --config bank=NBI --config region=EU --config riskTier=2" \
  "Adds each config entry as a field, after the record's own fields; a number" \
  "in the config stays a number. Field order is kept from input to output."
"$HOST" plugin run plugins/enrich/enrich.wasm --input "$DATA/transactions.jsonl" \
  --config bank=NBI --config region=EU --config riskTier=2

header "split (flat-map) over $DATA/lines.jsonl" \
  "One input line becomes one record per word, lowercased, punctuation" \
  "trimmed: 4 lines in, many words out."
"$HOST" plugin run plugins/split/split.wasm --input "$DATA/lines.jsonl"

header "high-temp (process with a side output) with --operator-config threshold=30" \
  "Every reading goes to the main output; readings above 30 also go to the" \
  "side output \"alerts\" (30.0 itself is not above the threshold)."
"$HOST" plugin run plugins/high-temp/high-temp.wasm --input "$DATA/sensors.jsonl" --operator-config threshold=30

header "reduce-sum (keyed reduce) with --key accountId" \
  "Records keyed by accountId, as after a keyBy: the plugin keeps a running" \
  "sum of amount per account in host-managed keyed state and emits it after" \
  "each record (acct-17: 250, then 1450, then 1510)."
"$HOST" plugin run plugins/reduce-sum/reduce-sum.wasm --input "$DATA/transactions.jsonl" --key accountId

echo
echo "demo: done. Try your own records: $HOST plugin run FILE.wasm --input records.jsonl [--operator-config k=v]... [--key field]"
