// What a results file records about the machine and the build that produced it.
#pragma once
#include <string>

namespace qrnn {

struct MachineInfo {
    std::string host, cpu_model, halide_version, git_commit;
    std::string cpu_id, cpu_isa;  // vendor family/model/stepping; widest vector ISA (schedules/cpu_target.h)
    std::string host_target;      // the Halide JIT target of runs without a `target` key
    // Environment variables that change threading or kernels (OMP_*, GOMP_*, KMP_*, HL_*, DNNL_*, ONEDNN_*,
    // OPENBLAS_*, MKL_*, CUDA_VISIBLE_DEVICES), "NAME=value" separated by spaces; "" when none is set.
    std::string environment;
    int64_t cores = 0;
};

MachineInfo machine_info();  // git_commit: `git rev-parse HEAD` of the source tree (+"-dirty"), or "unknown"

}  // namespace qrnn
