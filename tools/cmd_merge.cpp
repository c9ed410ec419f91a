// `qrnn merge a.h5 b.h5 ... -o all.h5`: join sweep results files (e.g. shards), dropping duplicate run ids.
#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "sweep/merge.h"
#include "tools/command.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

int merge_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn merge options");
    desc.add_options()("help,h", "show this help")
        ("inputs", po::value<std::vector<std::string>>()->composing(), "results files to join")
        ("output,o", po::value<std::string>(), "merged results file")
        ("force", "replace the output file if it exists");
    po::positional_options_description positional;
    positional.add("inputs", -1);
    po::variables_map vm;
    if (!parse_options("usage: qrnn merge a.h5 b.h5 ... -o all.h5", desc, args, vm, &positional)) return kExitOk;
    if (!vm.count("inputs")) fail("give the results files to merge: qrnn merge a.h5 b.h5 -o all.h5");
    if (!vm.count("output")) fail("give the merged file: -o all.h5");
    const auto inputs = vm["inputs"].as<std::vector<std::string>>();
    const std::string output = vm["output"].as<std::string>();
    for (auto &in : inputs)
        if (std::filesystem::exists(output) && std::filesystem::equivalent(in, output))
            fail("-o ", output, " is also an input; write the merge to a new file");
    if (std::filesystem::exists(output) && !vm.count("force")) fail(output, " exists (use --force to replace it)");
    WriterLock lock(output);
    sweep::MergeSummary summary;
    sweep::ResultTable merged = sweep::merge_results(inputs, summary);
    sweep::write_results(output, merged);
    if (!summary.same_sweep) std::cerr << "note: the inputs come from different sweep files; attributes are the first's\n";
    std::cout << "merged " << inputs.size() << " files: " << summary.rows << " runs, " << summary.duplicates
              << " duplicate run ids dropped -> " << output << "\n";
    return kExitOk;
}

const bool cmd_merge_registered = register_command({"merge", "join sweep results files (shards), dropping duplicate run ids", merge_command});
}  // namespace
}  // namespace qrnn::cli
