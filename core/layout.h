// Data layout, parameter shapes and initialisation of the QRNN framework: the one place they are defined.
//
// Sizes: T = sequence length, B = batch, n = input channels, m = hidden units, k = conv window (k >= 1),
// G = gate count of the pooling variant (f: Z,F -> 2; fo: Z,F,O -> 3; ifo: Z,F,O,I -> 4), L = layers.
//
// Host tensors are dense, row-major (C order, last index fastest). Halide dimensions are listed innermost
// first, so the Halide name of tensor [A][B][C] is f(c, b, a).
//   x        [T][B][n]        Halide x(c, b, t)          input sequence, time-major (as cuDNN)
//   history  [k-1][B][n]      Halide history(c, b, j)    the k-1 inputs before x (zeros at sequence start);
//                                                        j = 0 is the oldest, i.e. time -(k-1)+j. Stored
//                                                        with at least one row so k = 1 needs no empty buffer.
//   weights  [G][k][n][m]     Halide weights(h, c, j, g) tap j multiplies x[t-(k-1)+j] (j = k-1: current step)
//   bias     [G][m]           Halide bias(h, g)
//   c0       [B][m]           Halide c0(h, b)            initial cell state
//   h        [T][B][m]        Halide out(h, b, t)        layer output
//   c        [T][B][m]        Halide cell(h, b, t)       cell state sequence; c_T = c[T-1]
// Gate order inside weights/bias is the variant's gate string, always starting "zf" (Z then F), then O, I.
//
// Gates: Z = tanh(conv_z), F = sigmoid(conv_f), O = sigmoid(conv_o), I = sigmoid(conv_i), where
//   conv_g[t][b][h] = bias[g][h] + sum_{j<k, c<n} weights[g][j][c][h] * x[t-(k-1)+j][b][c].
//
// Zoneout (stochastic mode only: --mode train): F' = F where keep(t, b, h) else 1, i.e. F' = 1 - mask * (1 - F) with no rescaling.
// Dropout between layers (stochastic mode only, input of layer l >= 1): x' = x * keep / (1 - p).
// keep(...) = hash(key, t_abs, b, ch) >= p * 2^32 with the counter hash of core/hash_rng.h, where t_abs is
// the absolute time step (so a sequence fed in pieces draws the same masks as whole) and
// key = stream_key(seed, stream) with stream 2*l for dropout of layer l's input and 2*l+1 for its zoneout
// (re-keyed by a non-zero ModelConfig::mask_draw: the synthetic tasks draw fresh masks at every training step).
//
// Initialisation (seeded, platform-independent, from the same hash): weights and bias uniform in
// [-1/sqrt(n*k), 1/sqrt(n*k)] (PyTorch's Conv1d default), c0 = 0, x uniform in [-1, 1].
#pragma once

namespace qrnn {
constexpr int kMaxGates = 4;
constexpr const char *kGateLetters = "zfoi";  // canonical order of all gates
}  // namespace qrnn
