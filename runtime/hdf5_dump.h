// HDF5 dump of one run (inputs, every parameter, outputs) and loading it back. Layout (README "Dump file"):
//   attributes on /: format = "qrnn-dump", format_version = 1, and the config: model, pooling, schedule,
//                    window, batch, seq, input, hidden, layers, training, zoneout, dropout, seed
//   /input/x              float32 [T][B][n]
//   /layer_<l>/weights    float32 [G][k][n_l][m]    gate order = the pooling's gates, e.g. "zfo"
//   /layer_<l>/bias       float32 [G][m]
//   /layer_<l>/c0         float32 [B][m]            initial cell state
//   /layer_<l>/history    float32 [k-1][B][n_l]     inputs before x (only when k > 1)
//   /output/h             float32 [T][B][m]         last layer's output
//   /output/c_T           float32 [L][B][m]         final cell state of every layer
// With gradients (qrnn run --pass training; loss = sum(dh * h)):
//   /output/dh            float32 [T][B][m]         the output gradient used
//   /input/dx             float32 [T][B][n]         gradient of the input
//   /layer_<l>/grad/{weights,bias,c0}              gradients, shapes as the values
//   /layer_<l>/grad/history                        (only when k > 1)
#pragma once
#include <string>

#include "runtime/params.h"

namespace qrnn {

struct LayerGradients {
    Tensor<float> weights, bias, c0, history;
};

struct RunData {
    Tensor<float> x;
    std::vector<LayerParams<float>> params;
    StackState<float> state;  // initial state (c0, history)
    Tensor<float> h, c_T;     // outputs; empty when loading a file that has none
    Tensor<float> dh, dx;     // training pass: the output gradient used and the input's (else empty)
    std::vector<LayerGradients> grads;  // training pass: per layer (else empty)
};

// Writes atomically (temporary file, then rename): an existing file is replaced only on success.
void write_dump(const std::string &path, const ModelConfig &cfg, const RunData &data);

// The training dump of a model whose layers are not QRNN-shaped (`qrnn run --pass training --dump` of the LSTM
// and CNN baselines, the dense stack, the bidirectional and variable-length layers): root attribute layout =
// "named" besides the config's, /input/x, /input/dx, /output/h, /output/dh, and for each entry l of the stack
//   /layer_<l>/<param>             its parameters under their own names (nn::Param, e.g. w_input, or
//                                  layer_1/weights inside the dense block)
//   /layer_<l>/grad/<param>        their gradients
//   /layer_<l>/state/<name>        the initial state (nn::State names, e.g. h, c), zeros
//   /layer_<l>/grad/state/<name>   its gradient
using NamedTensors = std::vector<std::pair<std::string, const Tensor<float> *>>;
struct NamedLayerDump {
    NamedTensors params, grads, state, state_grads;
};
struct NamedDump {
    const Tensor<float> *x, *dx, *h, *dh;
    std::vector<NamedLayerDump> layers;
};
void write_named_dump(const std::string &path, const ModelConfig &cfg, const NamedDump &data);

// Reads inputs and parameters; every dataset's shape must match cfg (error names file, dataset, shapes).
RunData read_dump(const std::string &path, const ModelConfig &cfg);

}  // namespace qrnn
