// Fuzzing of the in-process parsers (tests/support/fuzz.h): sweep YAML, tuning-database lines, dump loader.
// Each runs a bounded time (QRNN_FUZZ_SECONDS, default below) from its corpus in tests/fuzz/; every input
// must parse or be rejected with a qrnn::Error, never crash. (Byte-level corruption inside HDF5's own
// structures is out of scope: the dump fuzzer edits datasets and attributes, and truncates.)
#include <gtest/gtest.h>
#include <H5Cpp.h>

#include <filesystem>

#include "core/error.h"
#include "runtime/hdf5_dump.h"
#include "schedules/tuning_db.h"
#include "sweep/sweep_spec.h"
#include "tests/support/cli.h"
#include "tests/support/fuzz.h"

namespace qrnn::test {
namespace {
namespace fs = std::filesystem;

constexpr double kSeconds = 10;

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

// The dump loader on edited dumps: datasets removed, replaced by others of random rank, shape and type or
// by a group, attributes removed or retyped, the file truncated; read with a possibly different config.
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
    const std::vector<std::string> attributes{"format", "format_version", "gates", "pooling", "window", "layers"};
    ModelConfig read_cfg = cfg;
    auto make = [&](FuzzRng &rng, int64_t i) {
        fs::copy_file(seed_dump, path, fs::copy_options::overwrite_existing);
        read_cfg = cfg;
        std::string what = "edits:";
        if (i == 0) return what + " none";
        auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
        try {
            H5::Exception::dontPrint();
            H5::H5File f(path, H5F_ACC_RDWR);
            const int edits = 1 + static_cast<int>(pick(3));
            for (int e = 0; e < edits; e++) {
                const std::string ds = datasets[pick(datasets.size())], attr = attributes[pick(attributes.size())];
                switch (pick(5)) {
                case 0:
                    what += " remove " + ds;
                    if (f.nameExists(ds)) f.unlink(ds);
                    break;
                case 1: {
                    const int rank = static_cast<int>(pick(5));
                    std::vector<hsize_t> dims(rank);
                    for (auto &d : dims) d = pick(7);
                    const H5::PredType *types[] = {&H5::PredType::NATIVE_FLOAT, &H5::PredType::NATIVE_DOUBLE,
                                                   &H5::PredType::NATIVE_INT32, &H5::PredType::NATIVE_UINT8};
                    const size_t type = pick(4);
                    what += " replace " + ds + " (rank " + std::to_string(rank) + ", type " + std::to_string(type) + ")";
                    if (f.nameExists(ds)) f.unlink(ds);
                    H5::DataSpace space = rank == 0 ? H5::DataSpace(H5S_SCALAR) : H5::DataSpace(rank, dims.data());
                    if (ds.rfind('/') > 0) f.createDataSet(ds, *types[type], space);
                    break;
                }
                case 2:
                    what += " group " + ds;
                    if (f.nameExists(ds)) f.unlink(ds);
                    if (ds.rfind('/') > 0 && f.nameExists(ds.substr(0, ds.rfind('/')))) f.createGroup(ds);
                    break;
                case 3: {
                    what += " retype attribute " + attr;
                    if (f.attrExists(attr)) f.removeAttr(attr);
                    if (pick(2)) {
                        int64_t v = static_cast<int64_t>(rng()) >> pick(64);
                        f.createAttribute(attr, H5::PredType::NATIVE_INT64, H5::DataSpace(H5S_SCALAR)).write(H5::PredType::NATIVE_INT64, &v);
                    } else {
                        std::string v(pick(6), static_cast<char>('a' + pick(26)));
                        H5::StrType type(H5::PredType::C_S1, std::max<size_t>(v.size(), 1));
                        f.createAttribute(attr, type, H5::DataSpace(H5S_SCALAR)).write(type, v.c_str());
                    }
                    break;
                }
                default: {
                    const char *poolings[] = {"f", "fo", "ifo"};
                    read_cfg.pooling = poolings[pick(3)];
                    read_cfg.window = 1 + static_cast<int64_t>(pick(3));
                    read_cfg.layers = 1 + static_cast<int64_t>(pick(3));
                    what += " read as pooling " + read_cfg.pooling + " k=" + std::to_string(read_cfg.window) + " L=" +
                            std::to_string(read_cfg.layers);
                }
                }
            }
        } catch (const H5::Exception &e) {
            what += " (edit failed: " + e.getDetailMsg() + ")";
        }
        if (pick(8) == 0) {
            const auto size = fs::file_size(path), keep = static_cast<uintmax_t>(rng() % size);
            fs::resize_file(path, keep);
            what += " truncate to " + std::to_string(keep) + " of " + std::to_string(size) + " bytes";
        }
        return what;
    };
    FuzzStats stats = fuzz_for("dump loader", kSeconds, make, [&](const std::string &) { read_dump(path, read_cfg); });
    EXPECT_GT(stats.rejected, 0);
    EXPECT_LT(stats.rejected, stats.inputs);  // the unedited seed loads
}

}  // namespace
}  // namespace qrnn::test
