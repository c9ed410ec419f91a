// Loading external plugin libraries (plugins/plugin_api.h). Every failure throws qrnn::Error with a
// one-line message naming the file: missing, not a shared library, no entry point, ABI version
// mismatch, or a plugin name already registered.
#pragma once
#include <string>
#include <vector>

namespace qrnn {

// Loads one library; loading the same file (same real path) twice is a no-op.
void load_plugin(const std::string &path);
// Loads every *.so in a directory (sorted by name). A missing directory is an error.
void load_plugin_dir(const std::string &dir);
// Loads the directories of the colon-separated environment variable QRNN_PLUGIN_PATH, if set.
void load_plugin_path_from_env();

// Where a registered plugin came from: "built-in", or the library path. Keyed by kind and name.
std::string plugin_source(const std::string &kind, const std::string &name);

}  // namespace qrnn
