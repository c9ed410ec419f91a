// A sweep as a Slurm job array, without Slurm: the job script (generated, then run by bash as a task would
// be: shard file, resume, restart after SIGKILL, node-local scratch, unwritable output), array specs, the
// parsing of sbatch/squeue/sacct output and of the submission record, task verdicts, shard progress and
// seeding, and the CLI's --slurm-dry-run and errors. The real-Slurm test is tests/test_slurm.sh.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "sweep/slurm.h"
#include "tests/support/cli.h"

using namespace qrnn;
using namespace qrnn::sweep;
using namespace qrnn::sweep::slurm;
namespace fs = std::filesystem;

namespace {

std::string write_file(const std::string &path, const std::string &text) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path) << text;
    return path;
}

std::string read_file(const std::string &path) {
    std::ifstream in(path);
    return {std::istreambuf_iterator<char>(in), {}};
}

// 7 tiny runs (one pipeline): shard 1 of 3 holds runs 1 and 4.
const char *kTinySweep =
    "name: tiny\nbase: {seq: 3, input: 5, hidden: 7, warmup: 0, repeats: 1, verify: true}\n"
    "grid:\n  batch: [1, 2, 3, 4, 5, 6, 7]\n";

ScriptOptions tiny_script(const std::string &dir, const std::string &scratch = "") {
    ScriptOptions o;
    o.qrnn = QRNN_CLI;
    o.sweep_file = write_file(dir + "/tiny.yaml", kTinySweep);
    o.paths = array_paths(dir + "/out/res.h5");
    o.tasks = 3;
    o.job_name = "qrnn-tiny";
    o.sbatch_args = {"--time=0:10:00", "--partition=cpu"};
    o.scratch = scratch;
    return o;
}

// Runs the job script as Slurm would run array task `task` (bash, SLURM_ARRAY_TASK_ID set).
test::CliResult run_script(const std::string &script_path, int task, const std::string &env = "") {
    return test::run_shell("SLURM_ARRAY_TASK_ID=" + std::to_string(task) + " " + env + " bash " + script_path + " 2>&1");
}

std::string scratch_dir(const std::string &name) {
    std::string d = test::scratch_path(name);
    fs::create_directories(d);
    return d;
}

}  // namespace

TEST(SlurmScript, ArraySpecsRoundTrip) {
    EXPECT_EQ(array_spec({0, 1, 2, 5}), "0-2,5");
    EXPECT_EQ(array_spec({7, 3, 3, 4}), "3-4,7");
    EXPECT_EQ(array_spec({2}), "2");
    EXPECT_EQ(parse_array_spec("0-2,5"), (std::vector<int64_t>{0, 1, 2, 5}));
    EXPECT_EQ(parse_array_spec("0-3%2"), (std::vector<int64_t>{0, 1, 2, 3}));
    EXPECT_THROW(parse_array_spec("3-1"), Error);
    EXPECT_THROW(parse_array_spec("a"), Error);
    EXPECT_THROW(parse_array_spec(""), Error);
}

TEST(SlurmScript, ParsesSbatchOutput) {
    EXPECT_EQ(parse_sbatch_job_id("123\n"), "123");
    EXPECT_EQ(parse_sbatch_job_id("4567;cluster2\n"), "4567");
    EXPECT_EQ(parse_sbatch_job_id("Submitted batch job 89\n"), "89");
    EXPECT_THROW(parse_sbatch_job_id("sbatch: error: Batch job submission failed\n"), Error);
    EXPECT_THROW(parse_sbatch_job_id(""), Error);
}

TEST(SlurmScript, ParsesSqueue) {
    const std::string out =
        "17|0|RUNNING|0:05|node1\n"
        "17|[2-3]|PENDING|0:00|(Resources)\n"
        "17|1|CANCELLED|0:03|node1\n"
        "170|4|RUNNING|1:00|node2\n"  // another job
        "18|N/A|PENDING|0:00|(Dependency)\n"
        "garbage line\n";
    auto t = parse_squeue(out, "17");
    ASSERT_EQ(t.size(), 4u);
    EXPECT_EQ(t[0].state, "RUNNING");
    EXPECT_EQ(t[0].where, "node1");
    EXPECT_EQ(t[0].elapsed, "0:05");
    EXPECT_EQ(t[2].state, "PENDING");
    EXPECT_EQ(t[3].where, "(Resources)");
    EXPECT_EQ(t[1].state, "CANCELLED");
    EXPECT_TRUE(is_live(t[0].state));
    EXPECT_TRUE(is_live(t[2].state));
    EXPECT_FALSE(is_live(t[1].state));
    auto merge = parse_squeue(out, "18");
    ASSERT_EQ(merge.count(-1), 1u);
    EXPECT_EQ(merge[-1].state, "PENDING");
    EXPECT_TRUE(parse_squeue("", "17").empty());
}

TEST(SlurmScript, ParsesSacct) {
    const std::string out =
        "17_0|COMPLETED|0:0|00:00:09\n"
        "17_0.batch|COMPLETED|0:0|00:00:09\n"
        "17_1|CANCELLED by 0|0:15|00:00:04\n"
        "17_2|FAILED|2:0|00:00:01\n"
        "17_[3-4]|PENDING|0:0|00:00:00\n"
        "18|COMPLETED|0:0|00:00:02\n";
    auto t = parse_sacct(out, "17");
    ASSERT_EQ(t.size(), 5u);
    EXPECT_EQ(t[0].state, "COMPLETED");
    EXPECT_EQ(t[1].state, "CANCELLED");
    EXPECT_EQ(t[1].exit_code, "0:15");
    EXPECT_EQ(t[2].state, "FAILED");
    EXPECT_EQ(t[4].state, "PENDING");
    EXPECT_EQ(parse_sacct(out, "18")[-1].state, "COMPLETED");
}

TEST(SlurmScript, SubmissionRecordRoundTrips) {
    const std::string jobs = test::scratch_path("jobs");
    EXPECT_TRUE(read_submissions(jobs).empty());
    append_submission(jobs, {"array", "17", {0, 1, 2, 3}, 4, "/data/s.yaml", "", "2026-01-01T00:00:00Z"});
    append_submission(jobs, {"array", "21", {2}, 4, "/data/s.yaml", "", "2026-01-01T01:00:00Z"});
    append_submission(jobs, {"merge", "22", {}, 0, "", "21", "2026-01-01T01:00:01Z"});
    auto s = read_submissions(jobs);
    ASSERT_EQ(s.size(), 3u);
    EXPECT_EQ(s[0].tasks, (std::vector<int64_t>{0, 1, 2, 3}));
    EXPECT_EQ(s[1].job_id, "21");
    EXPECT_EQ(s[1].tasks, (std::vector<int64_t>{2}));
    EXPECT_EQ(s[1].of, 4);
    EXPECT_EQ(s[1].sweep_file, "/data/s.yaml");
    EXPECT_EQ(s[2].kind, "merge");
    EXPECT_EQ(s[2].after, "21");
    write_file(jobs, "kind=array\tjob=1\ttasks=0\tof=2\nnonsense\n");
    try {
        read_submissions(jobs);
        FAIL() << "a malformed line was accepted";
    } catch (const Error &e) {
        EXPECT_NE(std::string(e.what()).find(jobs + ":2:"), std::string::npos) << e.what();
    }
}

TEST(SlurmScript, TaskVerdicts) {
    ShardProgress done{3, 3, 0, {{"ok", 3}}}, left{3, 1, 2, {{"ok", 1}, {"running", 1}}}, empty{3, 0, 3, {}};
    TaskRecord none, started{true, false, 0, "17_0"}, exited2{true, true, 2, "17_0"}, exited0{true, true, 0, "17_0"};
    TaskState running{"RUNNING", "node1", "0:05", ""}, pending{"PENDING", "(Priority)", "0:00", ""};
    TaskState cancelled{"CANCELLED", "", "0:04", "0:15"}, failed{"FAILED", "", "0:01", "2:0"};
    EXPECT_EQ(task_verdict(&running, started, left), TaskVerdict::Running);
    EXPECT_EQ(task_verdict(&pending, none, empty), TaskVerdict::Pending);
    EXPECT_EQ(task_verdict(nullptr, exited0, done), TaskVerdict::Done);
    EXPECT_EQ(task_verdict(&cancelled, started, done), TaskVerdict::Done);  // cancelled after its last run
    EXPECT_EQ(task_verdict(&cancelled, started, left), TaskVerdict::Interrupted);
    EXPECT_EQ(task_verdict(nullptr, started, left), TaskVerdict::Interrupted);  // no squeue/sacct: own record
    EXPECT_EQ(task_verdict(nullptr, exited2, empty), TaskVerdict::Failed);
    EXPECT_EQ(task_verdict(&failed, none, empty), TaskVerdict::Failed);
    EXPECT_EQ(task_verdict(nullptr, none, empty), TaskVerdict::NotSubmitted);

    const std::string state = test::scratch_path("3.state");
    EXPECT_FALSE(read_task_record(state).started);
    write_file(state, "started 17_3 node1 2026-01-01T00:00:00Z\nexit 137 2026-01-01T00:00:09Z\n"
                      "started 21_3 node2 2026-01-01T01:00:00Z\n");
    TaskRecord r = read_task_record(state);
    EXPECT_TRUE(r.started);
    EXPECT_FALSE(r.exited);  // the latest start has no exit yet
    EXPECT_EQ(r.job, "21_3");
}

TEST(SlurmScript, ScriptIsReadableAndNamesEverything) {
    const ScriptOptions o = tiny_script(scratch_dir("readable"));
    const std::string s = sbatch_script(o);
    EXPECT_EQ(s.rfind("#!/bin/bash\n", 0), 0u);
    for (const std::string &line : std::vector<std::string>{"#SBATCH --array=0-2\n", "#SBATCH --job-name=qrnn-tiny\n", "#SBATCH --time=0:10:00\n",
          "#SBATCH --partition=cpu\n", "#SBATCH --output=" + o.paths.logs() + "/task-%a-job-%A.out\n",
          "TASKS=3\n", "QRNN=" + std::string(QRNN_CLI) + "\n"})
        EXPECT_NE(s.find(line), std::string::npos) << "missing: " << line << "\n" << s;
    // Every #SBATCH line comes before the first command (sbatch stops reading them there).
    EXPECT_LT(s.rfind("#SBATCH"), s.find("\nset -u"));
    EXPECT_EQ(shell_quote("/plain/path-1.h5"), "/plain/path-1.h5");
    EXPECT_EQ(shell_quote("it's here"), "'it'\\''s here'");
    EXPECT_EQ(shell_quote(""), "''");
}

TEST(SlurmScript, TaskWritesItsShardResumesAndRestartsAfterSigkill) {
    const std::string dir = scratch_dir("task");
    ScriptOptions o = tiny_script(dir);
    const std::string script = write_file(dir + "/job.sbatch", sbatch_script(o));
    auto r = run_script(script, 1, "SLURM_ARRAY_JOB_ID=17");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string shard = o.paths.shard(1, 3);
    ASSERT_EQ(shard, dir + "/out/res.part-1-of-3.h5");
    ResultTable t = read_results(shard);
    ASSERT_EQ(t.rows(), 2u);  // runs 1 and 4 of 7
    EXPECT_EQ(t.num(0, "index"), 1);
    EXPECT_EQ(t.num(1, "index"), 4);
    EXPECT_EQ(read_task_record(o.paths.task_state(1)).job, "17_1");
    EXPECT_TRUE(read_task_record(o.paths.task_state(1)).exited);

    const Sweep sw = load_sweep(o.sweep_file);
    ShardProgress p = shard_progress(sw, {1, 3}, shard);
    EXPECT_EQ(p.runs, 2);
    EXPECT_EQ(p.done, 2);
    EXPECT_FALSE(has_work(p));
    p = shard_progress(sw, {0, 3}, o.paths.shard(0, 3));  // not started
    EXPECT_EQ(p.runs, 3);
    EXPECT_EQ(p.to_run, 3);
    EXPECT_EQ(shard_counts_on_disk(o.paths), (std::vector<int64_t>{3}));

    r = run_script(script, 1);  // again: nothing left
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("ran 0, 2 already done"), std::string::npos) << r.output;

    // A qrnn killed by a signal is started again by its task: a fake qrnn that dies by SIGKILL once.
    const std::string fake = write_file(dir + "/fake_qrnn", "#!/bin/bash\nif [ ! -f " + dir +
                                                               "/killed_once ]; then touch " + dir +
                                                               "/killed_once; kill -9 $$; fi\nexec " + QRNN_CLI + " \"$@\"\n");
    fs::permissions(fake, fs::perms::owner_exec, fs::perm_options::add);
    o.qrnn = fake;
    const std::string restarting = write_file(dir + "/restart.sbatch", sbatch_script(o));
    r = run_script(restarting, 2);
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("killed by signal 9; starting it again"), std::string::npos) << r.output;
    EXPECT_EQ(read_results(o.paths.shard(2, 3)).rows(), 2u);
}

TEST(SlurmScript, NodeLocalScratchEndsInTheOutputDirectory) {
    const std::string dir = scratch_dir("scratch");
    const ScriptOptions o = tiny_script(dir, "$NODE_TMP/local");  // expanded on the node
    const std::string script = write_file(dir + "/job.sbatch", sbatch_script(o));
    auto r = run_script(script, 0, "SLURM_JOB_ID=99 NODE_TMP=" + dir + "/node");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(read_results(o.paths.shard(0, 3)).rows(), 3u);
    EXPECT_TRUE(fs::is_directory(dir + "/node/local")) << "scratch not used";
    EXPECT_FALSE(fs::exists(dir + "/node/local/qrnn-99")) << "scratch left behind";
}

TEST(SlurmScript, UnwritableOutputDirectoryIsAClearError) {
    const std::string dir = scratch_dir("unwritable");
    ScriptOptions o = tiny_script(dir);
    write_file(dir + "/not_a_dir", "a file where the output directory should be\n");
    o.paths = array_paths(dir + "/not_a_dir/res.h5");
    const std::string script = write_file(dir + "/job.sbatch", sbatch_script(o));
    auto r = run_script(script, 0);
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("error: output directory " + dir + "/not_a_dir is not writable from"), std::string::npos)
        << r.output;
    auto cli = test::run_cli("sweep " + o.sweep_file + " -o " + dir + "/not_a_dir/res.h5 --slurm");
    EXPECT_EQ(cli.exit_code, 2) << cli.output;
    EXPECT_NE(cli.output.find("output directory " + dir + "/not_a_dir is not writable"), std::string::npos) << cli.output;
}

TEST(SlurmScript, SeedShardTakesTheOutputsRunsOfThatShard) {
    const std::string dir = scratch_dir("seed");
    const std::string yaml = write_file(dir + "/tiny.yaml", kTinySweep);
    auto r = test::run_cli("sweep " + yaml + " --shard 0/2 -o " + dir + "/all.h5");  // runs 0, 2, 4, 6
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const Sweep sw = load_sweep(yaml);
    EXPECT_EQ(seed_shard(sw, {0, 3}, dir + "/all.h5", dir + "/p0.h5"), 2);  // runs 0 and 6
    EXPECT_EQ(seed_shard(sw, {1, 3}, dir + "/all.h5", dir + "/p1.h5"), 1);  // run 4
    EXPECT_EQ(seed_shard(sw, {1, 3}, dir + "/all.h5", dir + "/p1.h5"), 0);  // exists: left alone
    EXPECT_EQ(seed_shard(sw, {2, 3}, dir + "/none.h5", dir + "/p2.h5"), 0);
    EXPECT_FALSE(fs::exists(dir + "/p2.h5"));
    ShardProgress p = shard_progress(sw, {0, 3}, dir + "/p0.h5");
    EXPECT_EQ(p.done, 2);
    EXPECT_EQ(p.to_run, 1);
}

TEST(SlurmScript, CliDryRunPrintsTheScriptAndWritesNothing) {
    const std::string dir = scratch_dir("dry");
    const std::string yaml = write_file(dir + "/tiny.yaml", kTinySweep);
    auto r = test::run_cli("sweep " + yaml + " -o " + dir + "/out/res.h5 --slurm-dry-run --tasks 2 "
                           "--sbatch-arg=--time=1:00:00 --sbatch-arg=--mem=1G --scratch /tmp");
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("#SBATCH --array=0-1\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("#SBATCH --mem=1G\n"), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("SCRATCH=\"/tmp\""), std::string::npos) << r.output;
    EXPECT_NE(r.output.find("sbatch --parsable --array=0-1 " + dir + "/out/res.slurm/sweep.sbatch"), std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(dir + "/out")) << "a dry run wrote files";

    r = test::run_cli("sweep " + yaml + " -o " + dir + "/out/res.h5 --slurm-dry-run --sbatch-arg=time=1");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--sbatch-arg 'time=1': not an sbatch option"), std::string::npos) << r.output;
    r = test::run_cli("sweep " + yaml + " -o " + dir + "/out/res.h5 --slurm-dry-run --shard 1/2");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--shard and --slurm"), std::string::npos) << r.output;

    // Shards of another task count exist: --tasks must match them (or be left out).
    write_file(dir + "/out/res.part-0-of-4.h5", "");
    r = test::run_cli("sweep " + yaml + " -o " + dir + "/out/res.h5 --slurm-dry-run --tasks 2");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("--tasks 2: res.part-*-of-4.h5 exist"), std::string::npos) << r.output;

    r = test::run_cli("sweep-status " + dir + "/out/res.h5");
    EXPECT_EQ(r.exit_code, 2) << r.output;
    EXPECT_NE(r.output.find("no Slurm submission recorded for " + dir + "/out/res.h5"), std::string::npos) << r.output;
}

// A run that kills its process every time (a model plugin that raises SIGKILL at batch 2): the task starts
// qrnn again, the run is retried once, then recorded as crashed, and the task goes on with the next runs.
// The plugin given to `qrnn sweep --slurm` (--plugin-dir) is passed to the task's qrnn.
TEST(SlurmScript, ARunKillingItsProcessTwiceIsRecordedCrashedAndTheTaskGoesOn) {
    const std::string dir = scratch_dir("crash");
    const std::string source = write_file(dir + "/crash.cpp", R"src(
#include <csignal>
#include "plugins/model.h"
#include "plugins/plugin_api.h"
namespace {
void register_crash() {
    qrnn::ModelPlugin model = qrnn::find_model("qrnn");
    model.name = "qrnn-crash-at-batch-2";
    model.description = "qrnn, but the process dies (SIGKILL) when built with batch 2 (test fixture)";
    model.build = [build = model.build](const qrnn::ModelConfig &cfg, const qrnn::RunOptions &opts) {
        if (cfg.batch == 2) std::raise(SIGKILL);
        qrnn::ModelConfig as_qrnn = cfg;
        as_qrnn.model = "qrnn";
        return build(as_qrnn, opts);
    };
    qrnn::register_model(model);
}
}  // namespace
QRNN_PLUGIN("a model whose process dies at batch 2 (test fixture)", register_crash)
)src");
    fs::create_directories(dir + "/plugins");
    const std::string compile = (fs::path(QRNN_CLI).parent_path() / "plugins" / "build_plugin.sh").string() + " " +
                                source + " " + dir + "/plugins/libcrash.so 2>&1";
    ASSERT_EQ(std::system(compile.c_str()), 0) << compile;
    const std::string yaml = write_file(dir + "/crash.yaml",
                                        "name: crashy\nbase: {model: qrnn-crash-at-batch-2, seq: 3, input: 5, hidden: 7, "
                                        "warmup: 0, repeats: 1}\ngrid:\n  batch: [1, 2, 3]\n");
    auto dry = test::run_shell(std::string(QRNN_CLI) + " sweep " + yaml + " -o " + dir +
                               "/out/r.h5 --slurm-dry-run --tasks 1 --plugin-dir " + dir + "/plugins");  // the script
    ASSERT_EQ(dry.exit_code, 0) << dry.output;
    EXPECT_NE(dry.output.find("--plugin " + dir + "/plugins/libcrash.so"), std::string::npos) << dry.output;
    const std::string script = write_file(dir + "/job.sbatch", dry.output);
    auto r = run_script(script, 0);
    EXPECT_EQ(r.exit_code, 1) << r.output;  // a crashed run: exit 1, as for failed runs
    EXPECT_NE(r.output.find("run #1 batch=2: crashed (the sweep process ended during this run 2 times"), std::string::npos)
        << r.output;
    ResultTable t = read_results(dir + "/out/r.part-0-of-1.h5");
    ASSERT_EQ(t.rows(), 3u);
    for (size_t i = 0; i < t.rows(); i++) {
        const bool batch2 = t.num(i, "batch") == 2;
        EXPECT_EQ(t.str(i, "status"), batch2 ? "crashed" : "ok") << "batch " << t.num(i, "batch");
        EXPECT_EQ(t.num(i, "attempts"), batch2 ? 2 : 1);
    }
}
