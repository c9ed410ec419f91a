// `qrnn train [CONFIG.yaml] [--KEY VALUE ...]`: train a word-level language model (lm/trainer.h; task lm) or a
// model on a synthetic sequence task (tasks/seq_trainer.h; task reverse, sort, classify) or a text classification
// task (tasks/text_task.h; task classify-text, with --model bow its bag-of-words floor); every key of the config
// file is also an option, which overrides the file. A task's defaults come first, then the file, then options.
#include <cmath>
#include <filesystem>
#include <iostream>

#include "core/error.h"
#include "tasks/seq_trainer.h"
#include "tasks/text_task.h"
#include "lm/trainer.h"
#include "tools/command.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

// The data's name for the accuracy line: the training file's directory ("corpus-source").
std::string data_name(const lm::TrainConfig &cfg) {
    const std::filesystem::path dir = std::filesystem::path(cfg.train).parent_path();
    return dir.empty() ? cfg.train : std::filesystem::absolute(dir).filename().string();
}

int train_text_bag_of_words(const lm::TrainConfig &cfg) {
    const lm::TextAccuracies a = lm::run_text_bag_of_words(cfg);
    std::cout << lm::text_accuracy_line("bag of words on " + data_name(cfg), a) << "\n";
    return kExitOk;
}

int train_seq_task(const lm::TrainConfig &cfg) {
    const lm::SeqResults r = lm::train_seq_task(cfg, std::cerr);
    if (r.epochs.empty()) fail("task ", cfg.seq.task, ": no step ran (time_limit ", cfg.seq.time_limit, " s)");
    const lm::SeqEpoch &last = r.epochs.back();
    std::cout << "final: " << std::get<std::string>(r.attrs.at("metric")) << "=" << last.accuracy << " after "
              << static_cast<int64_t>(last.step) << " steps, " << last.seconds << " s (task " << cfg.seq.task << ", model "
              << cfg.lm.stack.model << ", attention " << std::get<std::string>(r.attrs.at("attention")) << "); best "
              << std::get<double>(r.attrs.at("best_accuracy")) << "\n";
    if (cfg.seq.task == "classify-text")
        std::cout << lm::text_accuracy_line(cfg.lm.stack.model + " (front " + cfg.seq.front + ", pool " + cfg.seq.pool + ") on " +
                                                data_name(cfg), lm::text_accuracies(r)) << "\n";
    if (!cfg.results.empty()) std::cout << "results: " << cfg.results << "\n";
    return kExitOk;
}

int train_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn train options (also keys of CONFIG.yaml; options override the file)");
    desc.add_options()("help,h", "show this help")("config", po::value<std::string>(), "YAML file of key: value settings")(
        "data", po::value<std::string>(), "directory with the train/valid(/test) splits (ptb.*.txt, wiki.*.tokens, *.txt; task classify-text: *.tsv)");
    const lm::TrainConfig defaults;
    for (auto &k : lm::train_keys()) {
        const std::string value = k.get(defaults);
        desc.add_options()(k.name.c_str(), po::value<std::string>(), (k.help + (value.empty() ? "" : " (default " + value + ")")).c_str());
    }
    po::positional_options_description positional;
    positional.add("config", 1);
    po::variables_map vm;
    if (!parse_options("usage: qrnn train [CONFIG.yaml] [options]   (defaults below are task lm's; tasks reverse, sort and "
                       "classify start from their own, docs/training.md)", desc, args, vm, &positional)) return kExitOk;

    std::string task = "lm";  // the file's or the option's, to start from that task's defaults
    for (const bool from_option : {false, true}) {
        lm::TrainConfig probe;
        if (!from_option && vm.count("config")) lm::load_train_yaml(probe, vm["config"].as<std::string>()), task = probe.seq.task;
        if (from_option && vm.count("task")) lm::set_train_key(probe, "task", vm["task"].as<std::string>(), "--task"), task = probe.seq.task;
    }
    lm::TrainConfig cfg = lm::task_defaults(task);
    if (vm.count("config")) lm::load_train_yaml(cfg, vm["config"].as<std::string>());
    if (vm.count("data")) {
        if (task == "classify-text") lm::set_text_data_dir(cfg, vm["data"].as<std::string>());
        else lm::set_data_dir(cfg, vm["data"].as<std::string>());
    }
    for (auto &k : lm::train_keys())
        if (vm.count(k.name)) lm::set_train_key(cfg, k.name, vm[k.name].as<std::string>(), "--" + k.name);
    if (cfg.seq.task == "classify-text" && cfg.lm.stack.model == "bow") return train_text_bag_of_words(cfg);
    if (cfg.seq.task != "lm") return train_seq_task(cfg);
    lm::TrainOutcome out = lm::train_language_model(cfg, std::cerr);
    std::cout << "unigram validation perplexity: " << out.unigram_val_ppl << "\n"
              << "best validation perplexity: " << out.best_val_ppl << " (epoch " << out.best_epoch << ", "
              << out.unigram_val_ppl / out.best_val_ppl << "x better than unigram)\n";
    if (!std::isnan(out.test_ppl))
        std::cout << "test perplexity: " << out.test_ppl << " (" << cfg.test << ", parameters of the " << out.test_params
                  << (out.test_params == "final" ? "" : " " + std::to_string(out.best_epoch)) << ")\n";
    if (!cfg.results.empty()) std::cout << "results: " << cfg.results << "\n";
    if (!cfg.checkpoint.empty()) std::cout << "checkpoint: " << cfg.checkpoint << "\n";
    return kExitOk;
}

const bool cmd_train_registered = register_command({"train", "train a language model on a text corpus, a model on a synthetic sequence task (reverse, sort, classify), or a text classifier (classify-text)", train_command});
}  // namespace
}  // namespace qrnn::cli
