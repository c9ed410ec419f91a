// Regressions of issue #13 (a hostile user's inputs), items 4, 5 and 7: HDF5 and other files (directories,
// a full disk, temporary files, Ctrl-C, dump attributes), plugins, tolerance, YAML documents. Each
// reproduces the reported failure through the CLI and checks the clear one-line error and exit code.
#include <gtest/gtest.h>
#include <H5Cpp.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>

#include "runtime/atomic_file.h"
#include "tests/support/cli.h"

namespace qrnn::test {
namespace {
namespace fs = std::filesystem;

const std::string kTiny = " --batch 2 --seq 4 --input 8 --hidden 8 --warmup 0 --repeats 1";

bool temp_files_left(const std::string &dir) {
    for (auto &e : fs::directory_iterator(dir))
        if (e.path().filename().string().find(".tmp-") != std::string::npos) return true;
    return false;
}

// 4: HDF5 errors that escaped as H5::Exception and aborted (rc 134).
TEST(Hardening, DirectoriesGivenAsHdf5FilesAreErrors) {
    std::string dir = scratch_path("a_directory");
    fs::create_directories(dir);
    std::string yaml = write_scratch("tiny.yaml", "name: t\nbase: {batch: 2, seq: 4, input: 8, hidden: 8, repeats: 1, warmup: 0}\n");
    expect_cli("sweep " + yaml + " -o " + dir, 2, dir + ": is a directory, not a results file");
    EXPECT_FALSE(fs::exists(dir + ".lock"));
    expect_cli("report " + dir, 2, dir + ": is a directory, not a sweep results file");
    expect_cli("merge " + dir + " -o " + scratch_path("m.h5"), 2, dir + ": is a directory, not a sweep results file");
    expect_cli("run --load " + dir + kTiny, 2, dir + ": is a directory, not a qrnn dump");
    std::string text = write_scratch("text.h5", "not hdf5\n");
    expect_cli("report " + text, 2, "not an HDF5 file");
}

// 5: a full disk. The dump is built in memory and written by us, so libhdf5 never sees the failing disk
// (before: the error, then SIGSEGV at exit in H5close). Needs root to mount a tiny tmpfs.
TEST(Hardening, FullDiskKeepsTheOldFileAndExitsCleanly) {
    std::string dir = scratch_path("tiny_fs");
    fs::create_directories(dir);
    if (::mount("tmpfs", dir.c_str(), "tmpfs", 0, "size=64k") != 0) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
    const std::string dump = dir + "/run.h5";
    std::ofstream(dump) << "old";
    CliResult r = run_cli("run --dump " + dump + " --batch 16 --seq 64 --input 64 --hidden 64 --warmup 0 --repeats 1");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find(dump + ": cannot write HDF5 dump: No space left on device"), std::string::npos) << r.output;
    std::ifstream in(dump);
    std::string old((std::istreambuf_iterator<char>(in)), {});
    EXPECT_EQ(old, "old");
    EXPECT_FALSE(temp_files_left(dir));
    // Results files take the same path.
    std::string yaml = write_scratch("big.yaml", "name: big\nbase: {batch: 2, seq: 4, input: 8, hidden: 8, repeats: 1, warmup: 0}\n"
                                              "description: '" + std::string(100000, 'x') + "'\n");
    r = run_cli("sweep " + yaml + " -o " + dir + "/results.h5");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("cannot write results: No space left on device"), std::string::npos) << r.output;
    EXPECT_FALSE(temp_files_left(dir));
    ::umount(dir.c_str());
}

// 7: the minor items.
TEST(Hardening, ToleranceMustBeFiniteAndPositive) {
    expect_cli("run --verify --tolerance -1" + kTiny, 2, "--tolerance must be a finite number > 0 (got -1)");
    expect_cli("run --verify --tolerance nan" + kTiny, 2, "--tolerance must be a finite number > 0 (got nan)");
    std::string yaml = write_scratch("tol.yaml", "name: t\nbase: {tolerance: -1}\n");
    expect_cli("sweep " + yaml + " --dry-run", 2, "key 'base.tolerance': must be a finite number > 0 (got -1)");
}

TEST(Hardening, DumpUsesAUniqueTemporaryFile) {
    std::string dump = scratch_path("notes.h5"), unrelated = dump + ".tmp";
    std::ofstream(unrelated) << "my notes";
    expect_cli("run --dump " + dump + kTiny, 0, "dump: wrote " + dump);
    EXPECT_TRUE(fs::exists(unrelated));
    EXPECT_FALSE(temp_files_left(fs::path(dump).parent_path().string()));
}

TEST(Hardening, DumpAfterAFailedVerifySaysSo) {
    expect_cli("run --verify --tolerance 1e-30 --dump " + scratch_path("failed.h5") + kTiny, 1,
               "(verify FAILED: its outputs are this run's, above the tolerance)");
}

TEST(Hardening, SecondYamlDocumentIsAnError) {
    std::string yaml = write_scratch("two.yaml", "name: one\n---\nname: two\n");
    expect_cli("sweep " + yaml + " --dry-run", 2, "two.yaml:2:1: a second YAML document");
}

TEST(Hardening, DumpAttributesAreChecked) {
    std::string dump = scratch_path("attrs.h5");
    expect_cli("run --dump " + dump + kTiny, 0, "dump: wrote");
    auto set_attr = [&](const std::string &name, const std::string &value) {
        H5::H5File f(dump, H5F_ACC_RDWR);
        f.removeAttr(name);
        H5::StrType type(H5::PredType::C_S1, value.size());
        f.createAttribute(name, type, H5::DataSpace(H5S_SCALAR)).write(type, value.c_str());
    };
    set_attr("gates", "zfoi");
    expect_cli("run --load " + dump + kTiny, 2, "attribute gates is 'zfoi', expected 'zfo' (the gate order of --pooling fo)");
    set_attr("format_version", "2");
    expect_cli("run --load " + dump + kTiny, 2, "attribute format_version is '2', expected '1'");
    set_attr("format", "something-else");
    expect_cli("run --load " + dump + kTiny, 2, "attribute format is 'something-else', expected 'qrnn-dump'");
}

TEST(Hardening, PluginThrowingANonStdExceptionIsAnError) {
    std::string so = (fs::path(QRNN_CLI).parent_path() / "plugins/test-fixtures/libqrnn_test_throwing.so").string();
    expect_cli("--plugin " + so + " plugins", 2, "its register function threw a non-standard exception");
}

// Ctrl-C during an atomic write leaves no temporary file (before: results.h5.tmp stayed).
TEST(Hardening, InterruptedWriteLeavesNoTemporaryFile) {
    std::string dir = scratch_path("interrupted");
    fs::create_directories(dir);
    const std::string path = dir + "/results.h5";
    pid_t child = fork();
    if (child == 0) {
        std::string bytes(16 << 20, 'x');
        for (;;) write_file_atomically(path, bytes, "test file");
    }
    ASSERT_GT(child, 0);
    for (int i = 0; i < 200 && !temp_files_left(dir); i++) usleep(5000);  // a write is under way
    kill(child, SIGINT);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
    EXPECT_FALSE(temp_files_left(dir));
}

}  // namespace
}  // namespace qrnn::test
