// Helpers shared by CLI commands: comma-separated lists and `--help` handling with Boost.Program_options.
#pragma once
#include <boost/program_options.hpp>
#include <cstdint>
#include <string>
#include <vector>

namespace qrnn {
struct PoolingVariant;
}

namespace qrnn::cli {

// The variant of the --pooling option, resolved here once for the whole command (throws naming the known ones).
const PoolingVariant &pooling_option(const boost::program_options::variables_map &vm);

std::vector<std::string> split_list(const std::string &option, const std::string &text);
std::vector<int64_t> parse_int_list(const std::string &option, const std::string &text);
double parse_double(const std::string &option, const std::string &text);

// Parses args into vm; returns false (after printing usage) if --help was given. Throws qrnn::Error on
// unknown or malformed options.
bool parse_options(const std::string &usage, const boost::program_options::options_description &desc,
                   const std::vector<std::string> &args, boost::program_options::variables_map &vm,
                   const boost::program_options::positional_options_description *positional = nullptr);

}  // namespace qrnn::cli
