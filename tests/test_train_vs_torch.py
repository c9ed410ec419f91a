"""`qrnn train` step by step against an independent float64 PyTorch re-implementation (tests/torch_lm.py).

For each case, `qrnn train` runs max_batches steps of one epoch on a tiny generated corpus with
--save_initial (parameters before the first update), --step_log (loss and gradient norm per step) and
--checkpoint (final parameters); tests/torch_lm.py replays the same steps from the same initial parameters
with torch.autograd, the same batches and the same dropout/zoneout masks, the mean cross-entropy,
torch.nn.utils.clip_grad_norm_ and torch.optim.SGD(weight_decay). Passes when, for every case, every step's
loss agrees to 1e-5 (relative), every step's gradient norm to 1e-4 (relative) and every final parameter to
1e-4 of its largest magnitude. Then deliberately wrong torch variants (summed loss, weight decay before
clipping, no state carry, z/f swapped) must each fail that comparison: the test can fail.
Run by ctest with Debian's /usr/bin/python3 (QRNN_CLI names the binary; else build/qrnn). docs/pytorch_mapping.md.
"""
import concurrent.futures
import csv
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import torch_lm  # noqa: E402
from torch_lm import Config  # noqa: E402

LOSS_TOL, NORM_TOL, PARAM_TOL = 1e-5, 1e-4, 1e-4

REGULARISED = dict(zoneout=0.2, dropout=0.3, io_dropout=0.25, layers=2)
CASES = [
    # name, keys. Each QRNN pooling once, each window once; clip active in all but the clip-0 case.
    ("qrnn f k=1", Config(model="qrnn", pooling="f", window=1, clip=0.25, seed=7, **REGULARISED)),
    ("qrnn fo k=2 wd", Config(model="qrnn", pooling="fo", window=2, clip=0.25, weight_decay=0.01, seed=11,
                              **REGULARISED)),
    ("qrnn ifo k=3 tied clip0", Config(model="qrnn", pooling="ifo", window=3, clip=0.0, lr=0.5, tie_weights=True,
                                       seed=3, **REGULARISED)),
    ("lstm-onednn", Config(model="lstm-onednn", window=1, clip=0.25, weight_decay=0.01, dropout=0.3, io_dropout=0.25,
                           seed=5)),
    ("lstm-halide", Config(model="lstm-halide", window=1, clip=0.25, dropout=0.3, io_dropout=0.25, seed=6)),
    ("cnn k=2", Config(model="cnn", window=2, clip=0.25, weight_decay=0.01, dropout=0.3, io_dropout=0.25, seed=9)),
]
WRONG_CASE = "qrnn fo k=2 wd"  # the deliberately wrong torch variants run on this case only


def qrnn_binary():
    path = os.environ.get("QRNN_CLI") or os.path.join(os.path.dirname(HERE), "build", "qrnn")
    if not os.path.exists(path):
        sys.exit(f"qrnn binary not found at {path} (set QRNN_CLI)")
    return path


def write_corpus(directory):
    """A deterministic tiny corpus: ~400 training tokens over 30 words (a skewed, bigram-flavoured draw from a
    32-bit LCG), lines of 4-11 words; the validation split has a word outside the vocabulary."""
    state = 12345

    def draw(n):
        nonlocal state
        state = (1664525 * state + 1013904223) & 0xFFFFFFFF
        return (state >> 8) % n

    def lines(count):
        out, prev = [], 0
        for _ in range(count):
            words = []
            for _ in range(4 + draw(8)):
                prev = (prev + 1 + draw(3)) % 30 if draw(4) else draw(30) * draw(30) // 30
                words.append(f"w{prev:02d}")
            out.append(" ".join(words))
        return out

    paths = {name: os.path.join(directory, f"{name}.txt") for name in ("train", "valid")}
    with open(paths["train"], "w") as f:
        f.write("\n".join(lines(52)) + "\n")
    with open(paths["valid"], "w") as f:
        f.write("\n".join(lines(8) + ["w01 unseenword w02"]) + "\n")
    return paths


def run_qrnn(cli, cfg, corpus, directory):
    """`qrnn train` of one epoch: the files it wrote and its step log rows."""
    os.makedirs(directory, exist_ok=True)
    files = {k: os.path.join(directory, k) for k in ("initial.h5", "final.h5", "steps.csv")}
    cmd = [cli, "train", "--train", corpus["train"], "--valid", corpus["valid"], *cfg.cli_args(), "--epochs", "1",
           "--log_seconds", "1000", "--save_initial", files["initial.h5"], "--checkpoint", files["final.h5"],
           "--step_log", files["steps.csv"]]
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{proc.stdout}")
    with open(files["steps.csv"]) as f:
        rows = list(csv.DictReader(f))
    return files, rows


def compare(cfg, rows, final_checkpoint, result):
    """Max relative differences (ours vs torch): per-step loss, per-step grad norm, final parameters
    (|ours - torch| / max|torch| per parameter; the worst named)."""
    if len(rows) != len(result.losses):
        return {"steps": f"{len(rows)} logged vs {len(result.losses)} in torch", "fail": True}
    lr_ok = all(abs(float(r["lr"]) - cfg.lr) <= 1e-12 * cfg.lr for r in rows)
    loss = max(abs(float(r["loss"]) - l) / abs(l) for r, l in zip(rows, result.losses))
    norm = max(abs(float(r["grad_norm"]) - g) / abs(g) for r, g in zip(rows, result.grad_norms))
    ours, _ = torch_lm.read_checkpoint(final_checkpoint)
    if sorted(ours) != sorted(result.params):
        return {"params": f"names differ: {sorted(ours)} vs {sorted(result.params)}", "fail": True}
    param, worst = 0.0, ""
    for name, theirs in result.params.items():
        d = float(abs(ours[name] - theirs).max() / abs(theirs).max())
        if d >= param:
            param, worst = d, name
    fail = not (loss <= LOSS_TOL and norm <= NORM_TOL and param <= PARAM_TOL and lr_ok)
    return {"loss": loss, "norm": norm, "param": param, "worst": worst, "lr_ok": lr_ok, "fail": fail}


def describe(d):
    if "loss" not in d:
        return str(d)
    return (f"loss rel {d['loss']:.2e}  grad_norm rel {d['norm']:.2e}  params rel {d['param']:.2e} ({d['worst']})"
            + ("" if d["lr_ok"] else "  lr differs"))


def main():
    start = time.time()
    # The documented module mappings (docs/pytorch_mapping.md) hold in torch itself.
    assert torch_lm.check_lstm_mapping() < 1e-12, "nn.LSTM mapping"
    assert torch_lm.check_qrnn_conv_mapping() < 1e-12, "Conv1d mapping"
    cli = qrnn_binary()
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        corpus = write_corpus(tmp)
        # Two qrnn processes at a time (most of each is JIT compilation); torch replays as they finish.
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            runs = [pool.submit(run_qrnn, cli, cfg, corpus, os.path.join(tmp, f"case{i}"))
                    for i, (_, cfg) in enumerate(CASES)]
            for (name, cfg), run in zip(CASES, runs):
                files, rows = run.result()
                result = torch_lm.train(cfg, files["initial.h5"], corpus["train"])
                d = compare(cfg, rows, files["final.h5"], result)
                clipped = sum(g > cfg.clip for g in result.grad_norms) if cfg.clip > 0 else 0
                print(f"{'FAIL' if d['fail'] else 'ok  '} {name:24s} {len(rows)} steps, clip active {clipped}x: "
                      f"{describe(d)}", flush=True)
                if d["fail"]:
                    failures.append(name)
                if name == WRONG_CASE:
                    for variant, what in torch_lm.WRONG_VARIANTS.items():
                        wrong = torch_lm.train(cfg, files["initial.h5"], corpus["train"], variant=variant)
                        w = compare(cfg, rows, files["final.h5"], wrong)
                        print(f"{'ok  ' if w['fail'] else 'FAIL'}   wrong variant {variant} ({what}) must fail: "
                              f"{'fails' if w['fail'] else 'PASSES'}: {describe(w)}", flush=True)
                        if not w["fail"]:
                            failures.append(f"wrong variant {variant} not detected")
    print(f"wall time {time.time() - start:.1f} s")
    if failures:
        sys.exit("FAILED: " + "; ".join(failures))


if __name__ == "__main__":
    main()
