#!/usr/bin/env bash
# Layering: includes run one way, from a directory to the same or a lower layer, never up:
#   core <- schedules <- runtime <- reference <- nn <- plugins <- lm <- tasks <- harness <- sweep <- tools, bench, report, gpu
# (tests/ may include anything). A `#include "DIR/..."` of a higher layer fails the test with one line per
# offending include (file:line: LAYER includes HIGHER). Before checking the repository, the check runs on a
# scratch tree holding one deliberate back-arrow and must fail there, so it cannot silently pass.
# Usage: tests/test_layering.sh [SOURCE_DIR]   (default: $QRNN_SOURCE_DIR, else the repository of this script)
set -u

layers=(core schedules runtime reference nn plugins lm tasks harness sweep tools)  # tools, bench, report and gpu: one top layer

# Prints every upward include under $1 (file:line: FROM includes TO (a higher layer)); exit status 1 if any.
check_tree() {
    local root=$1
    grep -rnE --include='*.h' --include='*.cpp' --include='*.in' '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"/]+/' \
        $(for d in "${layers[@]}" bench report gpu; do echo "$root/$d"; done) 2>/dev/null |
        awk -v root="$root/" -v layers="${layers[*]}" '
            BEGIN { n = split(layers, names, " "); for (i = 1; i <= n; i++) level[names[i]] = i; level["bench"] = level["report"] = level["gpu"] = n }
            {
                file = substr($0, length(root) + 1)          # DIR/.../name.h:LINE:text
                split(file, part, ":"); from = part[1]; sub(/\/.*/, "", from)
                to = $0; sub(/^[^"]*"/, "", to); sub(/\/.*/, "", to)
                if ((from in level) && (to in level) && level[to] > level[from]) {
                    print part[1] ":" part[2] ": " from " includes " to " (a higher layer)"; bad = 1
                }
            }
            END { exit bad }'
}

# Self-test: a tree with a clean include and a back-arrow (reference -> plugins) must fail, naming it.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$scratch"/reference "$scratch"/plugins
printf '#include "core/error.h"\n#include "plugins/lstm_params.h"\n' >"$scratch"/reference/bad.h
printf '#include "reference/bad.h"\n' >"$scratch"/plugins/good.cpp
if self=$(check_tree "$scratch"); then
    echo "FAIL: the layering check passed a tree with reference including plugins"
    exit 1
fi
if [ "$self" != "reference/bad.h:2: reference includes plugins (a higher layer)" ]; then
    echo "FAIL: the layering check reported, for a tree with one back-arrow:"
    echo "$self"
    exit 1
fi

source_dir=${1:-${QRNN_SOURCE_DIR:-$(cd "$(dirname "$0")/.." && pwd)}}
if ! check_tree "$source_dir"; then
    echo "FAIL: includes against the layering (${layers[*]} bench report gpu; README 'Layout of the code')"
    exit 1
fi
echo "layering ok: ${layers[*]} bench report gpu"
