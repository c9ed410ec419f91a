// Every CPU knob range is valid at its ends: runs at the range limits verify against the double reference
// on an awkward shape (B=3, T=37, m=19). The upper ends of `fused` and `chunked-scan` (measured: verified,
// 44 s and 27 s to compile on a loaded 2-core VM) are left out for time; `tuned`'s upper end is in.
#include <gtest/gtest.h>

#include "core/error.h"
#include "schedules/schedule.h"
#include "tests/support/cli.h"

namespace qrnn::test {
namespace {

const std::string kShape = " --batch 3 --seq 37 --input 5 --hidden 19 --warmup 0 --repeats 1 --verify";

// "--knob k=v" for every knob of the schedule at its range's min (or max).
std::string knobs_at(const std::string &schedule, bool max) {
    std::string args = "run --schedule " + schedule;
    for (auto &[knob, spec] : find_layer_schedule(schedule).knob_specs)
        args += " --knob " + knob + "=" + std::to_string(max ? spec.max : spec.min);
    return args + kShape;
}

void expect_verified(const std::string &args) {
    CliResult r = run_cli(args);
    EXPECT_EQ(r.exit_code, 0) << args << "\n" << r.output;
    EXPECT_NE(r.output.find("verify: all within"), std::string::npos) << args << "\n" << r.output;
}

TEST(KnobRanges, LowerEndsVerify) {
    for (const char *schedule : {"tuned", "fused", "chunked-scan"}) expect_verified(knobs_at(schedule, false));
}

TEST(KnobRanges, TunedUpperEndsVerify) { expect_verified(knobs_at("tuned", true)); }

TEST(KnobRanges, EveryKnobHasARangeHoldingItsDefaultAndChoices) {
    for (auto &name : layer_schedule_names()) {
        const LayerSchedule &s = find_layer_schedule(name);
        for (auto &[knob, value] : s.defaults) {
            const KnobSpec &spec = s.knob_specs.at(knob);
            EXPECT_LE(spec.min, value) << name << " " << knob;
            EXPECT_GE(spec.max, value) << name << " " << knob;
            EXPECT_NO_THROW(merge_knobs(s, {{knob, spec.max}}));
            EXPECT_THROW(merge_knobs(s, {{knob, spec.max + 1}}), Error) << name << " " << knob;
            EXPECT_THROW(merge_knobs(s, {{knob, spec.min - 1}}), Error) << name << " " << knob;
        }
    }
    LayerSchedule bad = find_layer_schedule("tuned");
    bad.name = "tuned-without-range";
    bad.knob_specs["chains"].max = 0;
    try {
        register_layer_schedule(bad);
        ADD_FAILURE() << "a knob without a range was accepted";
    } catch (const Error &e) {
        EXPECT_STREQ(e.what(), "layer schedule 'tuned-without-range': knob 'chains' needs a spec with a valid range [min, max]");
    }
}

}  // namespace
}  // namespace qrnn::test
