// `qrnn eval` of a classify-text checkpoint (`qrnn train --task classify-text --checkpoint F`, e.g. pQRNN): the
// accuracy of its parameters on a label<TAB>text file in f32 and, with int8 (docs/int8.md), in int8 after a
// calibration on the held-out split the checkpoint's config names (valid), so the drop is measured side by side.
#pragma once
#include <cmath>
#include <string>

namespace qrnn::lm {

struct TextEvalResult {
    int64_t examples = 0, calibration_examples = 0;
    double f32 = NAN, int8 = NAN;  // accuracies; int8 NaN unless asked
    int64_t changed = 0;           // examples whose int8 prediction is not the f32 one
    std::string calibration_file;
};

// Throws qrnn::Error naming the file (and line) for a checkpoint of another task or a malformed data file.
TextEvalResult evaluate_text_checkpoint(const std::string &checkpoint, const std::string &data, bool int8);

}  // namespace qrnn::lm
