// External plugins through the CLI: the example plugin (plugins/examples) loaded and verified by
// `qrnn run`, every loader error (clear message, exit 2), plugin directories, `qrnn plugins`, and the
// model options of `qrnn run` (lists of models, ignored options, an unavailable model).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "plugins/plugin_api.h"
#include "tests/support/cli.h"

namespace qrnn::test {
namespace {
namespace fs = std::filesystem;

// The example plugin is built next to the CLI, in <build>/plugins/, the fixtures in plugins/test-fixtures/.
std::string plugin(const std::string &name) {
    fs::path dir = fs::path(QRNN_CLI).parent_path() / "plugins";
    if (name.rfind("qrnn_test_", 0) == 0) dir /= "test-fixtures";
    return (dir / ("lib" + name + ".so")).string();
}
const std::string kSmall = " --seq 1,7 --batch 1,3 --input 5 --hidden 17 --repeats 1 --warmup 0";

void expect_error(const std::string &args, const std::string &message) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(message), std::string::npos) << "want: " << message << "\ngot: " << r.output;
}

TEST(ExamplePlugin, LoadedAndVerifiedByRun) {
    CliResult r = run_cli("--plugin " + plugin("qrnn_fo_tanh") + " run --pooling fo-tanh,fo --window 1,3 --verify" + kSmall);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("fo-tanh"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("verify: all within"), std::string::npos) << r.output;
    EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
}

TEST(ExamplePlugin, OptionAfterCommandAndLoadedTwice) {
    std::string so = plugin("qrnn_fo_tanh");
    CliResult r = run_cli("run --plugin " + so + " --plugin=" + so + " --pooling fo-tanh --verify" + kSmall);
    EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ExamplePlugin, UnknownWithoutLoading) {
    expect_error("run --pooling fo-tanh" + kSmall, "unknown pooling 'fo-tanh' (known: f, fo, ifo)");
}

// A plugin compiled outside the build, as a user would: build/plugins/build_plugin.sh SOURCE OUTPUT.
TEST(ExamplePlugin, BuildsOutOfTree) {
    std::string script = (fs::path(QRNN_CLI).parent_path() / "plugins" / "build_plugin.sh").string();
    std::string source = std::string(QRNN_SOURCE_DIR) + "/plugins/examples/fo_tanh_pooling.cpp";
    std::string so = scratch_path("libout_of_tree.so");
    std::string compile = script + " " + source + " " + so + " '-DFO_TANH_NAME=\"fo-tanh-oot\"' 2>&1";
    ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
    CliResult r = run_cli("--plugin " + so + " run --pooling fo-tanh-oot --verify" + kSmall);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("fo-tanh-oot"), std::string::npos) << r.output;
}

TEST(ExamplePlugin, ListedWithItsSource) {
    CliResult r = run_cli("plugins --kind pooling --plugin " + plugin("qrnn_fo_tanh"));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("fo-tanh"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("libqrnn_fo_tanh.so"), std::string::npos) << r.output;
}

TEST(ExamplePlugin, BuildPluginDirectoryHoldsOnlyTheExample) {
    std::string dir = (fs::path(QRNN_CLI).parent_path() / "plugins").string();
    CliResult r = run_cli("run --plugin-dir " + dir + " --pooling fo-tanh --verify" + kSmall);
    EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ExamplePlugin, PluginDirectoryAndEnvironment) {
    fs::path dir = fs::path(scratch_path("plugin_dir"));
    fs::create_directories(dir);
    fs::copy_file(plugin("qrnn_fo_tanh"), dir / "libqrnn_fo_tanh.so");
    std::ofstream(dir / "README.txt") << "not a plugin, and not *.so: ignored\n";
    CliResult r = run_cli("plugins --kind pooling --plugin-dir " + dir.string());
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("fo-tanh"), std::string::npos) << r.output;
    r = run_cli("run --pooling fo-tanh --verify" + kSmall);  // sanity: not loaded by default
    EXPECT_EQ(r.exit_code, 2) << r.output;
    setenv("QRNN_PLUGIN_PATH", ("/nonexistent-first:" + dir.string()).c_str(), 1);
    r = run_cli("plugins");
    EXPECT_EQ(r.exit_code, 2) << r.output;  // a missing directory in the path is an error, named
    EXPECT_NE(r.output.find("QRNN_PLUGIN_PATH: plugin directory '/nonexistent-first': no such directory"), std::string::npos)
        << r.output;
    setenv("QRNN_PLUGIN_PATH", dir.string().c_str(), 1);
    r = run_cli("run --pooling fo-tanh --verify" + kSmall);
    unsetenv("QRNN_PLUGIN_PATH");
    EXPECT_EQ(r.exit_code, 0) << r.output;
}

TEST(ExternalPlugins, ModelAndScheduleKinds) {
    std::string so = plugin("qrnn_test_aliases");
    CliResult r = run_cli("plugins --plugin " + so);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char *want : {"tuned-alias", "qrnn-alias", "libqrnn_test_aliases.so"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
    r = run_cli("run --plugin " + so + " --model qrnn-alias --schedule tuned-alias --pooling ifo --verify" + kSmall);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("tuned-alias"), std::string::npos) << r.output;
}

TEST(PluginErrors, FileMissing) {
    expect_error("--plugin /nonexistent/libnothing.so run", "plugin '/nonexistent/libnothing.so': no such file");
}

TEST(PluginErrors, NotASharedLibrary) {
    std::string path = scratch_path("text.so");
    std::ofstream(path) << "this is text\n";
    expect_error("run --plugin " + path, "plugin '" + path + "': not a shared library");
    expect_error("run --plugin /bin/true", "plugin '/bin/true': not a loadable shared library (");  // an executable
    expect_error("run --plugin /tmp", "plugin '/tmp': not a regular file");
}

TEST(PluginErrors, EntryPointMissing) {
    expect_error("run --plugin " + plugin("qrnn_test_no_entry"), "entry point qrnn_plugin_entry missing");
}

TEST(PluginErrors, AbiVersionMismatch) {
    expect_error("run --plugin " + plugin("qrnn_test_bad_abi"), "ABI version 999, this qrnn needs " + std::to_string(QRNN_PLUGIN_ABI_VERSION));
}

TEST(PluginErrors, DuplicateName) {
    expect_error("run --plugin " + plugin("qrnn_test_duplicate"), "pooling variant 'fo' is already registered");
}

TEST(PluginErrors, MissingValueAndDirectory) {
    expect_error("run --plugin", "--plugin needs a value");
    expect_error("run --plugin-dir /nonexistent-dir", "plugin directory '/nonexistent-dir': no such directory");
}

TEST(RunModels, SideBySideListWithIgnoredOptions) {
    CliResult r = run_cli("run --model qrnn,lstm-halide,lstm-onednn,cnn --pooling ifo --layers 1 --interleave --verify" + kSmall);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char *want : {"lstm-halide", "lstm-onednn", "cnn", "ifo", "vs_first", "note: model 'lstm-onednn' ignores --pooling",
                             "note: model 'cnn' ignores --pooling"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
    EXPECT_EQ(r.output.find("FAIL"), std::string::npos) << r.output;
}

TEST(PluginsCommand, ListsKindsTargetsOptions) {
    CliResult r = run_cli("plugins");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    for (const char *want : {"kind", "targets", "status", "supports", "options", "description", "source", "gates=zfoi",
                             "passes=inference+training bidirectional+variable-length", "passes=inference+training dense",
                             "passes=inference+training encoder-decoder+attention+variable-length",
                             "passes=inference+training encoder-decoder+variable-length", "passes=inference ",
                             "tile_h_vectors=", "window,layers", "lstm-onednn", "cnn-maxpool", "built-in"})
        EXPECT_NE(r.output.find(want), std::string::npos) << want << "\n" << r.output;
    expect_error("plugins --kind nonsense", "unknown plugin kind 'nonsense' (known: pooling, model, schedule, classifier)");
}

TEST(RunModels, UnknownModelListsKnown) {
    expect_error("run --model gru", "unknown model 'gru' (known: cnn, cnn-maxpool, encdec, encdec-noattn, lstm-cudnn, lstm-halide, lstm-onednn, qrnn, qrnn-bidir, qrnn-bidir-sum, qrnn-bidir-varlen, qrnn-dense, qrnn-varlen)");
}

TEST(RunModels, CudnnUnavailableMessage) {
    CliResult r = run_cli("plugins --kind model");
    if (r.output.find("unavailable: no CUDA device") == std::string::npos) GTEST_SKIP() << "a CUDA device is present";
    r = run_cli("run --model lstm-cudnn --verify" + kSmall);
    EXPECT_EQ(r.exit_code, 3) << r.output;  // nothing could run
    EXPECT_NE(r.output.find("skipped: model 'lstm-cudnn' unavailable: no CUDA device"), std::string::npos) << r.output;
    r = run_cli("run --model lstm-cudnn,cnn --verify" + kSmall);
    EXPECT_EQ(r.exit_code, 0) << r.output;  // skipped in a list, the others run
    EXPECT_NE(r.output.find("unavailable: no CUDA device"), std::string::npos) << r.output;
}

// Inference dumps are the QRNN's; a training pass dumps any trainable model (its gradients checked in numpy by
// tests/test_dump_grads_numpy.py and tests/test_dump_named_numpy.py).
TEST(RunModels, InferenceDumpOnlyForQrnnTrainingDumpForEveryTrainableModel) {
    const std::string shape = " --seq 2 --batch 1 --input 3 --hidden 4 --repeats 1";
    expect_error("run --model cnn --dump " + scratch_path("cnn.h5") + shape,
                 "--dump: model 'cnn' does not write HDF5 dumps of its inference pass (--pass training does)");
    for (const char *model : {"cnn", "qrnn-dense", "qrnn-bidir"}) {
        const std::string path = scratch_path(std::string(model) + "_training.h5");
        std::remove(path.c_str());
        CliResult r = run_cli("run --pass training --model " + std::string(model) + " --dump " + path + shape);
        EXPECT_EQ(r.exit_code, 0) << r.output;
        EXPECT_TRUE(std::ifstream(path).good()) << model;
    }
}

}  // namespace
}  // namespace qrnn::test
