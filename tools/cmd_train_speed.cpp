// `qrnn train-speed CONFIG.yaml [--KEY VALUE ...]`: training steps of several language models timed side by
// side on the same batches (lm/step_timing.h), e.g. the paper's Fig. 4 left (experiments/paper_fig4_left.yaml);
// prints the breakdown beside the paper's and writes the results file that `qrnn report` reads.
#include <filesystem>
#include <iostream>

#include "lm/step_timing.h"
#include "tools/command.h"
#include "report/lm_report.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

int train_speed_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn train-speed options (also keys of CONFIG.yaml; options override the file)");
    desc.add_options()("help,h", "show this help")("config", po::value<std::string>(), "YAML file of key: value settings")(
        "models", po::value<std::string>(), "models to time, comma-separated (e.g. qrnn,lstm-onednn,lstm-halide)")(
        "warmup", po::value<std::string>(), "rounds not recorded (default 2)")(
        "batches", po::value<std::string>(), "timed rounds: one training step of every model each (default 10)")(
        "vocab", po::value<std::string>(), "pad the vocabulary to this many words (default 0: the training file's)");
    const lm::TrainConfig defaults;
    for (auto &k : lm::train_keys())
        if (!lm::is_step_timing_key(k.name)) {
            const std::string value = k.get(defaults);
            desc.add_options()(k.name.c_str(), po::value<std::string>(),
                               (k.help + (value.empty() ? "" : " (default " + value + ")")).c_str());
        }
    po::positional_options_description positional;
    positional.add("config", 1);
    po::variables_map vm;
    if (!parse_options("usage: qrnn train-speed [CONFIG.yaml] [options]", desc, args, vm, &positional)) return kExitOk;

    lm::StepTimingConfig cfg;
    if (vm.count("config")) lm::load_step_timing_yaml(cfg, vm["config"].as<std::string>());
    for (auto &[key, value] : vm)
        if (key != "config" && key != "help") lm::set_step_timing_key(cfg, key, value.as<std::string>(), "--" + key);
    const auto dir = std::filesystem::path(cfg.train.results).parent_path();
    if (!dir.empty()) std::filesystem::create_directories(dir);
    const lm::StepTimings timings = lm::time_training_steps(cfg, std::cerr);
    if (!cfg.train.results.empty()) {
        lm::write_step_timings(cfg.train.results, timings);
        std::cout << "results: " << cfg.train.results << "\n";
    }
    print_step_timings(timings, cfg.train.results.empty() ? "(not saved)" : cfg.train.results, lm::default_paper_fig4_left_csv(),
                       std::cout);
    return kExitOk;
}

const bool cmd_train_speed_registered = register_command(
    {"train-speed", "time training steps of several language models side by side (Fig. 4 left)", train_speed_command});
}  // namespace
}  // namespace qrnn::cli
