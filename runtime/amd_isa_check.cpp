#include "runtime/amd_isa_check.h"

#include <regex>
#include <sstream>

#include "runtime/run_program.h"

namespace qrnn {
namespace {
bool avx512_fp16(const std::string &op) {
    if (op == "vmovw") return true;
    if (op == "vcvtph2ps" || op == "vcvtps2ph") return false;  // F16C
    static const std::regex half("v[a-z0-9]*(ph|sh)x?|vcvt(ph|sh)2[a-z0-9]*");
    return std::regex_match(op, half);
}
}  // namespace

std::vector<std::string> instructions_amd_lacks(const std::string &assembly) {
    std::istringstream lines(assembly);
    std::vector<std::string> found;
    for (std::string line; std::getline(lines, line);) {
        std::istringstream words(line);
        std::string op;
        words >> op;
        if (!op.empty() && op.back() == ':') {  // objdump's "address:" (a label alone leaves op empty)
            op.clear();
            words >> op;
        }
        if (op == "{vex}") {  // AVX-VNNI: the VEX encoding of vpdpbusd and its kin
            words >> op;
            found.push_back("{vex} " + op);
        } else if (avx512_fp16(op)) {
            found.push_back(op);
        }
    }
    return found;
}

std::string first_instruction_amd_lacks(const std::string &object_file) {
    const ProgramResult r = run_program({"objdump", "-d", "--no-show-raw-insn", object_file}, false);
    if (!r.started || r.exit_code != 0) return "";
    const std::vector<std::string> found = instructions_amd_lacks(r.output);
    return found.empty() ? "" : found.front();
}

}  // namespace qrnn
