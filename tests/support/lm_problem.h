// A tiny language model and batches for the LM tests (vocabulary 7, 2 x 5 stack, T=3, B=2; every mask on).
#pragma once
#include <string>

#include "lm/language_model.h"

namespace qrnn::test {

// model: "qrnn" (fo pooling, window 2, zoneout 0.2) or a baseline; tied: decoder weights = embedding (emb 5).
lm::LmShape small_lm(const std::string &model, bool tied = false);
RunSettings small_run();  // batch 2, length 3: small_batch's
// Inputs and targets [T=3][B=2] in [0, 7), different for each shift.
lm::Batch small_batch(int64_t shift);

}  // namespace qrnn::test
