// `qrnn sweep FILE.yaml -o results.h5 --slurm`: the sweep as a Slurm job array (sweep/slurm.h), and the
// external commands (sbatch, squeue, sacct) that it and `qrnn sweep-status` run.
#pragma once
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace qrnn::cli {

boost::program_options::options_description slurm_sweep_options();
bool wants_slurm(const boost::program_options::variables_map &vm);  // --slurm or --slurm-dry-run
int submit_sweep_to_slurm(const sweep::Sweep &sweep, const boost::program_options::variables_map &vm);

struct ProgramResult {
    bool started = false;  // false: not found or not executable
    int exit_code = -1;
    std::string output;  // stdout (stderr too when `with_stderr`)
};
// Runs argv[0] (searched in PATH) with its arguments, no shell; waits and captures its output.
ProgramResult run_program(const std::vector<std::string> &argv, bool with_stderr = true);

}  // namespace qrnn::cli
