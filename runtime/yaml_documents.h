// YAML checks shared by every config parser (sweep files, training and train-speed configs).
#pragma once
#include <yaml-cpp/yaml.h>

#include <optional>
#include <string>

namespace qrnn {

// Where a second YAML document starts in text, if there is one. Parses events only, at most two documents
// (YAML::LoadAll loops until memory runs out on some inputs, e.g. a leading ',', in yaml-cpp 0.7).
std::optional<YAML::Mark> second_yaml_document(const std::string &text);

}  // namespace qrnn
