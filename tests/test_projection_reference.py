"""tools/projection_reference.py (python3-xxhash) reproduces the golden table of docs/projection.md.

The same values are pinned in tests/test_projection.cpp for the C++ projection, so the two implementations and the
document agree. Run by ctest with Debian's /usr/bin/python3.
"""
import os
import re
import subprocess
import sys

SOURCE = os.environ.get("QRNN_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))


def golden_rows():
    """(token, seed, N, features) of the doc's table."""
    rows = []
    for line in open(os.path.join(SOURCE, "docs", "projection.md"), encoding="utf-8"):
        m = re.match(r"\| `([^`]*)`(?: \(UTF-8\))? \| (\S+) \| (\d+) \| `([-0-9 ]+)` \|", line)
        if m:
            seed = 2**64 - 1 if m.group(2) == "2^64-1" else int(m.group(2))
            rows.append((m.group(1) if m.group(1) != '""' else "", seed, int(m.group(3)), m.group(4).split()))
    return rows


def main():
    rows = golden_rows()
    if len(rows) < 4:
        sys.exit(f"docs/projection.md: expected 4 golden rows, found {len(rows)}")
    script = os.path.join(SOURCE, "tools", "projection_reference.py")
    for token, seed, n, expected in rows:
        out = subprocess.run([sys.executable, script, "--features", str(n), "--seed", str(seed), "--", token],
                             check=True, capture_output=True, text=True).stdout
        got = out.rstrip("\n").split("\t")[1].split()
        if got != expected:
            sys.exit(f"token {token!r} seed {seed} N {n}: script gives {' '.join(got)}, docs/projection.md {' '.join(expected)}")
    print(f"ok: {len(rows)} golden rows reproduced by tools/projection_reference.py")


if __name__ == "__main__":
    main()
