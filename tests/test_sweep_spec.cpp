// Sweep files: expansion (grid, zip, exclude, replicates), stable run ids, and one-line validation errors
// naming file, line and key, from the library and from `qrnn sweep --dry-run`.
#include <gtest/gtest.h>

#include <fstream>

#include "core/error.h"
#include "sweep/sweep_spec.h"
#include "tests/support/cli.h"

using namespace qrnn;
using namespace qrnn::sweep;

namespace {

std::string error_of(const std::string &yaml, const LoadOptions &opts = {}) {
    try {
        parse_sweep(yaml, "s.yaml", opts);
    } catch (const Error &e) {
        return e.what();
    }
    return "(no error)";
}

std::string write_file(const std::string &name, const std::string &text) {
    std::string path = test::scratch_path(name);
    std::ofstream(path) << text;
    return path;
}

TEST(SweepSpec, GridIsCartesianProductFirstKeyOutermost) {
    Sweep s = parse_sweep("name: g\nbase: {seq: 4, input: 8, hidden: 8}\ngrid:\n  pooling: [f, fo]\n  batch: [1, 2, 3]\n", "g.yaml");
    ASSERT_EQ(s.runs.size(), 6u);
    EXPECT_EQ(s.runs[0].spec.config.pooling, "f");
    EXPECT_EQ(s.runs[2].spec.config.batch, 3);
    EXPECT_EQ(s.runs[3].spec.config.pooling, "fo");
    EXPECT_EQ(s.runs[3].spec.config.batch, 1);
    EXPECT_EQ(s.runs[5].index, 5);
    EXPECT_EQ(s.runs[4].spec.config.seq, 4);  // from base
    EXPECT_EQ(s.varied_keys, (std::vector<std::string>{"pooling", "batch"}));
}

TEST(SweepSpec, ZipVariesTogetherExcludeSkipsReplicatesReseed) {
    Sweep s = parse_sweep(
        "name: z\nrepeats: 2\nseed: 10\n"
        "grid:\n  pooling: [f, fo]\n"
        "zip:\n  batch: [1, 2, 4]\n  seq: [8, 16, 32]\n"
        "exclude:\n  - {pooling: fo, batch: [2, 4]}\n",
        "z.yaml");
    // 2 poolings x 3 zipped pairs = 6, minus fo x {2, 4} = 4 combinations, x 2 replicates.
    ASSERT_EQ(s.runs.size(), 8u);
    for (auto &r : s.runs) {
        EXPECT_EQ(r.spec.config.seq, r.spec.config.batch * 8);
        EXPECT_FALSE(r.spec.config.pooling == "fo" && r.spec.config.batch > 1);
        EXPECT_EQ(r.spec.config.seed, 10u + r.spec.replicate);
    }
    EXPECT_EQ(s.runs[0].spec.replicate, 0);
    EXPECT_EQ(s.runs[1].spec.replicate, 1);
    EXPECT_NE(s.runs[0].id, s.runs[1].id);
}

TEST(SweepSpec, ZipAsListOfGroups) {
    Sweep s = parse_sweep("name: z\nzip:\n  - {batch: [1, 2], seq: [3, 4]}\n  - {input: [8, 16], hidden: [8, 16]}\n", "z.yaml");
    ASSERT_EQ(s.runs.size(), 4u);
    EXPECT_EQ(s.runs[3].spec.config.batch, 2);
    EXPECT_EQ(s.runs[3].spec.config.hidden, 16);
}

TEST(SweepSpec, RunIdsAreStableAndIgnoreKeyOrder) {
    Sweep a = parse_sweep("name: a\nbase: {batch: 2, seq: 3}\n", "a.yaml");
    Sweep b = parse_sweep("name: b\ndescription: other\nbase: {seq: 3, batch: 2}\n", "b.yaml");
    ASSERT_EQ(a.runs.size(), 1u);
    EXPECT_EQ(a.runs[0].id, b.runs[0].id);
    EXPECT_EQ(a.runs[0].id.size(), 16u);
    // Golden value: a change here silently breaks resuming into existing results files.
    EXPECT_EQ(canonical(a.runs[0].spec), "batch=2;seq=3;");  // fields at their defaults are left out
    EXPECT_EQ(a.runs[0].id, "9b48ac124042105d");
    Sweep d = parse_sweep("name: d\nrepeats: 2\nbase: {pooling: f, knob.tile_t: 4, verify: true}\n", "d.yaml");
    EXPECT_EQ(canonical(d.runs[1].spec), "knobs=tile_t=4;pooling=f;replicate=1;seed=2;verify=1;");
    EXPECT_EQ(canonical(parse_sweep("name: e\nbase: {batch: 16}\n", "e.yaml").runs[0].spec), "");
    Sweep c = parse_sweep("name: c\nbase: {batch: 2, seq: 3, repeats: 6}\n", "c.yaml");
    EXPECT_NE(a.runs[0].id, c.runs[0].id);  // measurement settings are part of the id
}

TEST(SweepSpec, ErrorsNameFileLineAndKey) {
    struct Case {
        std::string yaml, expect;
    };
    const Case cases[] = {
        {"name: x\nbase:\n  batchsize: 3\n", "s.yaml:3:3: key 'base.batchsize': unknown key"},
        {"name: x\nbase:\n  batch: three\n", "s.yaml:3:10: key 'base.batch': expected an integer, got 'three'"},
        {"name: x\nbase:\n  zoneout: [0.1]\n", "s.yaml:3:12: key 'base.zoneout': expected a number, got a list"},
        {"name: x\nbase:\n  verify: maybe\n", "s.yaml:3:11: key 'base.verify': expected true or false"},
        {"name: x\ngrid:\n  batch: []\n", "s.yaml:3:10: key 'grid.batch': empty list"},
        {"name: x\ngrid: {}\n", "s.yaml:2:7: key 'grid': empty grid"},
        {"name: x\ngrid:\n  batch: 4\n", "s.yaml:3:10: key 'grid.batch': expected a list of values"},
        {"name: x\nzip:\n  batch: [1, 2]\n  seq: [3]\n", "s.yaml:4:8: key 'zip.seq': zip lists differ in length"},
        {"name: x\ngrid:\n  batch: [1]\nzip:\n  batch: [2]\n", "s.yaml:5:3: key 'zip.batch': varied twice"},
        {"name: x\ngrid:\n  pooling: [fo, foo]\n", "s.yaml:3:17: key 'grid.pooling': unknown pooling 'foo'"},
        {"name: x\nbase:\n  schedule: fast\n", "s.yaml:3:13: key 'base.schedule': unknown schedule 'fast'"},
        {"name: x\nbase:\n  model: lstm-nope\n", "s.yaml:3:10: key 'base.model': unknown model 'lstm-nope'"},
        {"name: x\nbase:\n  mode: test\n", "s.yaml:3:9: key 'base.mode': must be eval or train"},
        {"name: x\nbase:\n  window: 0\n", "s.yaml:3:11: key 'base.window': must be >= 1 (got 0)"},
        {"name: x\nbase:\n  target: host-nonsense\n", "s.yaml:3:11: key 'base.target': invalid Halide target 'host-nonsense'"},
        {"name: x\ngrid:\n  target: [host, host-cuda]\n",
         "s.yaml:3:18: key 'target': run target=host-cuda: schedule 'tuned' is for cpu targets, not target 'host-cuda'"},
        {"name: x\nbase:\n  knob.nope: 3\n", "s.yaml:3:14: key 'knob.nope': base: schedule 'tuned' has no knob 'nope'"},
        {"name: x\nbase:\n  batch: 1\n  batch: 2\n", "s.yaml:4:3: key 'base.batch': duplicate key"},
        {"name: x\ngrids:\n  batch: [1]\n", "s.yaml:2:1: key 'grids': unknown key (known: name, description"},
        {"grid:\n  batch: [1]\n", "s.yaml:1:1: key 'name': missing"},
        {"name: x\nrepeats: 0\n", "s.yaml:2:10: key 'repeats': must be >= 1"},
        {"name: x\nseed: 3\nbase:\n  seed: 4\n", "s.yaml:2:7: key 'seed': given both at top level and in base"},
        {"name: x\ngrid:\n  batch: [1, 2]\nexclude:\n  - batch: 3\n", "s.yaml:5:5: key 'exclude': matches no run"},
        {"name: x\ngrid:\n  batch: [1, 1]\n", "s.yaml:3:14: run batch=1: listed twice"},
        {"name: x\ngrid:\n  batch: [1, 100000]\n  seq: [100000]\n", "s.yaml:3:14: key 'batch': run batch=100000 seq=100000: shape too large"},
        {"name: x\ngrid:\n  batch: [1, 2\n", "s.yaml:4:1: YAML syntax error"},
        {"- a\n- b\n", "s.yaml:1:1: a sweep file is a map"},
    };
    for (auto &c : cases) EXPECT_EQ(error_of(c.yaml).rfind(c.expect, 0), 0u) << c.yaml << "\n-> " << error_of(c.yaml);
}

TEST(SweepSpec, InterleaveGroupsRunsDifferingOnlyInItsKeys) {
    Sweep s = parse_sweep("name: i\nrepeats: 2\ngrid:\n  batch: [1, 2]\n  pooling: [f, fo]\ninterleave: [pooling]\n", "i.yaml");
    ASSERT_EQ(s.runs.size(), 8u);  // batch x pooling x replicate; pooling varies slower than replicate
    EXPECT_EQ(s.interleave, (std::vector<std::string>{"pooling"}));
    for (auto &r : s.runs) {
        const PlannedRun &first = s.runs[static_cast<size_t>(r.group)];
        EXPECT_EQ(first.spec.config.batch, r.spec.config.batch);
        EXPECT_EQ(first.spec.replicate, r.spec.replicate);  // each replicate is its own group
        EXPECT_EQ(first.spec.config.pooling, "f");
    }
    EXPECT_EQ(s.runs[2].group, 0);  // batch 1, fo, replicate 0 beside batch 1, f, replicate 0
    EXPECT_EQ(s.runs[3].group, 1);
    EXPECT_EQ(s.runs[4].group, 4);
    Sweep plain = parse_sweep("name: p\ngrid:\n  batch: [1, 2]\n", "p.yaml");
    EXPECT_EQ(plain.runs[1].group, 1);
    EXPECT_NE(error_of("name: x\ngrid:\n  batch: [1, 2]\ninterleave: model\n").find(
                  "s.yaml:4:13: key 'interleave': 'model' is not varied by grid or zip"),
              std::string::npos);
    EXPECT_NE(error_of("name: x\ngrid:\n  repeats: [1, 2]\ninterleave: [repeats]\n").find(
                  "s.yaml:4:14: key 'interleave': 'repeats' cannot be interleaved"),
              std::string::npos);
    EXPECT_NE(error_of("name: x\ngrid:\n  batch: [1, 2]\ninterleave: [batch, batch]\n").find("'batch' listed twice"),
              std::string::npos);
}

TEST(SweepSpec, SkipModelCheckAcceptsUnknownModelsOnly) {
    LoadOptions lenient;
    lenient.check_models = false;
    Sweep s = parse_sweep("name: x\ngrid:\n  model: [qrnn, lstm-later]\n", "s.yaml", lenient);
    EXPECT_EQ(s.runs.size(), 2u);
    EXPECT_NE(error_of("name: x\ngrid:\n  model: [qrnn, lstm-later]\n  pooling: [nope]\n", lenient).find("unknown pooling"),
              std::string::npos);
}

TEST(SweepSpec, ShippedExperimentsAreValid) {
    const std::string dir = std::string(QRNN_SOURCE_DIR) + "/experiments/";
    EXPECT_EQ(load_sweep(dir + "quick.yaml").runs.size(), 8u);
    LoadOptions lenient;  // names lstm-onednn, a baseline built on another branch
    lenient.check_models = false;
    Sweep paper = load_sweep(dir + "paper_speed_grid.yaml", lenient);
    EXPECT_EQ(paper.runs.size(), 2u * 6 * 5);
    EXPECT_EQ(paper.runs.front().spec.config.hidden, 320);
}

TEST(SweepCli, DryRunListsAndBadFilesExitWithOneLine) {
    std::string good = write_file("good.yaml", "name: good\nbase: {seq: 4, input: 8, hidden: 8}\ngrid:\n  batch: [1, 2, 3]\n");
    auto r = test::run_cli("sweep " + good + " --dry-run");
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_NE(r.output.find("3 runs in the sweep, 3 in this shard, 3 to run"), std::string::npos) << r.output;
    r = test::run_cli("sweep " + good + " --dry-run --shard 1/2");
    EXPECT_NE(r.output.find("3 runs in the sweep, 1 in this shard"), std::string::npos) << r.output;

    std::string bad = write_file("bad.yaml", "name: bad\ngrid:\n  batch: [1, 2]\n  pooling: [fo, nope]\n");
    r = test::run_cli("sweep " + bad + " --dry-run");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_EQ(r.output, "qrnn sweep: error: " + bad + ":4:17: key 'grid.pooling': unknown pooling 'nope' (known: f, fo, ifo)\n");
    r = test::run_cli("sweep " + bad + " -o " + test::scratch_path("never.h5"));
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_FALSE(std::ifstream(test::scratch_path("never.h5")).good());  // nothing ran, nothing written
    r = test::run_cli("sweep " + good + " --dry-run --shard 2/2");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.output.find("--shard: '2/2' needs 0 <= i < N"), std::string::npos);
    r = test::run_cli("sweep " + test::scratch_path("missing.yaml") + " --dry-run");
    EXPECT_NE(r.output.find("missing.yaml: cannot read sweep file"), std::string::npos);
}

}  // namespace
