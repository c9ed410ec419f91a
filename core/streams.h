// Every stream of the counter-based hash (core/hash_rng.h), in one table: a draw is hash_at(stream_key(seed,
// stream), ...), so two uses of one stream would draw the same numbers (correlated parameters, or a mask that is a
// function of a weight). Each stream below has one use; ranges are disjoint for layer indices l < kMaxStreamLayers
// (tests/test_streams.cpp checks the table and that no two parameters of any model are correlated).
//
//   stream                      use
//   2l, 2l+1                    QRNN layer l: input-dropout and zoneout masks (Halide pipelines and references)
//   0xFFFF                      benchmark input x
//   0x10000 + 2l, + 2l + 1      QRNN layer l: weights, bias
//   0x1FF00, 0x1FF10            benchmark output gradient; variable-length layer's seeded lengths
//   0x1FF20                     int8 calibration input (held out from the benchmark input)
//   0x20000 + 8l + {0, 1, 2}    LSTM layer l: w_input, w_recurrent, bias
//   0x20003, 0x20004            LSTM benchmark initial h0, c0 (slot 3, 4 of layer 0's eight)
//   0x28000 + 2l, + 2l + 1      CNN layer l: weights, bias
//   0x30000 + l, 0x31000        encoder-decoder: conditioning of layer l, attention
//   0x32000 + {0..3}            encoder-decoder benchmark inputs: source, target, dout, lengths
//   0x40000 + split, 0x42000 +  synthetic tasks' sequences: transduction, counting (split 0 training, 1 held out)
//   0x41000                     sequence-to-sequence output projection
//   0x43000, 0x43001            sequence classifier: embedding (or, with the projection front, the bottleneck
//                               weights: a model has one or the other), output weights
//   0x44000, 0x44001            language model: embedding, decoder weights
//   0x50000, 0x50001            training benchmark: x, dy
//   0x60000 + s                 nn dropout (nn/dropout.h): s = 0 embedding output, 1 decoder input, 2 + l the
//                               input of a non-QRNN layer l >= 1
// The encoder-decoder's decoder stack draws with seed + 1, apart from the encoder's seed.
#pragma once
#include <cstdint>

namespace qrnn::streams {

constexpr uint32_t kMaxStreamLayers = 1024;

constexpr uint32_t qrnn_dropout(uint32_t l) { return 2 * l; }
constexpr uint32_t qrnn_zoneout(uint32_t l) { return 2 * l + 1; }
constexpr uint32_t kBenchInput = 0xFFFF;
constexpr uint32_t qrnn_weights(uint32_t l) { return 0x10000 + 2 * l; }
constexpr uint32_t qrnn_bias(uint32_t l) { return 0x10001 + 2 * l; }
constexpr uint32_t kBenchOutputGrad = 0x1FF00, kSeqLengths = 0x1FF10;
constexpr uint32_t kInt8Calibration = 0x1FF20;  // the held-out input an int8 run calibrates on
constexpr uint32_t lstm_w_input(uint32_t l) { return 0x20000 + 8 * l; }
constexpr uint32_t lstm_w_recurrent(uint32_t l) { return 0x20001 + 8 * l; }
constexpr uint32_t lstm_bias(uint32_t l) { return 0x20002 + 8 * l; }
constexpr uint32_t kLstmBenchH0 = 0x20003, kLstmBenchC0 = 0x20004;
constexpr uint32_t cnn_weights(uint32_t l) { return 0x28000 + 2 * l; }
constexpr uint32_t cnn_bias(uint32_t l) { return 0x28001 + 2 * l; }
constexpr uint32_t condition(uint32_t l) { return 0x30000 + l; }
constexpr uint32_t kAttention = 0x31000, kEncDecBenchInputs = 0x32000;
constexpr uint32_t transduction_data(uint32_t split) { return 0x40000 + split; }
constexpr uint32_t counting_data(uint32_t split) { return 0x42000 + split; }
constexpr uint32_t kSeq2SeqOutput = 0x41000;
constexpr uint32_t kClassifierEmbedding = 0x43000, kClassifierOutput = 0x43001;
constexpr uint32_t kLmEmbedding = 0x44000, kLmDecoder = 0x44001;
constexpr uint32_t kBenchTrainingX = 0x50000, kBenchTrainingDy = 0x50001;
constexpr uint32_t nn_dropout(uint32_t s) { return 0x60000 + s; }

}  // namespace qrnn::streams
