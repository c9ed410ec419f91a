// `qrnn eval CHECKPOINT --data FILE`: perplexity of a trained language model (a `qrnn train` checkpoint) on a
// token file, words outside its vocabulary as <unk>; with the parameters of the best validation epoch (or
// `--params last`: the last ones).
#include <cmath>
#include <iostream>

#include "core/error.h"
#include "lm/trainer.h"
#include "tools/command.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

int eval_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn eval options");
    desc.add_options()("help,h", "show this help")("checkpoint", po::value<std::string>(), "checkpoint of qrnn train")(
        "data", po::value<std::string>(), "token file to evaluate on (e.g. data/ptb/ptb.test.txt)")(
        "batch", po::value<int64_t>(), "streams per batch (default: the training batch)")(
        "params", po::value<std::string>()->default_value("best"), "best (the best validation epoch's) or last");
    po::positional_options_description positional;
    positional.add("checkpoint", 1);
    po::variables_map vm;
    if (!parse_options("usage: qrnn eval CHECKPOINT --data FILE [--batch B] [--params best|last]", desc, args, vm, &positional)) return kExitOk;
    if (!vm.count("checkpoint")) fail("no checkpoint given (usage: qrnn eval CHECKPOINT --data FILE)");
    if (!vm.count("data")) fail("--data FILE: no token file to evaluate on");
    const std::string path = vm["checkpoint"].as<std::string>(), data = vm["data"].as<std::string>();

    const std::string which = vm["params"].as<std::string>();
    if (which != "best" && which != "last") fail("--params: '", which, "' is not best or last");
    lm::CheckpointInfo info = lm::read_checkpoint_info(path, /*to_resume=*/false);
    lm::TrainConfig cfg = lm::config_from_text(info.config, path);
    try {
        cfg.validate();
    } catch (const Error &e) {
        fail(path, ": attribute config: ", e.what());
    }
    const int64_t batch = vm.count("batch") ? vm["batch"].as<int64_t>() : cfg.batch;
    if (batch < 1) fail("--batch: must be >= 1 (got ", batch, ")");
    const lm::Vocabulary vocab = lm::Vocabulary::from_words(info.vocab);
    const std::vector<int32_t> tokens = lm::read_tokens(data, vocab);  // before compiling the model
    const lm::BatchStream stream(tokens, batch, cfg.bptt, data);
    std::unique_ptr<lm::TrainableModel> model = lm::make_language_model(cfg, vocab.size());
    model->reset_state(cfg.batch, 0);
    lm::load_checkpoint_model(path, *model);
    const std::vector<Tensor<float>> best = which == "best" ? lm::read_best_params(path, *model) : std::vector<Tensor<float>>{};
    if (!best.empty()) lm::set_params(*model, best);
    const double ppl = lm::perplexity(*model, stream);
    if (!std::isfinite(ppl)) fail(path, ": perplexity on ", data, " is ", ppl, " (the parameters overflow)");
    std::cout << data << ": perplexity " << ppl << " (" << tokens.size() << " tokens; checkpoint " << path << ", epoch "
              << info.progress.epoch << ", step " << info.progress.step << "; parameters of "
              << (best.empty() ? std::string("the last step") : "epoch " + std::to_string(info.best_epoch) + ", the best validation")
              << ")\n";
    return kExitOk;
}

const bool cmd_eval_registered = register_command({"eval", "perplexity of a trained language model checkpoint on a token file", eval_command});
}  // namespace
}  // namespace qrnn::cli
