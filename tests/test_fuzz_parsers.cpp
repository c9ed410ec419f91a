// Fuzzing of the in-process parsers (tests/support/fuzz.h): sweep YAML, tuning-database lines, dump loader, and
// the training side: train configs of every task, token files, training checkpoints.
// Each runs a bounded time (QRNN_FUZZ_SECONDS, default below) from its corpus in tests/fuzz/; every input
// must parse or be rejected with a qrnn::Error, never crash. (Byte-level corruption inside HDF5's own
// structures is out of scope: the dump fuzzer edits datasets and attributes, and truncates.)
#include <gtest/gtest.h>
#include <H5Cpp.h>

#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "lm/checkpoint.h"
#include "lm/corpus.h"
#include "tasks/seq_trainer.h"
#include "lm/trainer.h"
#include "runtime/hdf5_dump.h"
#include "schedules/tuning_db.h"
#include "sweep/sweep_spec.h"
#include "tests/support/cli.h"
#include "tests/support/fuzz.h"

namespace qrnn::test {
namespace {
namespace fs = std::filesystem;

constexpr double kSeconds = 10;
constexpr double kTrainingSeconds = 5;  // each of the training-side parsers

// Picks corpus entry i unmutated for the first corpus.size() iterations, then mutates a random one.
std::function<std::string(FuzzRng &, int64_t)> from_corpus(const std::vector<std::string> &corpus,
                                                           const std::vector<std::string> &dictionary) {
    return [&corpus, &dictionary](FuzzRng &rng, int64_t i) {
        if (i < static_cast<int64_t>(corpus.size())) return corpus[i];
        return mutate(rng, corpus[rng() % corpus.size()], corpus, dictionary);
    };
}

TEST(Fuzz, SweepYaml) {
    const auto corpus = load_corpus("sweep");
    const std::vector<std::string> dictionary{
        "name", "base", "grid", "zip", "exclude", "repeats", "seed", "interleave", "description", "model", "pooling",
        "schedule", "target", "window", "batch", "seq", "input", "hidden", "layers", "mode", "zoneout", "dropout",
        "warmup", "verify", "tolerance", "knob.chunk", "knob.tile_t", "knob.chains", "knob.", "fused", "tuned-db",
        "host-cuda", "cuda-fused", "x86-64-linux", "qrnn", "lstm-onednn", "cnn", "train", "eval", "0", "-1", "1e308",
        ".nan", ".inf", "99999999999", "4294967296", "2147483648", "[]", "{}", "~", "null", "true", "&a", "*a", "<<: *a",
        "!!binary", "---", "...", "\n  - ", ": ", "[1, 2, 3, 4, 5, 6, 7, 8, 9, 10]", "'", "\"\\u0000\""};
    FuzzStats stats = fuzz_for("sweep YAML", kSeconds, from_corpus(corpus, dictionary), [](const std::string &text) {
        sweep::LoadOptions opts;
        parse_sweep(text, "fuzz.yaml", opts);
    });
    EXPECT_GT(stats.inputs, static_cast<int64_t>(corpus.size()));
}

TEST(Fuzz, TuningDatabaseLines) {
    const auto corpus = load_corpus("tuning_db", true);
    const std::vector<std::string> dictionary{
        "\"schedule\":\"tuned-db\"", "\"tile_t\":100000", "\"chunk\":0", "\"chains\":99999999999", "\"T\":0", "\"k\":-1",
        "\"median_ms\":-1", "\"median_ms\":1e999", "\"status\":\"ok\"", "\"knobs\":[]", "\"knobs\":{\"x\":{}}", "null",
        "true", "\"\\ud800\"", "{", "}", "[", "]", ",", ":", "\"", "1e308", "-0", "nan"};
    const LayerShape shape{8, 2, 4, 5, 2};
    FuzzStats stats = fuzz_for("tuning-DB line", kSeconds, from_corpus(corpus, dictionary), [&](const std::string &line) {
        TuningRecord r = parse_tuning_line(line);
        if (!tuning_record_problem(r).empty()) return;
        auto best = best_tuning_record({r}, r.pooling, r.target, shape);
        if (best) merge_knobs(find_layer_schedule(best->schedule), best->knobs);
    });
    EXPECT_GT(stats.inputs, static_cast<int64_t>(corpus.size()));
}

// One random edit of an HDF5 file, described: a dataset removed, replaced by one of random rank, shape and type or
// by a group, or one of its bytes flipped; an attribute ("object@name", "/@format" on the root) removed or
// rewritten as an integer or a string.
std::string edit_hdf5(FuzzRng &rng, H5::H5File &f, const std::vector<std::string> &datasets,
                      const std::vector<std::string> &attributes) {
    auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
    const std::string ds = datasets[pick(datasets.size())], attr_spec = attributes[pick(attributes.size())];
    switch (pick(5)) {
    case 0:
        if (f.nameExists(ds)) f.unlink(ds);
        return " remove " + ds;
    case 1: {
        const int rank = static_cast<int>(pick(5));
        std::vector<hsize_t> dims(rank);
        for (auto &d : dims) d = pick(7);
        const H5::PredType *types[] = {&H5::PredType::NATIVE_FLOAT, &H5::PredType::NATIVE_DOUBLE, &H5::PredType::NATIVE_INT32,
                                       &H5::PredType::NATIVE_UINT8};
        const size_t type = pick(4);
        if (f.nameExists(ds)) f.unlink(ds);
        H5::DataSpace space = rank == 0 ? H5::DataSpace(H5S_SCALAR) : H5::DataSpace(rank, dims.data());
        if (ds.rfind('/') > 0) f.createDataSet(ds, *types[type], space);
        return " replace " + ds + " (rank " + std::to_string(rank) + ", type " + std::to_string(type) + ")";
    }
    case 2:
        if (f.nameExists(ds)) f.unlink(ds);
        if (ds.rfind('/') > 0 && f.nameExists(ds.substr(0, ds.rfind('/')))) f.createGroup(ds);
        return " group " + ds;
    case 3: {
        if (!f.nameExists(ds) || f.childObjType(ds) != H5O_TYPE_DATASET) return " (no dataset " + ds + ")";
        H5::DataSet set = f.openDataSet(ds);
        std::vector<unsigned char> bytes(set.getStorageSize());
        if (bytes.empty()) return " (empty " + ds + ")";
        const H5::DataType type = set.getDataType();
        set.read(bytes.data(), type);
        const size_t at = pick(bytes.size());
        bytes[at] ^= static_cast<unsigned char>(1u << pick(8));
        set.write(bytes.data(), type);
        return " flip a bit of byte " + std::to_string(at) + " of " + ds;
    }
    default: {
        const size_t at = attr_spec.find('@');
        const std::string object = attr_spec.substr(0, at), attr = attr_spec.substr(at + 1);
        if (object != "/" && !f.nameExists(object)) return " (no " + object + ")";
        auto rewrite = [&](H5::H5Object &obj) -> std::string {
            if (obj.attrExists(attr)) obj.removeAttr(attr);
            if (pick(2)) {
                int64_t v = static_cast<int64_t>(rng()) >> pick(64);
                if (pick(2)) v = static_cast<int64_t>(pick(5)) - 2;
                obj.createAttribute(attr, H5::PredType::NATIVE_INT64, H5::DataSpace(H5S_SCALAR)).write(H5::PredType::NATIVE_INT64, &v);
                return " attribute " + attr_spec + " = " + std::to_string(v);
            }
            std::string v(pick(6), static_cast<char>('a' + pick(26)));
            H5::StrType type(H5::PredType::C_S1, std::max<size_t>(v.size(), 1));
            obj.createAttribute(attr, type, H5::DataSpace(H5S_SCALAR)).write(type, v.c_str());
            return " attribute " + attr_spec + " = '" + v + "'";
        };
        if (object != "/" && f.childObjType(object) == H5O_TYPE_DATASET) {
            H5::DataSet set = f.openDataSet(object);
            return rewrite(set);
        }
        H5::Group group = f.openGroup(object);  // "/": the root, whose attributes are the file's
        return rewrite(group);
    }
    }
}

// Copies seed to path and applies 1-3 edits (edit_hdf5; `other`, when given, may stand in for one: it describes
// itself) and sometimes a truncation. Iteration 0 leaves the copy unedited.
std::string edited_copy(FuzzRng &rng, int64_t i, const std::string &seed, const std::string &path,
                        const std::vector<std::string> &datasets, const std::vector<std::string> &attributes,
                        const std::function<std::string()> &other = nullptr) {
    fs::copy_file(seed, path, fs::copy_options::overwrite_existing);
    std::string what = "edits:";
    if (i == 0) return what + " none";
    try {
        H5::Exception::dontPrint();
        H5::H5File f(path, H5F_ACC_RDWR);
        const int edits = 1 + static_cast<int>(rng() % 3);
        for (int e = 0; e < edits; e++) what += other && rng() % 5 == 0 ? other() : edit_hdf5(rng, f, datasets, attributes);
    } catch (const H5::Exception &e) {
        what += " (edit failed: " + e.getDetailMsg() + ")";
    }
    if (rng() % 8 == 0) {
        const auto size = fs::file_size(path), keep = static_cast<uintmax_t>(rng() % size);
        fs::resize_file(path, keep);
        what += " truncate to " + std::to_string(keep) + " of " + std::to_string(size) + " bytes";
    }
    return what;
}

// The dump loader on edited dumps (edited_copy), read with a possibly different config.
TEST(Fuzz, DumpLoader) {
    ModelConfig cfg;
    cfg.window = 2, cfg.batch = 2, cfg.seq = 3, cfg.input = 4, cfg.hidden = 5, cfg.layers = 2;
    const std::string seed_dump = scratch_path("seed.h5"), path = scratch_path("fuzzed.h5");
    {
        RunData d{init_input(cfg), init_params(cfg), initial_state<float>(cfg), Tensor<float>({3, 2, 5}), Tensor<float>({2, 2, 5})};
        write_dump(seed_dump, cfg, d);
    }
    const std::vector<std::string> datasets{"/input/x", "/layer_0/weights", "/layer_0/bias", "/layer_0/c0", "/layer_0/history",
                                            "/layer_1/weights", "/layer_1/bias", "/layer_1/c0", "/layer_1/history",
                                            "/output/h", "/output/c_T", "/input", "/layer_1"};
    const std::vector<std::string> attributes{"/@format", "/@format_version", "/@gates", "/@pooling", "/@window", "/@layers"};
    ModelConfig read_cfg = cfg;
    auto make = [&](FuzzRng &rng, int64_t i) {
        read_cfg = cfg;
        return edited_copy(rng, i, seed_dump, path, datasets, attributes, [&] {
            const char *poolings[] = {"f", "fo", "ifo"};
            read_cfg.pooling = poolings[rng() % 3];
            read_cfg.window = 1 + static_cast<int64_t>(rng() % 3);
            read_cfg.layers = 1 + static_cast<int64_t>(rng() % 3);
            return " read as pooling " + read_cfg.pooling + " k=" + std::to_string(read_cfg.window) + " L=" +
                   std::to_string(read_cfg.layers);
        });
    };
    FuzzStats stats = fuzz_for("dump loader", kSeconds, make, [&](const std::string &) { read_dump(path, read_cfg); });
    EXPECT_GT(stats.rejected, 0);
    EXPECT_LT(stats.rejected, stats.inputs);  // the unedited seed loads
}

// Training configs of every task (tests/fuzz/train): loaded from a file from the task's defaults and validated
// as `qrnn train` does before anything runs.
TEST(Fuzz, TrainConfigs) {
    const auto corpus = load_corpus("train");
    const std::vector<std::string> dictionary{
        "task", "lm", "reverse", "sort", "classify", "model", "encdec", "encdec-noattn", "qrnn-bidir", "qrnn-dense", "cnn",
        "lstm-onednn", "attention", "pool", "vocab", "min_len", "max_len", "eval_size", "time_limit", "epochs", "max_batches",
        "window", "hidden", "emb", "batch", "bptt", "lr", "clip", "zoneout", "dropout", "io_dropout", "tie_weights", "target",
        "arm-64-linux", "host-cuda", "checkpoint", "results", "0", "-1", "1e-320", "1e308", ".nan", ".inf", "9223372036854775807",
        "9223372036854775808", "2147483648", "1000000", "[]", "{}", "~", "---", "\n  - ", ": ", "'", "&a", "*a"};
    const std::string path = scratch_path("train.yaml");
    FuzzStats stats = fuzz_for("train config", kTrainingSeconds, from_corpus(corpus, dictionary), [&](const std::string &text) {
        { std::ofstream(path) << text; }
        lm::TrainConfig probe;
        lm::load_train_yaml(probe, path);
        lm::TrainConfig cfg = lm::task_defaults(probe.seq.task);
        lm::load_train_yaml(cfg, path);
        if (cfg.seq.task == "lm") cfg.validate();
        else lm::validate_seq_task(cfg);
    });
    EXPECT_GT(stats.inputs, static_cast<int64_t>(corpus.size()));
}

// Token files (tests/fuzz/tokens): vocabulary and tokens from one read, batched.
TEST(Fuzz, TokenFiles) {
    const auto corpus = load_corpus("tokens");
    const std::vector<std::string> dictionary{"<eos>", "<unk>", " ", "\n", "\r\n", "\t", std::string(1, '\0'), "\xff", "\xc3"};
    const std::string path = scratch_path("tokens.txt");
    FuzzStats stats = fuzz_for("token file", kTrainingSeconds, from_corpus(corpus, dictionary), [&](const std::string &text) {
        { std::ofstream(path, std::ios::binary) << text; }
        std::vector<int32_t> tokens;
        const lm::Vocabulary vocab = lm::Vocabulary::from_file(path, &tokens);
        if (tokens != lm::read_tokens(path, vocab)) ADD_FAILURE() << "one read and two reads differ on:\n" << text;
        const lm::BatchStream stream(tokens, 2, 3, path);
        for (int64_t b = 0; b < stream.batches(); b++) stream.batch(b);
    });
    EXPECT_GT(stats.rejected, 0);
}

// Training checkpoints: a real one (a tiny LM, mid-epoch 2) edited (edited_copy) in its attributes, datasets and
// checksums, then read as a resume reads it. The unedited one loads.
TEST(Fuzz, TrainingCheckpoints) {
    lm::TrainConfig cfg;
    cfg.lm.stack.input = 4, cfg.lm.stack.hidden = 4, cfg.lm.stack.layers = 1, cfg.lm.stack.window = 2;
    cfg.batch = 2, cfg.bptt = 3, cfg.train = "t.txt", cfg.valid = "v.txt";
    const std::vector<std::string> words{"a", "b", "c", lm::kEos, lm::kUnk};
    std::unique_ptr<lm::TrainableModel> model = lm::make_language_model(cfg, static_cast<int64_t>(words.size()));
    model->reset_state(cfg.batch, 0);
    lm::CheckpointInfo info;
    info.identity = lm::identity(cfg), info.config = lm::config_text(cfg), info.vocab = words, info.lr = 20;
    info.progress.epoch = 1, info.progress.batch = 1, info.progress.step = 4, info.progress.history.resize(1);
    for (auto &p : model->params()) info.best_params.push_back(*p.value);
    info.best_epoch = 1;
    const std::string seed = scratch_path("seed_checkpoint.h5"), path = scratch_path("checkpoint.h5");
    lm::write_checkpoint(seed, info, *model);
    const std::vector<std::string> datasets{"/params/embedding", "/params/decoder/bias", "/params/layer_0/weights",
                                            "/best/embedding", "/best/decoder/weights", "/state/0/c", "/vocab",
                                            "/history/val_ppl", "/history/train_ppl", "/params", "/best", "/state/0"};
    const std::vector<std::string> attributes{
        "/@format", "/@format_version", "/@identity", "/@config", "/@checksums", "/progress@epoch", "/progress@batch", "/progress@step",
        "/progress@targets", "/progress@loss", "/optimizer@lr", "/optimizer@plateau_bad", "/best@epoch", "/state/0@time",
        "/params/embedding@fnv1a64", "/best/decoder/bias@fnv1a64"};
    auto make = [&](FuzzRng &rng, int64_t i) { return edited_copy(rng, i, seed, path, datasets, attributes); };
    FuzzStats stats = fuzz_for("training checkpoint", kTrainingSeconds, make, [&](const std::string &) {
        const lm::CheckpointInfo read = lm::read_checkpoint_info(path);
        lm::validate_progress(path, read, 3, 2);
        lm::config_from_text(read.config, path);
        lm::load_checkpoint_model(path, *model);
        lm::read_best_params(path, *model);
    });
    EXPECT_GT(stats.rejected, 0);
    EXPECT_LT(stats.rejected, stats.inputs);
}

}  // namespace
}  // namespace qrnn::test
