// `qrnn eval CHECKPOINT --data FILE`: perplexity of a trained language model (a `qrnn train` checkpoint) on a
// token file, words outside its vocabulary as <unk>; with the parameters of the best validation epoch (or
// `--params last`: the last ones). Of a classify-text checkpoint (e.g. pQRNN), the accuracy on a label<TAB>text file,
// and with `--precision int8` also in int8, calibrated on the checkpoint's valid split (tasks/text_eval.h).
#include <cmath>
#include <iomanip>
#include <iostream>

#include "core/error.h"
#include "lm/trainer.h"
#include "tasks/seq_checkpoint.h"
#include "tasks/text_eval.h"
#include "tools/command.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

int eval_text_classifier(const std::string &path, const std::string &data, bool int8, bool save_int8) {
    const lm::TextEvalResult r = lm::evaluate_text_checkpoint(path, data, int8, save_int8);
    std::cout << std::fixed << std::setprecision(4) << data << ": accuracy " << r.f32 << " f32";
    if (int8) {
        std::cout << ", " << r.int8 << " int8 (drop " << std::setprecision(2) << 100 * (r.f32 - r.int8) << " points, "
                  << r.changed << " predictions changed; int8 ";
        if (r.int8_from_checkpoint) std::cout << "parameters from the checkpoint, calibrated on " << r.calibration_file << ")";
        else std::cout << "calibrated on " << r.calibration_file << ", " << r.calibration_examples << " examples)";
    }
    std::cout << "; " << r.examples << " examples, checkpoint " << path << "\n";
    if (r.int8_saved) std::cout << "int8 parameters saved in " << path << " (/int8)\n";
    return kExitOk;
}

int eval_command(const std::vector<std::string> &args) {
    po::options_description desc("qrnn eval options");
    desc.add_options()("help,h", "show this help")("checkpoint", po::value<std::string>(), "checkpoint of qrnn train")(
        "data", po::value<std::string>(), "token file to evaluate on (e.g. data/ptb/ptb.test.txt)")(
        "batch", po::value<int64_t>(), "streams per batch (default: the training batch)")(
        "params", po::value<std::string>()->default_value("best"), "best (the best validation epoch's) or last")(
        "precision", po::value<std::string>()->default_value("f32"),
        "classify-text checkpoints: f32, or int8 (f32 and int8 side by side; int8 with the checkpoint's int8 parameters, "
        "else calibrated on valid; docs/int8.md)")(
        "save-int8", "with --precision int8: store the calibration's int8 parameters in the checkpoint (/int8)");
    po::positional_options_description positional;
    positional.add("checkpoint", 1);
    po::variables_map vm;
    if (!parse_options("usage: qrnn eval CHECKPOINT --data FILE [--batch B] [--params best|last] [--precision f32|int8 [--save-int8]]", desc, args, vm, &positional)) return kExitOk;
    if (!vm.count("checkpoint")) fail("no checkpoint given (usage: qrnn eval CHECKPOINT --data FILE)");
    if (!vm.count("data")) fail("--data FILE: no token file to evaluate on");
    const std::string path = vm["checkpoint"].as<std::string>(), data = vm["data"].as<std::string>();

    const std::string precision = vm["precision"].as<std::string>();
    if (precision != "f32" && precision != "int8") fail("--precision: '", precision, "' is not f32 or int8");
    if (vm.count("save-int8") && precision != "int8") fail("--save-int8: only with --precision int8");
    if (lm::is_seq_checkpoint(path)) return eval_text_classifier(path, data, precision == "int8", vm.count("save-int8") > 0);
    if (precision != "f32") fail("--precision int8: for classify-text checkpoints (", path, " is a language model)");
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

const bool cmd_eval_registered = register_command({"eval", "perplexity of a language model checkpoint on a token file; accuracy of a classify-text one (f32, int8)", eval_command});
}  // namespace
}  // namespace qrnn::cli
