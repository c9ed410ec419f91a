"""tools/make_corpus_source_task.py, run into a temporary directory, reproduces the committed
data/corpus-source/{train,valid,test}.tsv byte for byte (docs/text_tasks.md): the task's files are exactly what the
builder makes of data/ptb and data/wikitext-2, and it is deterministic. Run by ctest with Debian's /usr/bin/python3.
"""
import os
import subprocess
import sys
import tempfile

SOURCE = os.environ.get("QRNN_SOURCE_DIR", os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
SPLITS = ("train", "valid", "test")


def first_difference(a: bytes, b: bytes) -> str:
    """Where two files first differ, as a line number and the two lines."""
    la, lb = a.split(b"\n"), b.split(b"\n")
    for number, (x, y) in enumerate(zip(la, lb), 1):
        if x != y:
            return f"line {number}: committed {x[:80]!r}, regenerated {y[:80]!r}"
    return f"lengths differ: committed {len(la)} lines, regenerated {len(lb)}"


def main():
    committed = os.path.join(SOURCE, "data", "corpus-source")
    with tempfile.TemporaryDirectory() as out:
        subprocess.run([sys.executable, os.path.join(SOURCE, "tools", "make_corpus_source_task.py"),
                        "--source", SOURCE, "--out", out], check=True, stdout=subprocess.DEVNULL)
        for split in SPLITS:
            with open(os.path.join(committed, split + ".tsv"), "rb") as f:
                want = f.read()
            with open(os.path.join(out, split + ".tsv"), "rb") as f:
                got = f.read()
            if got != want:
                sys.exit(f"data/corpus-source/{split}.tsv differs from the builder's output: {first_difference(want, got)}"
                         " (rerun tools/make_corpus_source_task.py)")
    print(f"ok: data/corpus-source/{{{','.join(SPLITS)}}}.tsv reproduced byte for byte")


if __name__ == "__main__":
    main()
