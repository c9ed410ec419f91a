#!/usr/bin/env bash
# `qrnn cache` and the kernel cache across processes: an empty cache fills with the kernels a run compiles, two
# processes compiling the same kernels at once both succeed and leave one entry each, a later process loads them
# (no new entry), --list names the component, --clear empties it, a second autotune compiles no candidate,
# QRNN_CACHE_DIR=off turns the cache off, and an unwritable cache directory falls back to compiling in memory with
# a warning.
set -euo pipefail
: "${QRNN_CLI:?}"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export QRNN_CACHE_DIR=$tmp/cache QRNN_BUILTIN_KERNEL_DIR=off
run=(--pooling ifo --seq 3 --batch 2 --input 5 --hidden 7 --warmup 0 --repeats 1)
fail() { echo "FAIL: $*"; exit 1; }

"$QRNN_CLI" cache | grep -q "entries 0," || fail "a new cache is not empty"
"$QRNN_CLI" run "${run[@]}" --pass training >"$tmp/a.txt" &
"$QRNN_CLI" run "${run[@]}" --pass training >"$tmp/b.txt" &
wait %1 || fail "the first of two concurrent runs failed"
wait %2 || fail "the second of two concurrent runs failed"
entries=$(ls "$QRNN_CACHE_DIR"/*.so | wc -l)
[ "$entries" -eq 2 ] || fail "a training run left $entries entries, expected 2 (forward, backward)"
[ -z "$(ls "$QRNN_CACHE_DIR" | grep '^tmp-' || true)" ] || fail "temporary files left: $(ls "$QRNN_CACHE_DIR")"
"$QRNN_CLI" run "${run[@]}" --pass training >/dev/null
[ "$(ls "$QRNN_CACHE_DIR"/*.so | wc -l)" -eq 2 ] || fail "a third run compiled again"
"$QRNN_CLI" cache --list | grep -q "CompiledTrainingLayer  *2 " || fail "--list does not show the training pair"
"$QRNN_CLI" cache --list | grep -q "ifo|tuned|" || fail "--list does not show the keys"
"$QRNN_CLI" cache --clear | grep -q "removed 2 entries" || fail "--clear did not remove 2 entries"
"$QRNN_CLI" cache | grep -q "entries 0," || fail "the cache is not empty after --clear"
tune=(autotune --schedules tuned --trials 2 --seq 5 --batch 2 --input 8 --hidden 8)
"$QRNN_CLI" "${tune[@]}" --db "$tmp/first.jsonl" >/dev/null 2>&1
tuned=$(ls "$QRNN_CACHE_DIR"/*.so | wc -l)
[ "$tuned" -ge 2 ] || fail "autotune's 2 trials left $tuned entries"
"$QRNN_CLI" "${tune[@]}" --db "$tmp/second.jsonl" >/dev/null 2>&1
[ "$(ls "$QRNN_CACHE_DIR"/*.so | wc -l)" -eq "$tuned" ] || fail "a second autotune compiled candidates again"
"$QRNN_CLI" cache --clear >/dev/null
QRNN_CACHE_DIR=off "$QRNN_CLI" cache | grep -q "kernel cache: off" || fail "QRNN_CACHE_DIR=off is not shown"
QRNN_CACHE_DIR=off "$QRNN_CLI" run "${run[@]}" >/dev/null
[ -z "$(ls "$QRNN_CACHE_DIR")" ] || fail "QRNN_CACHE_DIR=off wrote to the cache"
touch "$tmp/file"
QRNN_CACHE_DIR=$tmp/file/cache "$QRNN_CLI" run "${run[@]}" >/dev/null 2>"$tmp/err.txt" || fail "an unwritable cache failed the run"
grep -q "warning: kernel cache unused" "$tmp/err.txt" || fail "no warning for an unwritable cache: $(cat "$tmp/err.txt")"
QRNN_CACHE_MAX_MB=lots "$QRNN_CLI" cache >/dev/null 2>"$tmp/err.txt" && fail "QRNN_CACHE_MAX_MB=lots accepted"
grep -q "QRNN_CACHE_MAX_MB='lots'" "$tmp/err.txt" || fail "no error naming QRNN_CACHE_MAX_MB: $(cat "$tmp/err.txt")"
echo "kernel cache CLI: fill, share, reuse, list, clear, autotune, off, unwritable, bad limit: ok"
