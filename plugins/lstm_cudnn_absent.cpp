// Registers "lstm-cudnn" as unavailable when the build found no CUDA toolkit or cuDNN (plugins/CMakeLists.txt
// compiles this file instead of lstm_cudnn.cpp), so listings and sweeps name it with the reason.
#include "core/error.h"
#include "nn/layer.h"
#include "plugins/lstm_model.h"

namespace qrnn {
namespace {
const bool lstm_cudnn_absent_registered = [] {
    register_lstm_model("lstm-cudnn", "LSTM by cuDNN 9 cudnnRNNForward (the paper's baseline)", {"cuda"},
                        [] { return std::string("built without CUDA/cuDNN"); },
                        [](const ModelConfig &) -> std::unique_ptr<Model> { fail("lstm-cudnn: built without CUDA/cuDNN"); },
                        [](const ModelConfig &, int64_t) -> std::unique_ptr<nn::Layer> {
                            throw Unavailable("model 'lstm-cudnn' unavailable: built without CUDA/cuDNN");
                        });
    return true;
}();
}  // namespace
}  // namespace qrnn
