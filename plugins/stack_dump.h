// HDF5 dumps (runtime/hdf5_dump.h) of a stack of QRNN-shaped layers (parameters "weights", "bias"; state
// "history", "c"), for `qrnn run --load/--dump` at either pass.
#pragma once
#include "nn/stack.h"
#include "runtime/hdf5_dump.h"

namespace qrnn {

// Whether every layer of the stack is QRNN-shaped: what the dump layout holds.
bool qrnn_shaped(nn::LayerStack &stack, const std::vector<nn::State> &states);

// The input x, every layer's parameters and its initial state (time 0) from dump `path`; with check_finite, a
// non-finite value is an error naming the tensor and the file. Throws qrnn::Error for a stack not QRNN-shaped.
void load_stack_dump(const std::string &path, const ModelConfig &cfg, nn::LayerStack &stack, Tensor<float> &x,
                     std::vector<nn::State> &initial, bool check_finite);

// What a forward from `initial` over x wrote (y, the final states), with the stack's parameters, as a dump.
RunData stack_run_data(const ModelConfig &cfg, nn::LayerStack &stack, const Tensor<float> &x,
                       const std::vector<nn::State> &initial, const Tensor<float> &y, const std::vector<nn::State> &final);

}  // namespace qrnn
