#!/usr/bin/env python3
"""The figures of docs/kernels.md, measured side by side (processes alternating, medians of ROUNDS):

  startup: seconds from start to the first result line of `qrnn run` (defaults; --pass training; a --knob
           override in a second process) and to the first progress line of `qrnn train` (the README's PTB
           model), each with an empty user cache, for every binary given (e.g. an older build's, then this one's);
  speed:   median ms of `qrnn run` with kernels loaded (built-in or cached) against the same run JIT-compiled
           by libHalide (QRNN_CACHE_DIR=off QRNN_BUILTIN_KERNEL_DIR=off), host and AVX2, at 320 and 1024 units,
           inference and the training step.

usage: scripts/kernel_timings.py [--rounds N] [--what startup|speed|all] [QRNN_BINARY ...]   (default build/qrnn)
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AVX2 = "x86-64-linux-avx-avx2-f16c-fma-sse41"
STARTUP = [
    ("qrnn run (defaults)", ["run"], "median_ms", False),
    ("qrnn run --pass training", ["run", "--pass", "training"], "median_ms", False),
    ("qrnn train experiments/lm_ptb_small.yaml: first progress", ["train", "experiments/lm_ptb_small.yaml"], "step 1 ", False),
    ("qrnn run --knob tile_t=4, second process", ["run", "--knob", "tile_t=4"], "median_ms", True),
]


def seconds_to(binary, args, marker, env):
    """Seconds from start until a line containing marker is printed (the process is then stopped)."""
    start = time.time()
    p = subprocess.Popen([binary] + args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, cwd=ROOT)
    seen = None
    for line in p.stdout:
        if marker in line:
            seen = time.time() - start
            p.kill()
            break
    p.wait()
    if seen is None:
        raise SystemExit(f"{binary} {' '.join(args)}: no line with '{marker}'")
    return seen


def startup(binaries, rounds):
    print("seconds to the first result / progress line, empty user cache (medians of %d rounds)" % rounds)
    print("%-58s" % "command" + "".join("%14s" % os.path.basename(os.path.dirname(os.path.dirname(b)) or b) for b in binaries))
    for name, args, marker, second in STARTUP:
        times = {b: [] for b in binaries}
        for _ in range(rounds):
            for b in binaries:
                cache = tempfile.mkdtemp()
                env = dict(os.environ, QRNN_CACHE_DIR=cache)
                if second:
                    seconds_to(b, args, marker, env)
                times[b].append(seconds_to(b, args, marker, env))
                shutil.rmtree(cache)
        print("%-58s" % name + "".join("%14.2f" % statistics.median(times[b]) for b in binaries), flush=True)


def median_ms(binary, args, env):
    out = subprocess.run([binary, "run", "--repeats", "11"] + args, capture_output=True, text=True, env=env, cwd=ROOT, check=True).stdout
    head, row = out.strip().splitlines()[:2]
    return float(row.split()[head.split().index("median_ms")])


def speed(binary, rounds):
    print("median ms, loaded kernels vs JIT-compiled (medians of %d rounds, processes alternating)" % rounds)
    for target in ["host", AVX2]:
        for width, size in [("320", ["--batch", "16", "--seq", "128"]),
                            ("1024", ["--batch", "20", "--seq", "105", "--input", "1024", "--hidden", "1024"])]:
            for pass_ in ["inference", "training"]:
                env = dict(os.environ)
                if target != "host":
                    env["HL_JIT_TARGET"] = target
                jit = dict(env, QRNN_CACHE_DIR="off", QRNN_BUILTIN_KERNEL_DIR="off")
                loaded, compiled = [], []
                for _ in range(rounds):
                    compiled.append(median_ms(binary, size + ["--pass", pass_], jit))
                    loaded.append(median_ms(binary, size + ["--pass", pass_], env))
                j, a = statistics.median(compiled), statistics.median(loaded)
                print("%-5s m=%-5s %-9s JIT %9.3f  loaded %9.3f  loaded/JIT %.3f" %
                      ("host" if target == "host" else "AVX2", width, pass_, j, a, a / j), flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--what", choices=["startup", "speed", "all"], default="all")
    parser.add_argument("binaries", nargs="*", default=[os.path.join(ROOT, "build", "qrnn")])
    a = parser.parse_args()
    binaries = [os.path.abspath(b) for b in a.binaries]
    if a.what in ("startup", "all"):
        startup(binaries, a.rounds)
    if a.what in ("speed", "all"):
        speed(binaries[-1], a.rounds)


if __name__ == "__main__":
    main()
