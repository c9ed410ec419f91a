// Comma-separated lists in options and config values (`--precision f32,bf16`, `models: qrnn,lstm-onednn`,
// `teacher: a.h5,b.h5`), split one way everywhere.
#pragma once
#include <string>
#include <vector>

namespace qrnn {

// The items of `text` split at commas, each with the spaces around it removed when `trim`. An empty item (also an
// empty text) throws qrnn::Error "empty <item> in the list".
std::vector<std::string> split_comma_list(const std::string &text, const std::string &item, bool trim = false);

}  // namespace qrnn
