#include "tests/support/verified_run.h"

#include <gtest/gtest.h>

#include "harness/experiment.h"

namespace qrnn::test {

double verified_error(const ModelConfig &cfg) {
    RunOptions opts;
    opts.warmup = 0, opts.repeats = 1, opts.verify = true;
    RunReport r = run_experiment(cfg, opts);
    EXPECT_TRUE(r.error && r.error->finite) << cfg.describe();
    return r.error ? r.error->rel() : 1.0;
}

}  // namespace qrnn::test
