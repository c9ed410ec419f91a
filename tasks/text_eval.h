// `qrnn eval` of a classify-text checkpoint (`qrnn train --task classify-text --checkpoint F`, e.g. pQRNN): the
// accuracy of its parameters on a label<TAB>text file in f32 and, with int8 (docs/int8.md), in int8 side by side: with
// the checkpoint's int8 parameters (its /int8), else after a calibration on the held-out split its config names
// (valid), which save_int8 then stores in the checkpoint.
#pragma once
#include <cmath>
#include <string>

namespace qrnn::lm {

struct TextEvalResult {
    int64_t examples = 0, calibration_examples = 0;
    double f32 = NAN, int8 = NAN;  // accuracies; int8 NaN unless asked
    int64_t changed = 0;           // examples whose int8 prediction is not the f32 one
    std::string calibration_file;
    bool int8_from_checkpoint = false;  // the checkpoint's /int8, not a calibration of this run
    bool int8_saved = false;            // this run's calibration written into the checkpoint
};

// Throws qrnn::Error naming the file (and line) for a checkpoint of another task or a malformed data file.
TextEvalResult evaluate_text_checkpoint(const std::string &checkpoint, const std::string &data, bool int8, bool save_int8 = false);

}  // namespace qrnn::lm
