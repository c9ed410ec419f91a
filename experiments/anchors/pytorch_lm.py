#!/usr/bin/python3
"""PyTorch anchor for the LM training step (the paper's Fig. 4 left; issue 46 item 5): what a researcher would
otherwise run, timed beside our `qrnn train-speed` on the same configuration and the same PTB batches.

  /usr/bin/python3 experiments/anchors/pytorch_lm.py experiments/paper_fig4_left.yaml \
      [--warmup 2 --batches 5] [--results results/fig4_torch.h5] [--qrnn build/qrnn | --qrnn none]
  ./build/qrnn report results/fig4_torch.h5                               # qrnn, torch-qrnn, torch-lstm in one table
  ./build/qrnn report results/paper_fig4_left.h5 results/fig4_torch.h5    # also beside the train-speed run's models

Models (Debian's python3-torch, float32, training mode, torch.set_num_threads(--threads, default 2)):
- torch-lstm: nn.Embedding -> dropout(io_dropout) -> nn.LSTM(layers, dropout between layers) -> dropout(io_dropout)
  -> nn.Linear decoder -> CrossEntropyLoss (mean over tokens);
- torch-qrnn: the same embedding and decoder around a stack of QRNN layers as salesforce's pytorch-qrnn runs them on
  a CPU: one nn.Linear over [x_{t-k+1} .. x_t] giving Z, F, O; zoneout on F (F * bernoulli(1 - zoneout)); its CPU
  ForgetMult, a Python loop over time (h_t = F_t Z_t + (1 - F_t) h_{t-1}); H = sigmoid(O) * C; the last k-1 inputs
  and the last cell carried to the next batch; dropout between layers.
Both: OMP_WAIT_POLICY=passive unless set (as our binary sets it for itself: on a shared machine spinning OpenMP
threads slowed torch's steps 2-10x); clip_grad_norm_(clip) then torch.optim.SGD(lr, weight_decay) - the project's
convention (docs/training.md, "One optimizer step"); the recurrent state carried from batch to batch, detached; the vocabulary of the training
file padded with unused words to `vocab` (10,000), as `qrnn train-speed` does; batch i of B streams x bptt as
lm/corpus.cpp cuts them (each pass over the data restarts from zero state).

Each step is split as ours (lm/step_timing.h), with time.perf_counter around the pieces:
- other: optimizer.zero_grad() (torch 1.13's default: the gradients are zeroed, not freed) and the rest;
- rnn: embedding, stack and dropouts, forward + backward;
- softmax: decoder and loss, forward + backward;
- optim: clip_grad_norm_ + SGD step.
To time the two backwards apart, the stack and the decoder are two autograd graphs: the decoder's input is the
stack's output detached with requires_grad; the loss is backwarded first (softmax), then the stack with the
decoder input's gradient (rnn). This is the same work as one graph's backward, in the same order.

How the ratio is measured, and why this way: the script itself runs our QRNN (`qrnn train-speed CONFIG --models
qrnn`, one short process per round: `warmup` untimed steps, then --per-round timed ones) and the two torch models
in rounds, the order rotated from round to round, and writes all three into one results file in our step-timing
layout (lm/step_timing.h; models `qrnn`, `torch-qrnn`, `torch-lstm`). Index i of every model's series then comes
from the same round, seconds apart, so `qrnn report` pairs them: the "paired" ratios (median over rounds of the
per-round ratio) cancel slow drifts of machine load, which on a shared machine move absolute times by tens of
percent between separate runs - a ratio of two medians taken minutes or hours apart does not. Our process is
restarted every round (its JIT start, ~5-15 s, is not timed) because our timing loop lives in the C++ binary;
that keeps the binary's own timing code (the same numbers `qrnn train-speed` reports), rather than a second
re-implementation of it. `--qrnn none` times the torch models alone (faster; e.g. to report beside an existing
`qrnn train-speed` file): `qrnn report` then says that its ratios come from separate runs.
"""
import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time

# As our binary (runtime/timing.h, default_openmp_wait_policy): torch's OpenMP (libgomp, read when it is loaded)
# waits passively unless told otherwise, so that on a shared machine neither side's threads spin on cores the
# other jobs need - spinning cost the torch LSTM 2-4x under load here. An explicit OMP_WAIT_POLICY is kept.
os.environ.setdefault("OMP_WAIT_POLICY", "passive")

import h5py  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402
import yaml  # noqa: E402

# The configuration keys this anchor reads (a `qrnn train-speed` YAML), each overridable by --KEY VALUE.
KEYS = {"train": str, "vocab": int, "emb": int, "hidden": int, "layers": int, "batch": int, "bptt": int,
        "pooling": str, "window": int, "zoneout": float, "dropout": float, "io_dropout": float, "lr": float,
        "clip": float, "weight_decay": float, "warmup": int, "batches": int, "tie_weights": bool}
DEFAULTS = {"train": "data/ptb/ptb.valid.txt", "vocab": 0, "emb": 640, "hidden": 640, "layers": 2, "batch": 20,
            "bptt": 105, "pooling": "fo", "window": 2, "zoneout": 0.0, "dropout": 0.0, "io_dropout": 0.0, "lr": 1.0,
            "clip": 0.25, "weight_decay": 0.0, "warmup": 2, "batches": 10, "tie_weights": False}
PARTS = ["rnn_ms", "softmax_ms", "optim_ms", "other_ms", "total_ms"]
TORCH_MODELS = ["torch-qrnn", "torch-lstm"]


# ---- Data: as lm/corpus.cpp and `qrnn train-speed` (lm/step_timing.cpp) ----------------------------------------

def file_words(path):
    """White-space separated words, "<eos>" after every line."""
    words = []
    with open(path) as f:
        for line in f:
            words.extend(line.split())
            words.append("<eos>")
    return words


def load_data(path, vocab_size, batch):
    """(token streams [B][L] int64, vocabulary size, words the file gives): the file's words in order of first
    appearance, then <eos>, <unk>; padded with unused words to vocab_size (the softmax's width)."""
    words = file_words(path)
    vocab = {}
    for w in words + ["<eos>", "<unk>"]:
        vocab.setdefault(w, len(vocab))
    file_vocab = len(vocab)
    if vocab_size and vocab_size < file_vocab:
        raise SystemExit(f"vocab {vocab_size} is smaller than the {file_vocab} words of {path}")
    tokens = np.asarray([vocab[w] for w in words], dtype=np.int64)
    L = len(tokens) // batch
    return torch.from_numpy(tokens[:batch * L].reshape(batch, L).T.copy()), max(vocab_size, file_vocab), file_vocab


def full_batches(streams, bptt):
    """Batches of the whole bptt length (inputs stream_len - 1)."""
    return (streams.shape[0] - 1) // bptt


def get_batch(streams, i, bptt):
    """Inputs and targets [T][B] of batch i, the targets shifted by one."""
    return streams[i * bptt:(i + 1) * bptt], streams[i * bptt + 1:(i + 1) * bptt + 1]


# ---- Models --------------------------------------------------------------------------------------------------

class QRNNLayer(nn.Module):
    """pytorch-qrnn's QRNNLayer (output gate, window k, zoneout, save_prev_x) with its CPU ForgetMult."""

    def __init__(self, n, m, window, zoneout):
        super().__init__()
        self.m, self.window, self.zoneout = m, window, zoneout
        self.linear = nn.Linear(window * n, 3 * m)

    def forward(self, x, state):
        prev_x, c = state  # [k-1][B][n], [B][m]
        T = x.shape[0]
        xs = torch.cat([prev_x, x], 0) if self.window > 1 else x
        source = torch.cat([xs[j:j + T] for j in range(self.window)], 2)  # [x_{t-k+1} .. x_t]
        z, f, o = self.linear(source).chunk(3, 2)
        z, f = torch.tanh(z), torch.sigmoid(f)
        if self.training and self.zoneout > 0:
            f = f * f.new_empty(f.shape).bernoulli_(1 - self.zoneout)
        # pytorch-qrnn's CPUForgetMult: h_t = f_t * z_t + (1 - f_t) * h_{t-1}, one step per Python iteration.
        forgets = f.split(1, 0)
        h, hs = c, []
        for t, fz in enumerate((f * z).split(1, 0)):
            h = fz[0] + (1 - forgets[t][0]) * h
            hs.append(h)
        cs = torch.stack(hs)
        return torch.sigmoid(o) * cs, (xs[T:] if self.window > 1 else prev_x, cs[-1])


class LanguageModel(nn.Module):
    """Embedding -> dropout -> stack -> dropout -> decoder (nn.Linear); `kind` torch-lstm or torch-qrnn."""

    def __init__(self, kind, vocab, cfg):
        super().__init__()
        self.kind, self.cfg = kind, cfg
        emb, hidden, layers = cfg["emb"], cfg["hidden"], cfg["layers"]
        self.embedding = nn.Embedding(vocab, emb)
        if kind == "torch-lstm":
            self.lstm = nn.LSTM(emb, hidden, layers, dropout=cfg["dropout"] if layers > 1 else 0.0)
        else:
            self.qrnn = nn.ModuleList(QRNNLayer(emb if i == 0 else hidden, hidden, cfg["window"], cfg["zoneout"])
                                      for i in range(layers))
        self.decoder = nn.Linear(hidden, vocab)

    def zero_state(self, B):
        c = self.cfg
        if self.kind == "torch-lstm":
            z = torch.zeros(c["layers"], B, c["hidden"])
            return (z, z.clone())
        return [(torch.zeros(c["window"] - 1, B, c["emb"] if i == 0 else c["hidden"]), torch.zeros(B, c["hidden"]))
                for i in range(c["layers"])]

    @staticmethod
    def detach(state):
        if isinstance(state, tuple):
            return tuple(s.detach() for s in state)
        return [(p.detach(), c.detach()) for p, c in state]

    def stack(self, inputs, state):
        """rnn: [T][B] tokens -> decoder input [T][B][hidden], new state."""
        p = self.cfg["io_dropout"]
        x = F.dropout(self.embedding(inputs), p, self.training)
        if self.kind == "torch-lstm":
            x, state = self.lstm(x, state)
        else:
            new_state = []
            for i, layer in enumerate(self.qrnn):
                if i > 0:
                    x = F.dropout(x, self.cfg["dropout"], self.training)
                x, s = layer(x, state[i])
                new_state.append(s)
            state = new_state
        return F.dropout(x, p, self.training), state


class Timed:
    """One torch model, its optimizer, its carried state and its per-step times."""

    def __init__(self, kind, vocab, cfg, seed):
        torch.manual_seed(seed)
        self.kind, self.cfg = kind, cfg
        self.model = LanguageModel(kind, vocab, cfg).train()
        self.params = list(self.model.parameters())
        self.opt = torch.optim.SGD(self.params, lr=cfg["lr"], weight_decay=cfg["weight_decay"])
        self.state = None
        self.times = {p: [] for p in PARTS}

    def step(self, inputs, targets, restart, record):
        if restart or self.state is None:
            self.state = self.model.zero_state(inputs.shape[1])
        c = self.cfg
        t0 = time.perf_counter()
        self.opt.zero_grad()
        t1 = time.perf_counter()
        out, state = self.model.stack(inputs, self.state)
        t2 = time.perf_counter()
        dec_in = out.detach().requires_grad_()
        logits = self.model.decoder(dec_in.view(-1, c["hidden"]))
        loss = F.cross_entropy(logits, targets.reshape(-1))
        loss.backward()
        t3 = time.perf_counter()
        out.backward(dec_in.grad)
        t4 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(self.params, c["clip"])
        self.opt.step()
        t5 = time.perf_counter()
        self.state = self.model.detach(state)
        if record:
            ms = lambda a, b: (b - a) * 1e3  # noqa: E731
            rnn, softmax, optim, total = ms(t1, t2) + ms(t3, t4), ms(t2, t3), ms(t4, t5), ms(t0, t5)
            for part, v in zip(PARTS, [rnn, softmax, optim, total - rnn - softmax - optim, total]):
                self.times[part].append(v)
        return float(loss)


def self_check():
    """The QRNN layer computes fo-pooling: compare with the recurrence written out in float64 on a tiny shape."""
    torch.manual_seed(0)
    T, B, n, m = 5, 2, 3, 4
    layer = QRNNLayer(n, m, 2, 0.0).double().eval()
    x, x0, c0 = torch.randn(T, B, n, dtype=torch.float64), torch.randn(1, B, n, dtype=torch.float64), torch.randn(B, m, dtype=torch.float64)
    h, (px, cl) = layer(x, (x0, c0))
    W, b = layer.linear.weight.detach(), layer.linear.bias.detach()
    c = c0
    for t in range(T):
        prev = x[t - 1] if t > 0 else x0[0]
        g = torch.cat([prev, x[t]], 1) @ W.T + b
        z, f, o = torch.tanh(g[:, :m]), torch.sigmoid(g[:, m:2 * m]), torch.sigmoid(g[:, 2 * m:])
        c = f * z + (1 - f) * c
        assert torch.allclose(h[t], o * c, atol=1e-12), "anchor QRNN disagrees with the recurrence"
    assert torch.equal(px[0], x[-1]) and torch.allclose(cl, c), "anchor QRNN carries the wrong state"


# ---- Ours: `qrnn train-speed --models qrnn` ------------------------------------------------------------------

def run_ours(binary, config_path, cfg, overrides, warmup, batches, workdir):
    """One `qrnn train-speed` process of our QRNN: (its per-part times of `batches` timed steps, its root attributes,
    its parameter count)."""
    out = os.path.join(workdir, "ours.h5")
    cmd = [binary, "train-speed", config_path, "--models", "qrnn", "--warmup", str(warmup), "--batches", str(batches),
           "--results", out]
    for k in overrides:
        if k in ("warmup", "batches"):
            continue
        cmd += ["--" + k, str(cfg[k]).lower() if isinstance(cfg[k], bool) else str(cfg[k])]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed ({r.returncode}):\n{r.stdout}{r.stderr}")
    with h5py.File(out, "r") as f:
        attrs = {k: (v.decode() if isinstance(v, bytes) else v) for k, v in f.attrs.items()}
        times = {p: [float(v) for v in f["models/qrnn"][p][:]] for p in PARTS}
        params = int(f["models/qrnn"].attrs["parameters"])
    return times, attrs, params


# ---- Results file: lm/step_timing.h's layout -----------------------------------------------------------------

def cpu_model():
    with open("/proc/cpuinfo") as f:
        m = re.search(r"model name\s*:\s*(.*)", f.read())
    return m.group(1).strip() if m else "unknown"


def write_results(path, models, attrs):
    """models: [(name, times {part: [ms]}, parameters)]; attrs: the root attributes but format and models.
    Written to a temporary file, then renamed (atomic, as ours)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = path + ".tmp"
    with h5py.File(tmp, "w") as f:
        f.attrs["format"] = "qrnn-lm-step-timing"
        f.attrs["models"] = ",".join(m[0] for m in models)
        for k, v in attrs.items():
            f.attrs[k] = np.int64(v) if isinstance(v, int) else v
        for name, times, params in models:
            g = f.create_group(f"models/{name}")
            for p in PARTS:
                g.create_dataset(p, data=np.asarray(times[p], dtype=np.float64))
            g.attrs["parameters"] = np.int64(params)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("config", nargs="?", default="experiments/paper_fig4_left.yaml", help="a `qrnn train-speed` YAML")
    for k, t in KEYS.items():
        ap.add_argument("--" + k, type=(lambda s: s.lower() in ("1", "true", "yes")) if t is bool else t,
                        help="overrides the YAML's key")
    ap.add_argument("--results", default="results/fig4_torch.h5", help="step-timing results file written")
    ap.add_argument("--qrnn", default="build/qrnn", help="our binary, run each round beside the torch models; 'none': torch only")
    ap.add_argument("--per-round", type=int, default=1, help="timed steps of each model per round (ours: per process)")
    ap.add_argument("--models", default=",".join(TORCH_MODELS), help="torch models (torch-qrnn, torch-lstm)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()

    with open(a.config) as f:
        yml = yaml.safe_load(f) or {}
    cfg = dict(DEFAULTS)
    cfg.update({k: KEYS[k](v) for k, v in yml.items() if k in KEYS})
    overrides = [k for k in KEYS if getattr(a, k) is not None]
    for k in overrides:
        cfg[k] = getattr(a, k)
    if cfg["pooling"] != "fo" or cfg["tie_weights"]:
        raise SystemExit(f"the anchor models QRNN fo-pooling without tied weights (pooling {cfg['pooling']}, tie_weights {cfg['tie_weights']})")
    torch_models = [m for m in a.models.split(",") if m]
    for m in torch_models:
        if m not in TORCH_MODELS:
            raise SystemExit(f"--models: unknown model {m} (expected {', '.join(TORCH_MODELS)})")
    ours = a.qrnn.lower() != "none"
    if ours and not os.path.exists(a.qrnn):
        raise SystemExit(f"--qrnn {a.qrnn}: no such binary (build it, or --qrnn none for the torch models alone)")

    torch.set_num_threads(a.threads)
    self_check()
    streams, vocab, file_vocab = load_data(cfg["train"], cfg["vocab"], cfg["batch"])
    full = full_batches(streams, cfg["bptt"])
    if full < 1:
        raise SystemExit(f"{cfg['train']}: no batch of {cfg['batch']} x {cfg['bptt']}")
    warmup, batches, K = cfg["warmup"], cfg["batches"], max(1, a.per_round)
    rounds = (batches + K - 1) // K
    print(f"PyTorch {torch.__version__}, {a.threads} threads, on {cpu_model()}: {cfg['layers']} x {cfg['hidden']}, "
          f"embedding {cfg['emb']}, batch {cfg['batch']} x bptt {cfg['bptt']}, vocabulary {vocab} ({file_vocab} from "
          f"{cfg['train']}); {warmup} warm-up steps, {batches} timed in {rounds} rounds of {K}"
          + (f", beside `{a.qrnn} train-speed --models qrnn` (one process a round)" if ours else ", torch only"), flush=True)

    timed = {m: Timed(m, vocab, cfg, a.seed) for m in torch_models}
    position = {m: 0 for m in torch_models}  # the next batch of each torch model (its state carried through the data)

    def steps(m, n, record):
        for _ in range(n):
            i = position[m] % full
            inputs, targets = get_batch(streams, i, cfg["bptt"])
            timed[m].step(inputs, targets, i == 0, record)
            position[m] += 1

    for m in torch_models:
        steps(m, warmup, False)
    qrnn_times, qrnn_attrs, qrnn_params = {p: [] for p in PARTS}, {}, 0
    order = (["qrnn"] if ours else []) + torch_models
    with tempfile.TemporaryDirectory(prefix="pytorch_lm_") as work:
        done = 0
        for r in range(rounds):
            n = min(K, batches - done)
            line = f"round {r + 1}/{rounds}:"
            for j in range(len(order)):
                m = order[(r + j) % len(order)]
                if m == "qrnn":
                    t, qrnn_attrs, qrnn_params = run_ours(a.qrnn, a.config, cfg, overrides, warmup, n, work)
                    for p in PARTS:
                        qrnn_times[p] += t[p]
                else:
                    steps(m, n, True)
                    t = timed[m].times
                line += f"  {m} {statistics.median(t['total_ms'][-n:]):.0f} ms (rnn {statistics.median(t['rnn_ms'][-n:]):.0f})"
            print(line, flush=True)
            done += n

    config = "".join(f"{k}: {str(v).lower() if isinstance(v, bool) else v}\n" for k, v in cfg.items())
    config += (f"models: {','.join(order)}\nanchor: experiments/anchors/pytorch_lm.py\ntorch: {torch.__version__}\n"
               f"threads: {a.threads}\nper_round: {K}\nrounds: {rounds}\n")
    env = (f"torch {torch.__version__}, torch.set_num_threads({a.threads}), OMP_WAIT_POLICY="
           f"{os.environ['OMP_WAIT_POLICY']}" + "".join(f" {k}={v}" for k, v in sorted(os.environ.items())
                                                         if k.startswith(("OPENBLAS_", "MKL_", "DNNL_", "OMP_NUM")))
           + f"; rounds of {K} step(s) per model")
    if ours:
        env += f"; ours: {qrnn_attrs.get('environment', '')}".rstrip("; ")
    attrs = {"config": config, "vocab": vocab, "vocab_file": file_vocab, "warmup": warmup, "batches": batches,
             "host": socket.gethostname(), "cpu_model": qrnn_attrs.get("cpu_model", cpu_model()),
             "cores": int(qrnn_attrs.get("cores", os.cpu_count())),
             "target": qrnn_attrs.get("target", f"pytorch {torch.__version__} (no Halide target)"), "environment": env}
    models = ([("qrnn", qrnn_times, qrnn_params)] if ours else []) + \
             [(m, timed[m].times, sum(p.numel() for p in timed[m].params)) for m in torch_models]
    write_results(a.results, models, attrs)

    print(f"\nresults: {a.results}\nper-batch time, ms (median of {batches}):")
    print(f"{'model':>11} {'parameters':>11} {'rnn':>8} {'softmax':>8} {'optim':>7} {'other':>7} {'total':>8}")
    for name, t, params in models:
        print(f"{name:>11} {params:>11} " + " ".join(f"{statistics.median(t[p]):>{w}.1f}"
                                                      for p, w in zip(PARTS, [8, 8, 7, 7, 8])))
    if ours:
        for m in torch_models:
            paired = lambda p: statistics.median(x / q for x, q in zip(timed[m].times[p], qrnn_times[p]))  # noqa: E731
            print(f"{m} / qrnn, paired (same rounds): rnn {paired('rnn_ms'):.2f}x, softmax {paired('softmax_ms'):.2f}x, "
                  f"step {paired('total_ms'):.2f}x")
    print(f"(`{a.qrnn if ours else 'build/qrnn'} report {a.results}` for the table, bars and targets)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
