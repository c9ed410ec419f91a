"""An independent float64 PyTorch re-implementation of `qrnn train` (task lm), for cross-checking it.

Given the initial parameters that `qrnn train --save_initial FILE` wrote, the token files and the run's keys,
`train()` replays the same training steps with torch.autograd: the same batches (lm/corpus.cpp), the same
dropout and zoneout masks (the counter hash of core/hash_rng.h, bit-exact), the model of each `model` key
(QRNN, lstm-onednn / lstm-halide, cnn), the mean cross-entropy loss, torch.nn.utils.clip_grad_norm_ and
torch.optim.SGD(weight_decay=...). It returns the per-step losses and gradient norms and the final
parameters, to be compared with `--step_log` and the `--checkpoint` (tests/test_train_vs_torch.py).

Everything here is written from the documented conventions (docs/training.md, core/layout.h,
docs/pytorch_mapping.md); each function's docstring names the C++ it mirrors. `WRONG_VARIANTS` are
deliberate mistakes, used only to show that the comparison can fail.
"""
import dataclasses
import os
import re

import h5py
import numpy as np
import torch
import torch.nn.functional as F

# The stream base of nn/dropout.cpp (the language model's io_dropout and the layer stack's dropout in front
# of LSTM/CNN layers). Read from core/streams.h (`streams::nn_dropout`) when it exists, so that the one
# constant lives in the C++; this value is the fallback.
NN_DROPOUT_STREAM_BASE = 0x60000

WRONG_VARIANTS = {
    "sum_loss": "gradient of the summed loss instead of the mean",
    "decay_before_clip": "weight decay added to the gradient before clipping",
    "no_carry": "no state carried from batch to batch",
    "swap_zf": "QRNN gates z and f swapped",
}

# ---- Counter-based hash: core/hash_rng.h ---------------------------------------------------------------

def mix32(x):
    """lowbias32, core/hash_rng.h mix32: x a uint32 numpy array (or scalar); wraps mod 2^32."""
    x = np.asarray(x, dtype=np.uint32)
    with np.errstate(over="ignore"):
        x = x ^ (x >> np.uint32(16))
        x = x * np.uint32(0x7FEB352D)
        x = x ^ (x >> np.uint32(15))
        x = x * np.uint32(0x846CA68B)
        x = x ^ (x >> np.uint32(16))
    return x


def u32(v):
    """v mod 2^32 as numpy uint32 (the C++ static_cast<uint32_t>)."""
    return np.uint32(int(v) & 0xFFFFFFFF)


def stream_key(seed, stream):
    """core/hash_rng.h stream_key: mix32(seed ^ mix32(stream + 0x9e3779b9))."""
    with np.errstate(over="ignore"):
        return mix32(u32(seed) ^ mix32(u32(stream) + np.uint32(0x9E3779B9)))


def drawn_key(key, draw):
    """core/hash_rng.h drawn_key: draw 0 is the key itself (qrnn train's masks always use draw 0)."""
    if draw == 0:
        return u32(key)
    return stream_key(int(key), int(u32(draw) ^ mix32(u32(draw >> 32))))


def hash_at(key, t, b, ch):
    """core/hash_rng.h hash_at: mix32(ch ^ mix32(b ^ mix32(t ^ key))); arguments broadcast (uint32)."""
    t, b, ch = (np.asarray(v, dtype=np.int64).astype(np.uint32) for v in (t, b, ch))
    return mix32(ch ^ mix32(b ^ mix32(t ^ u32(key))))


def drop_threshold(p):
    """core/hash_rng.h drop_threshold: a draw is kept iff hash >= p * 2^32 (saturated)."""
    v = p * 4294967296.0
    return 4294967295 if v >= 4294967295.0 else int(v)


def keep_mask(key, p, t0, T, B, C):
    """Boolean [T][B][C]: hash_at(key, t0 + t, b, c) >= drop_threshold(p) (core/layout.h keep(); rows of
    absolute times t0 .. t0+T-1, t0 may be negative: the C++ casts to uint32)."""
    t = (t0 + np.arange(T, dtype=np.int64)).reshape(T, 1, 1) & 0xFFFFFFFF
    b = np.arange(B, dtype=np.int64).reshape(1, B, 1)
    c = np.arange(C, dtype=np.int64).reshape(1, 1, C)
    return hash_at(key, t, b, c) >= np.uint32(drop_threshold(p))


def nn_dropout_stream_base(source_dir=None):
    """The stream base of nn/dropout.cpp: core/streams.h's `nn_dropout(s) { return BASE + s; }` when that
    header exists (the one place the C++ defines it), else NN_DROPOUT_STREAM_BASE."""
    source_dir = source_dir or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    path = os.path.join(source_dir, "core", "streams.h")
    if os.path.exists(path):
        m = re.search(r"nn_dropout\(uint32_t (\w+)\)\s*\{\s*return\s+(0x[0-9a-fA-F]+|\d+)\s*\+\s*\1\s*;",
                      open(path).read())
        if not m:
            raise RuntimeError(f"{path}: no `nn_dropout(uint32_t s) {{ return BASE + s; }}` found")
        return int(m.group(2), 0)
    return NN_DROPOUT_STREAM_BASE


# ---- Data: lm/corpus.cpp ---------------------------------------------------------------------------------

EOS, UNK = "<eos>", "<unk>"


def file_words(path):
    """for_each_token of lm/corpus.cpp: white-space separated words, "<eos>" after every line."""
    words = []
    with open(path) as f:
        for line in f:
            words.extend(line.split())
            words.append(EOS)
    return words


def build_vocab(train_path):
    """Vocabulary::from_file: the training split's words in order of first appearance, then <eos>, <unk>
    (each added only if not yet there)."""
    vocab = {}
    for w in file_words(train_path) + [EOS, UNK]:
        vocab.setdefault(w, len(vocab))
    return vocab


def read_tokens(path, vocab):
    """read_tokens: ids, <unk> for words outside the vocabulary."""
    return [vocab.get(w, vocab[UNK]) for w in file_words(path)]


def batchify(tokens, B):
    """BatchStream: B equal streams [B][len(tokens) // B], the tail dropped."""
    L = len(tokens) // B
    return np.asarray(tokens[:B * L], dtype=np.int64).reshape(B, L)


def batches(streams, bptt):
    """BatchStream::batches(): windows of bptt steps over stream_len - 1 inputs (the last may be shorter)."""
    return (streams.shape[1] - 1 + bptt - 1) // bptt


def get_batch(streams, i, bptt):
    """BatchStream::batch(i): inputs and targets [T][B], targets shifted by one."""
    L = streams.shape[1]
    T = min(bptt, L - 1 - i * bptt)
    start = i * bptt
    return streams[:, start:start + T].T.copy(), streams[:, start + 1:start + T + 1].T.copy()


# ---- Checkpoints: lm/checkpoint.cpp ----------------------------------------------------------------------

def read_checkpoint(path):
    """/params/<name> (float32, as float64 numpy arrays, in file order) and /vocab (one word per line)."""
    params = {}
    with h5py.File(path, "r") as f:
        f["params"].visititems(lambda name, obj: params.__setitem__(name, obj[()].astype(np.float64))
                               if isinstance(obj, h5py.Dataset) else None)
        vocab = bytes(f["vocab"][()]).decode().split("\n")
    return params, [w for w in vocab if w]


# ---- Run configuration (docs/training.md "Keys") ---------------------------------------------------------

@dataclasses.dataclass
class Config:
    model: str = "qrnn"        # qrnn | lstm-onednn | lstm-halide | cnn
    pooling: str = "fo"        # f | fo | ifo (QRNN)
    window: int = 2            # QRNN and CNN conv window k
    layers: int = 2
    emb: int = 8
    hidden: int = 8
    batch: int = 3
    bptt: int = 5
    max_batches: int = 10
    lr: float = 1.0
    clip: float = 0.25
    weight_decay: float = 0.0
    zoneout: float = 0.0
    dropout: float = 0.0
    io_dropout: float = 0.0
    tie_weights: bool = False
    seed: int = 1

    def cli_args(self):
        """The `qrnn train --key value` options of these keys."""
        out = []
        for field in dataclasses.fields(self):
            v = getattr(self, field.name)
            out += ["--" + field.name, ("true" if v else "false") if isinstance(v, bool) else str(v)]
        return out


# ---- The model, in torch float64 (lm/language_model.cpp step()) -------------------------------------------

DTYPE = torch.float64


def mask_tensor(key, p, t0, T, B, C):
    """The inverted-dropout multiplier [T][B][C]: 1/(1-p) where kept, 0 where dropped."""
    return torch.from_numpy(keep_mask(key, p, t0, T, B, C).astype(np.float64)) / (1.0 - p)


def nn_dropout(x, p, seed, stream, time, base):
    """nn/dropout.cpp dropout_into: x [T][B][C] times the mask of key stream_key(seed, base + stream) at
    absolute steps time .. time+T-1 (nothing when p is 0)."""
    if p <= 0:
        return x
    T, B, C = x.shape
    return x * mask_tensor(stream_key(seed, base + stream), p, time, T, B, C)


def qrnn_conv_weight(W):
    """Checkpoint layer weights [G][k][n][m] (core/layout.h) -> torch Conv1d weight [G*m][n][k]:
    W.permute(0, 3, 2, 1).reshape(G*m, n, k), i.e. conv.weight[g*m + h][c][j] = W[g][j][c][h]."""
    G, k, n, m = W.shape
    return W.permute(0, 3, 2, 1).reshape(G * m, n, k)


def qrnn_layer(x, W, bias, state, cfg, layer, time, swap_zf=False):
    """One QRNN layer (reference/reference.cpp layer_trace, nn/qrnn_layer.cpp): dropout on the input and on
    the carried history rows at their own absolute times (layer >= 1, stream 2l), the masked convolution as
    torch Conv1d over [history ++ x], gates z = tanh, f/o/i = sigmoid, zoneout (stream 2l+1: f = 1 where
    dropped), the f/fo/ifo recurrence from c0. state = (history [max(k-1,1)][B][n] raw inputs, c [B][m]).
    Returns h [T][B][m] and the next state (runtime/stack_state.h advance_layer_state)."""
    history, c = state
    G, k, n, m = W.shape
    T, B, _ = x.shape
    H = history.shape[0]
    x_in, hist_in = x, history
    if layer > 0 and cfg.dropout > 0:
        key = stream_key(cfg.seed, 2 * layer)
        x_in = x * mask_tensor(key, cfg.dropout, time, T, B, n)
        hist_in = history * mask_tensor(key, cfg.dropout, time - H, H, B, n)
    padded = torch.cat([hist_in[H - (k - 1):], x_in]) if k > 1 else x_in      # [k-1+T][B][n]
    conv = F.conv1d(padded.permute(1, 2, 0), qrnn_conv_weight(W), bias.reshape(G * m))  # [B][G*m][T]
    conv = conv.reshape(B, G, m, T).permute(3, 0, 1, 2)                        # [T][B][G][m]
    zi, fi = (1, 0) if swap_zf else (0, 1)
    z, f = torch.tanh(conv[:, :, zi]), torch.sigmoid(conv[:, :, fi])
    o = torch.sigmoid(conv[:, :, 2]) if G > 2 else None
    i = torch.sigmoid(conv[:, :, 3]) if G > 3 else None
    if cfg.zoneout > 0:
        keep = torch.from_numpy(keep_mask(stream_key(cfg.seed, 2 * layer + 1), cfg.zoneout, time, T, B, m))
        f = torch.where(keep, f, torch.ones_like(f))
    hs = []
    for t in range(T):
        c = f[t] * c + (i[t] if i is not None else 1 - f[t]) * z[t]
        hs.append(o[t] * c if o is not None else c)
    raw = torch.cat([history, x])
    next_history = raw[raw.shape[0] - (k - 1):] if k > 1 else torch.zeros_like(history)
    return torch.stack(hs), (next_history, c)


def lstm_layer(x, w_input, w_recurrent, bias, state):
    """One LSTM layer (runtime/lstm_params.h, reference/baselines.cpp lstm_forward): gate order i, f, g, o;
    pre = x w_input[n][4m] + h w_recurrent[m][4m] + bias[4m]; c = f c + i g; h = o tanh(c).
    (torch.nn.LSTM with weight_ih_l0 = w_input.reshape(n, 4m).T, weight_hh_l0 = w_recurrent.reshape(m, 4m).T,
    bias_ih_l0 = bias.reshape(4m), bias_hh_l0 = 0 computes the same: check_lstm_mapping.)"""
    n, G, m = w_input.shape
    h, c = state
    Wx, Wh, b = w_input.reshape(n, G * m), w_recurrent.reshape(m, G * m), bias.reshape(G * m)
    hs = []
    for t in range(x.shape[0]):
        pre = x[t] @ Wx + h @ Wh + b
        i, f, g, o = (pre[:, j * m:(j + 1) * m] for j in range(G))
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        hs.append(h)
    return torch.stack(hs), (h, c)


def cnn_layer(x, W, bias):
    """One CNN layer (plugins/cnn_layer.cpp, reference/baselines.cpp cnn_forward): y = tanh(masked conv of x
    with window k, bias added), zeros before every call's sequence (no state carried). W [1][k][n][m]."""
    G, k, n, m = W.shape
    T, B, _ = x.shape
    conv = F.conv1d(F.pad(x.permute(1, 2, 0), (k - 1, 0)), qrnn_conv_weight(W), bias.reshape(G * m))
    return torch.tanh(conv.permute(2, 0, 1))


def initial_state(cfg, P, B):
    """Zeros (LanguageModel::reset_state -> Layer::initial_state): QRNN (history, c), LSTM (h, c), CNN ()."""
    states = []
    for l in range(cfg.layers):
        if cfg.model == "qrnn":
            n = P[f"layer_{l}/weights"].shape[2]
            states.append((torch.zeros(max(cfg.window - 1, 1), B, n, dtype=DTYPE),
                           torch.zeros(B, cfg.hidden, dtype=DTYPE)))
        elif cfg.model.startswith("lstm"):
            states.append((torch.zeros(B, cfg.hidden, dtype=DTYPE), torch.zeros(B, cfg.hidden, dtype=DTYPE)))
        else:
            states.append(())
    return states


def stack_forward(cfg, P, x, states, time, base, variant=None):
    """nn/stack.cpp LayerStack::forward: layer l feeds layer l+1; for LSTM and CNN layers (no masks of their
    own) the stack drops layer l >= 1's input (nn dropout stream 2 + l)."""
    new_states = []
    for l in range(cfg.layers):
        if cfg.model == "qrnn":
            x, s = qrnn_layer(x, P[f"layer_{l}/weights"], P[f"layer_{l}/bias"], states[l], cfg, l, time,
                              swap_zf=variant == "swap_zf")
        else:
            if l > 0:
                x = nn_dropout(x, cfg.dropout, cfg.seed, 2 + l, time, base)
            if cfg.model.startswith("lstm"):
                x, s = lstm_layer(x, P[f"layer_{l}/w_input"], P[f"layer_{l}/w_recurrent"], P[f"layer_{l}/bias"],
                                  states[l])
            elif cfg.model == "cnn":
                x, s = cnn_layer(x, P[f"layer_{l}/weights"], P[f"layer_{l}/bias"]), ()
            else:
                raise ValueError(f"model {cfg.model!r} not reproduced here")
        new_states.append(s)
    return x, new_states


def lm_loss(cfg, P, inputs, targets, states, time, base, variant=None):
    """lm/language_model.cpp step(): embedding -> io_dropout (stream 0) -> stack -> io_dropout (stream 1) ->
    nn.Linear decoder (tied: the embedding) -> mean cross-entropy over the T*B targets. Returns the loss and
    the next states."""
    x = F.embedding(torch.from_numpy(inputs), P["embedding"])                 # [T][B][n]
    x = nn_dropout(x, cfg.io_dropout, cfg.seed, 0, time, base)
    h, new_states = stack_forward(cfg, P, x, states, time, base, variant)
    h = nn_dropout(h, cfg.io_dropout, cfg.seed, 1, time, base)
    weights = P["embedding"] if cfg.tie_weights else P["decoder/weights"]
    logits = F.linear(h.reshape(-1, h.shape[-1]), weights, P["decoder/bias"])  # [T*B][V]
    return F.cross_entropy(logits, torch.from_numpy(targets).reshape(-1)), new_states


def detach(states):
    return [tuple(t.detach() for t in s) for s in states]


# ---- One optimizer step (docs/training.md, nn/optimizer.h) ------------------------------------------------

def global_norm(params):
    """The global L2 norm over every parameter's gradient (what clip_grad_norm_ returns)."""
    return float(torch.norm(torch.stack([torch.norm(p.grad, 2) for p in params]), 2))


def sgd_step(cfg, params, optimizer, variant=None):
    """torch.nn.utils.clip_grad_norm_(params, clip) (when clip > 0), then torch.optim.SGD(lr,
    weight_decay).step(): v <- v - lr * (min(1, clip/(norm+1e-6)) g + wd v). Returns the norm before
    clipping. Variant decay_before_clip adds wd*v to g first (the old convention)."""
    if variant == "decay_before_clip":
        with torch.no_grad():
            for p in params:
                p.grad.add_(p, alpha=cfg.weight_decay)
            norm = global_norm(params)
            s = min(1.0, cfg.clip / (norm + 1e-6)) if cfg.clip > 0 else 1.0
            for p in params:
                p.sub_(cfg.lr * s * p.grad)
        return norm
    if cfg.clip > 0:
        norm = float(torch.nn.utils.clip_grad_norm_(params, cfg.clip))
    else:
        norm = global_norm(params)
    optimizer.step()
    return norm


@dataclasses.dataclass
class TrainResult:
    losses: list       # per step: the batch's mean cross-entropy per target token
    grad_norms: list   # per step: the global gradient norm before clipping
    params: dict       # name -> numpy float64, after the last step
    names: list        # parameter names, checkpoint order


def train(cfg, initial_checkpoint, train_path, variant=None, stream_base=None):
    """Replays `qrnn train`'s first epoch (max_batches steps, masks from time 0; lm/trainer.cpp fit()) from
    the parameters of `initial_checkpoint` (--save_initial) on the tokens of train_path."""
    if variant is not None and variant not in WRONG_VARIANTS:
        raise ValueError(f"unknown variant {variant!r}")
    base = nn_dropout_stream_base() if stream_base is None else stream_base
    values, vocab_words = read_checkpoint(initial_checkpoint)
    vocab = build_vocab(train_path)
    if list(vocab) != vocab_words:
        raise AssertionError(f"vocabulary differs from the checkpoint's: {list(vocab)[:8]} vs {vocab_words[:8]}")
    streams = batchify(read_tokens(train_path, vocab), cfg.batch)
    nb = batches(streams, cfg.bptt)
    nb = min(cfg.max_batches, nb) if cfg.max_batches > 0 else nb
    names = list(values)
    P = {name: torch.tensor(v, dtype=DTYPE, requires_grad=True) for name, v in values.items()}
    params = list(P.values())
    optimizer = torch.optim.SGD(params, lr=cfg.lr, weight_decay=cfg.weight_decay)
    states, time = initial_state(cfg, P, cfg.batch), 0
    losses, norms = [], []
    for i in range(nb):
        inputs, targets = get_batch(streams, i, cfg.bptt)
        optimizer.zero_grad(set_to_none=False)
        loss, new_states = lm_loss(cfg, P, inputs, targets, states, time, base, variant)
        (loss * targets.size if variant == "sum_loss" else loss).backward()
        norms.append(sgd_step(cfg, params, optimizer, variant))
        losses.append(float(loss))
        states = initial_state(cfg, P, cfg.batch) if variant == "no_carry" else detach(new_states)
        time += inputs.shape[0]
    return TrainResult(losses, norms, {n: p.detach().numpy().copy() for n, p in P.items()}, names)


def check_lstm_mapping(n=5, m=4, T=3, B=2, seed=0):
    """torch.nn.LSTM with the documented mapping (docs/pytorch_mapping.md) computes what lstm_layer does;
    returns the max abs difference of h over T steps from a random state."""
    g = torch.Generator().manual_seed(seed)
    w_in, w_rec = torch.randn(n, 4, m, generator=g, dtype=DTYPE), torch.randn(m, 4, m, generator=g, dtype=DTYPE)
    bias, x = torch.randn(4, m, generator=g, dtype=DTYPE), torch.randn(T, B, n, generator=g, dtype=DTYPE)
    h0, c0 = torch.randn(B, m, generator=g, dtype=DTYPE), torch.randn(B, m, generator=g, dtype=DTYPE)
    lstm = torch.nn.LSTM(n, m).to(DTYPE)
    with torch.no_grad():
        lstm.weight_ih_l0.copy_(w_in.reshape(n, 4 * m).T)
        lstm.weight_hh_l0.copy_(w_rec.reshape(m, 4 * m).T)
        lstm.bias_ih_l0.copy_(bias.reshape(4 * m))
        lstm.bias_hh_l0.zero_()
        ours, _ = lstm_layer(x, w_in, w_rec, bias, (h0, c0))
        theirs, _ = lstm(x, (h0[None], c0[None]))
    return float((ours - theirs).abs().max())


def check_qrnn_conv_mapping(G=3, k=3, n=5, m=4, T=6, B=2, seed=0):
    """torch.nn.Conv1d(n, G*m, k) with weight qrnn_conv_weight(W), bias bias.reshape(G*m), over the
    time-padded input [B][n][k-1+T], computes core/layout.h's conv_g[t][b][h]; returns the max abs difference
    from the layout's formula written out."""
    g = torch.Generator().manual_seed(seed)
    W, bias = torch.randn(G, k, n, m, generator=g, dtype=DTYPE), torch.randn(G, m, generator=g, dtype=DTYPE)
    xp = torch.randn(k - 1 + T, B, n, generator=g, dtype=DTYPE)   # history rows then x
    conv = torch.nn.Conv1d(n, G * m, k).to(DTYPE)
    with torch.no_grad():
        conv.weight.copy_(qrnn_conv_weight(W))
        conv.bias.copy_(bias.reshape(G * m))
        theirs = conv(xp.permute(1, 2, 0)).reshape(B, G, m, T).permute(3, 1, 0, 2)  # [T][G][B][m]
    ours = torch.stack([torch.stack([bias[gg] + sum(xp[t + j] @ W[gg, j] for j in range(k)) for gg in range(G)])
                        for t in range(T)])
    return float((ours - theirs).abs().max())
