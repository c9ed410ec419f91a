#include "tests/support/lm_problem.h"

namespace qrnn::test {

lm::LmShape small_lm(const std::string &model, bool tied) {
    lm::LmShape s;
    s.stack.model = model;
    s.stack.pooling = "fo";
    s.stack.window = 2;
    s.stack.input = tied ? 5 : 4;
    s.stack.hidden = 5;
    s.stack.layers = 2;
    s.stack.zoneout = model == "qrnn" ? 0.2 : 0.0;
    s.stack.dropout = 0.3;
    s.stack.seed = 5;
    s.vocab = 7;
    s.io_dropout = 0.25;
    s.tie_weights = tied;
    return s;
}

RunSettings small_run() { return {2, 3}; }

lm::Batch small_batch(int64_t shift) {
    lm::Batch b;
    b.T = 3, b.B = 2;
    for (int64_t i = 0; i < 6; i++) {
        b.inputs.push_back(static_cast<int32_t>((i * 3 + shift) % 7));
        b.targets.push_back(static_cast<int32_t>((i * 5 + 1 + shift) % 7));
    }
    return b;
}

}  // namespace qrnn::test
