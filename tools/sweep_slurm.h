// `qrnn sweep FILE.yaml -o results.h5 --slurm`: the options of a sweep as a Slurm job array, turned into a
// submission (sweep/slurm_submit.h).
#pragma once
#include <boost/program_options.hpp>
#include <string>
#include <vector>

#include "sweep/sweep_spec.h"

namespace qrnn::cli {

boost::program_options::options_description slurm_sweep_options();
bool wants_slurm(const boost::program_options::variables_map &vm);  // --slurm or --slurm-dry-run
int submit_sweep_to_slurm(const sweep::Sweep &sweep, const boost::program_options::variables_map &vm);

}  // namespace qrnn::cli
