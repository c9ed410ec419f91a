#include "runtime/config.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "core/pooling.h"
#include "core/streams.h"

namespace qrnn {

static void require_positive(const char *name, int64_t v) {
    if (v < 1) fail("--", name, " must be >= 1 (got ", v, ")");
}

void ModelConfig::validate() const {
    require_positive("window", window);
    require_positive("batch", batch);
    require_positive("seq", seq);
    require_positive("input", input);
    require_positive("hidden", hidden);
    require_positive("layers", layers);
    if (layers > streams::kMaxStreamLayers) fail("--layers must be <= ", streams::kMaxStreamLayers, " (got ", layers, ")");
    if (!(zoneout >= 0.0 && zoneout < 1.0)) fail("--zoneout must be in [0, 1) (got ", zoneout, ")");
    if (!(dropout >= 0.0 && dropout < 1.0)) fail("--dropout must be in [0, 1) (got ", dropout, ")");
    if (pass != "inference" && pass != "training") fail("--pass must be inference or training (got '", pass, "')");
    if (precision != "f32" && precision != "bf16" && precision != "int8")
        fail("--precision must be f32, bf16 or int8 (got '", precision, "')");
    if (precision == "int8" && training_pass()) fail("--precision int8 is for inference (got --pass training)");
    const double elements = static_cast<double>(seq) * static_cast<double>(batch) * static_cast<double>(std::max(input, hidden));
    if (elements > 2e9) fail("shape too large: seq*batch*width = ", elements, " elements (limit 2e9)");
}

const PoolingVariant &ModelSpec::pooling_variant() const { return find_pooling(pooling); }

std::string ModelConfig::describe() const {
    std::ostringstream os;
    os << model << " pooling=" << pooling << " k=" << window << " B=" << batch << " T=" << seq << " n=" << input
       << " m=" << hidden << " L=" << layers << " schedule=" << schedule << " mode=" << (stochastic ? "train" : "eval");
    if (stochastic) os << " zoneout=" << zoneout << " dropout=" << dropout;
    if (training_pass()) os << " pass=training";
    if (precision != "f32") os << " precision=" << precision;
    os << " seed=" << seed;
    return os.str();
}

}  // namespace qrnn
