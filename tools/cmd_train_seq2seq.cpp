// `qrnn train-seq2seq`: trains the encoder-decoder QRNN (nn/encoder_decoder.h, with or without attention) on
// the seeded reversal task (nn/seq2seq.h) until held-out exact-match accuracy reaches --target-accuracy, the
// --time-limit or --max-steps; prints the accuracy curve, and with --heatmap FILE the attention weights of one
// held-out example as CSV (rows: output steps, columns: source positions).
#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include "core/error.h"
#include "nn/seq2seq.h"
#include "runtime/atomic_file.h"
#include "tools/command.h"
#include "tools/options.h"

namespace po = boost::program_options;

namespace qrnn::cli {
namespace {

void write_heatmap(const std::string &path, nn::Seq2Seq &model, const nn::ReversalTraining &opts) {
    nn::Seq2SeqBatch b = nn::reversal_batch(opts.task, 1, opts.seed, 1, 0);
    Tensor<float> alpha;
    auto decoded = model.greedy_decode(b.source, b.lengths, opts.task.bos(), opts.task.eos(), opts.task.max_len + 1, &alpha);
    std::ostringstream os;
    os << "# source:";
    for (auto t : b.sources[0]) os << " " << t;
    os << "\n# decoded:";
    for (auto t : decoded[0]) os << " " << t;
    os << "\n";
    const int64_t steps = std::min(static_cast<int64_t>(decoded[0].size()) + 1, alpha.dim(1));  // with the EOS step
    for (int64_t t = 0; t < steps; t++) {
        for (int64_t s = 0; s < alpha.dim(2); s++) os << (s ? "," : "") << alpha(0, t, s);
        os << "\n";
    }
    write_file_atomically(path, os.str(), "attention heatmap");
}

int train_seq2seq_command(const std::vector<std::string> &args) {
    nn::ReversalTraining opts;
    ModelConfig base;
    base.hidden = 128, base.layers = 2, base.window = 4, base.pooling = "fo";
    std::string attention = "on", heatmap;
    po::options_description desc("qrnn train-seq2seq options");
    desc.add_options()("help,h", "show this help")
        ("attention", po::value(&attention)->default_value(attention), "on|off")
        ("hidden", po::value(&base.hidden)->default_value(base.hidden), "units per layer (encoder and decoder)")
        ("layers", po::value(&base.layers)->default_value(base.layers), "layers of the encoder and of the decoder")
        ("window", po::value(&base.window)->default_value(base.window), "conv window k")
        ("pooling", po::value(&base.pooling)->default_value(base.pooling), "f|fo|ifo")
        ("schedule", po::value(&base.schedule)->default_value(base.schedule), "training schedule")
        ("batch", po::value(&opts.batch)->default_value(opts.batch), "training batch")
        ("lr", po::value(&opts.adam.lr)->default_value(opts.adam.lr), "Adam learning rate")
        ("decay", po::value(&opts.decay)->default_value(opts.decay), "decay the learning rate linearly over --time-limit (to 5%)")
        ("clip", po::value(&opts.adam.clip_norm)->default_value(opts.adam.clip_norm), "global gradient-norm clip (0: off)")
        ("seed", po::value(&opts.seed)->default_value(opts.seed), "data and initialisation")
        ("vocab", po::value(&opts.task.vocab)->default_value(opts.task.vocab), "content tokens")
        ("min-len", po::value(&opts.task.min_len)->default_value(opts.task.min_len), "shortest sequence")
        ("max-len", po::value(&opts.task.max_len)->default_value(opts.task.max_len), "longest sequence")
        ("time-limit", po::value(&opts.time_limit)->default_value(opts.time_limit), "seconds of training (evaluations included)")
        ("max-steps", po::value(&opts.max_steps)->default_value(opts.max_steps), "0: no limit")
        ("eval-every", po::value(&opts.eval_every)->default_value(opts.eval_every), "steps between evaluations")
        ("eval-size", po::value(&opts.eval_size)->default_value(opts.eval_size), "held-out sequences per evaluation")
        ("target-accuracy", po::value(&opts.target_accuracy)->default_value(opts.target_accuracy), "stop at this exact-match accuracy")
        ("heatmap", po::value(&heatmap), "write one held-out example's attention weights (CSV) here");
    po::variables_map vm;
    if (!parse_options("usage: qrnn train-seq2seq [options]   (reversal task, exact-match accuracy on held-out data)",
                       desc, args, vm))
        return kExitOk;
    if (attention != "on" && attention != "off") fail("--attention must be on or off (got '", attention, "')");
    if (!heatmap.empty() && attention == "off") fail("--heatmap needs --attention on");
    opts.validate();
    base.seed = opts.seed, base.batch = opts.batch, base.seq = opts.task.max_len + 1, base.input = opts.task.symbols();
    base.model = "encdec";
    EncDecConfig cfg = make_encdec_config(base, opts.task.max_len, opts.task.symbols(), attention == "on");
    cfg.validate();
    nn::Seq2Seq model(cfg, opts.task.symbols());
    std::cout << cfg.describe() << " batch=" << opts.batch << " lr=" << opts.adam.lr << " lengths " << opts.task.min_len
              << ".." << opts.task.max_len << " vocab " << opts.task.vocab << "\n";
    std::cout << std::setw(8) << "step" << std::setw(10) << "seconds" << std::setw(12) << "train_loss" << std::setw(12)
              << "exact_match" << "\n";
    auto curve = nn::train_reversal(opts, model, [](const nn::TrainPoint &p) {
        std::cout << std::setw(8) << p.step << std::setw(10) << std::fixed << std::setprecision(1) << p.seconds
                  << std::setw(12) << std::setprecision(4) << p.loss << std::setw(12) << p.accuracy << std::endl;
    });
    const nn::TrainPoint &last = curve.back();
    std::cout << "final: exact_match=" << last.accuracy << " after " << last.step << " steps, " << last.seconds
              << " s (attention " << attention << ")\n";
    if (!heatmap.empty()) write_heatmap(heatmap, model, opts), std::cout << "heatmap: wrote " << heatmap << "\n";
    return kExitOk;
}

const bool registered = register_command(
    {"train-seq2seq", "train the encoder-decoder QRNN (attention on/off) on the seeded reversal task", train_seq2seq_command});
}  // namespace
}  // namespace qrnn::cli
