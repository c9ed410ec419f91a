// The training convention, recorded in every checkpoint (root attributes format_version and convention) so that a
// run is never resumed under another one. Version 2 is PyTorch's (docs/training.md, "One optimizer step"); version
// 1 summed the loss over the batch's tokens and added weight decay before clipping (Adam: L2, not decoupled).
#pragma once
#include <H5Cpp.h>

#include <cstdint>
#include <string>

namespace qrnn::lm {

constexpr int64_t kConventionVersion = 2;
constexpr const char *kConvention =
    "mean loss per target token; clip_grad_norm_ (min(1, clip/(norm+1e-6))); SGD: value -= lr*(clipped grad + "
    "weight_decay*value); Adam: AdamW (decoupled decay)";

// A checkpoint's root attributes, the same for every checkpoint format: format, format_version and convention,
// the identity and config of the run it resumes, and the mark that every tensor carries a checksum.
void write_checkpoint_header(H5::H5File &file, const std::string &format, const std::string &identity,
                             const std::string &config);
// Throws qrnn::Error naming the file and both conventions when `file` was written under another one; `format` and
// `what` as h5::require_format_version. With to_resume false (evaluation: the parameters alone), version 1 is read.
void require_convention(H5::H5File &file, const std::string &path, const std::string &format, const std::string &what,
                        bool to_resume = true);

}  // namespace qrnn::lm
