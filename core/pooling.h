// Pooling variants: the recurrence c_t = a_t * c_{t-1} + b_t and output h_t = out(gates_t, c_t), each given
// twice: as Halide Exprs (the algorithm) and in double (the reference), written independently.
#pragma once
#include <Halide.h>
#include <functional>
#include <string>
#include <vector>

namespace qrnn {

template <class E>
struct Recurrence {
    E a, b;  // c_t = a * c_{t-1} + b
};

struct PoolingVariant {
    std::string name;
    std::string description;
    std::string gates;  // gate letters in weight order; starts with "zf", letters from "zfoi"
    int flops_per_step = 0;  // multiply/add count of recurrence + output per element, for GFLOP/s
    std::function<Recurrence<Halide::Expr>(const std::vector<Halide::Expr> &gates)> halide_recurrence;
    std::function<Halide::Expr(const std::vector<Halide::Expr> &gates, Halide::Expr c)> halide_output;
    std::function<Recurrence<double>(const double *gates)> reference_recurrence;
    std::function<double(const double *gates, double c)> reference_output;

    int gate_count() const { return static_cast<int>(gates.size()); }
    int gate_index(char letter) const;  // -1 if the variant has no such gate
};

// Registry of pooling variants, keyed by name. register_pooling rejects duplicates and malformed variants.
void register_pooling(PoolingVariant variant);
const PoolingVariant &find_pooling(const std::string &name);  // throws qrnn::Error naming the known ones
std::vector<std::string> pooling_names();

}  // namespace qrnn
