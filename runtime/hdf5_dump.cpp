#include "runtime/hdf5_dump.h"

#include <H5Cpp.h>

#include <algorithm>

#include "core/error.h"
#include "core/pooling.h"
#include "runtime/atomic_file.h"
#include "runtime/h5io.h"

namespace qrnn {
namespace {

// Fixed-length string attributes: the dump's layout since format_version 1 (h5::write_attr's are variable-length).
template <class V>
void write_attr(H5::H5File &file, const std::string &name, const V &value) {
    H5::DataSpace scalar(H5S_SCALAR);
    if constexpr (std::is_same_v<V, std::string>) {
        H5::StrType type(H5::PredType::C_S1, std::max<size_t>(value.size(), 1));
        file.createAttribute(name, type, scalar).write(type, value.c_str());
    } else if constexpr (std::is_floating_point_v<V>) {
        double v = value;
        file.createAttribute(name, H5::PredType::NATIVE_DOUBLE, scalar).write(H5::PredType::NATIVE_DOUBLE, &v);
    } else {
        int64_t v = static_cast<int64_t>(value);
        file.createAttribute(name, H5::PredType::NATIVE_INT64, scalar).write(H5::PredType::NATIVE_INT64, &v);
    }
}

// Dataset `name`, which must have shape `want` (the error names the file, the dataset and both shapes).
Tensor<float> read_tensor(H5::H5File &file, const std::string &path, const std::string &name, const std::vector<int64_t> &want) {
    Tensor<float> t = h5::read_tensor(file, path, name);
    if (t.shape != want) fail(path, ": dataset ", name, " has shape ", t.shape_str(), ", expected ", Tensor<float>(want).shape_str());
    return t;
}

std::string layer_group(int64_t l) { return "/layer_" + std::to_string(l); }

constexpr const char *kDumpFormat = "qrnn-dump";
constexpr int64_t kDumpFormatVersion = 1;

// A root attribute as text (string or integer), or "" if absent or of another type.
std::string attr_text(H5::H5File &file, const std::string &name) {
    if (!file.attrExists(name)) return "";
    H5::Attribute a = file.openAttribute(name);
    if (a.getSpace().getSimpleExtentNpoints() != 1) return "";
    if (a.getTypeClass() == H5T_STRING) {
        H5::StrType type = a.getStrType();
        if (type.isVariableStr()) return "";
        std::string value(type.getSize(), '\0');
        a.read(type, value.data());
        return value.substr(0, value.find('\0'));
    }
    if (a.getTypeClass() == H5T_INTEGER) {
        int64_t v = 0;
        a.read(H5::PredType::NATIVE_INT64, &v);
        return std::to_string(v);
    }
    return "";
}

// format, format_version and gates (the gate order of the weights) must be what this qrnn writes for cfg.
void check_dump_attributes(H5::H5File &file, const std::string &path, const ModelConfig &cfg) {
    const std::pair<std::string, std::string> want[] = {{"format", kDumpFormat},
                                                        {"format_version", std::to_string(kDumpFormatVersion)},
                                                        {"gates", cfg.pooling_variant().gates}};
    for (auto &[name, value] : want) {
        std::string got = attr_text(file, name);
        if (got != value)
            fail(path, ": attribute ", name, " is ", got.empty() ? "missing or not a string/integer" : "'" + got + "'",
                 ", expected '", value, "'", name == "gates" ? " (the gate order of --pooling " + cfg.pooling + ")" : "");
    }
}

void write_config_attributes(H5::H5File &file, const ModelConfig &cfg) {
    write_attr(file, "format", std::string(kDumpFormat));
    write_attr(file, "format_version", kDumpFormatVersion);
    write_attr(file, "model", cfg.model);
    write_attr(file, "pooling", cfg.pooling);
    const std::vector<std::string> poolings = pooling_names();  // not for the baselines (pooling "-")
    if (std::count(poolings.begin(), poolings.end(), cfg.pooling)) write_attr(file, "gates", cfg.pooling_variant().gates);
    write_attr(file, "schedule", cfg.schedule);
    write_attr(file, "window", cfg.window);
    write_attr(file, "batch", cfg.batch);
    write_attr(file, "seq", cfg.seq);
    write_attr(file, "input", cfg.input);
    write_attr(file, "hidden", cfg.hidden);
    write_attr(file, "layers", cfg.layers);
    write_attr(file, "stochastic", cfg.stochastic ? 1 : 0);
    write_attr(file, "training", cfg.stochastic ? 1 : 0);  // the old name of "stochastic" (format_version 1)
    write_attr(file, "pass", cfg.pass);
    write_attr(file, "zoneout", cfg.zoneout);
    write_attr(file, "dropout", cfg.dropout);
    write_attr(file, "seed", cfg.seed);
}

}  // namespace

void write_named_dump(const std::string &path, const ModelConfig &cfg, const NamedDump &data) {
    write_hdf5_atomically(path, "HDF5 dump", [&](H5::H5File &file) {
        write_config_attributes(file, cfg);
        write_attr(file, "layout", std::string("named"));
        h5::write_tensor(file, "/input/x", *data.x);
        h5::write_tensor(file, "/input/dx", *data.dx);
        h5::write_tensor(file, "/output/h", *data.h);
        h5::write_tensor(file, "/output/dh", *data.dh);
        for (size_t l = 0; l < data.layers.size(); l++) {
            const std::string g = layer_group(static_cast<int64_t>(l));
            const NamedLayerDump &d = data.layers[l];
            for (auto &[name, t] : d.params) h5::write_tensor(file, g + "/" + name, *t);
            for (auto &[name, t] : d.grads) h5::write_tensor(file, g + "/grad/" + name, *t);
            for (auto &[name, t] : d.state) h5::write_tensor(file, g + "/state/" + name, *t);
            for (auto &[name, t] : d.state_grads) h5::write_tensor(file, g + "/grad/state/" + name, *t);
        }
    });
}

void write_dump(const std::string &path, const ModelConfig &cfg, const RunData &data) {
    write_hdf5_atomically(path, "HDF5 dump", [&](H5::H5File &file) {
        write_config_attributes(file, cfg);
        h5::write_tensor(file, "/input/x", data.x);
        for (int64_t l = 0; l < cfg.layers; l++) {
            h5::write_tensor(file, layer_group(l) + "/weights", data.params[l].weights);
            h5::write_tensor(file, layer_group(l) + "/bias", data.params[l].bias);
            h5::write_tensor(file, layer_group(l) + "/c0", data.state.layers[l].c);
            if (cfg.window > 1) h5::write_tensor(file, layer_group(l) + "/history", data.state.layers[l].history);
        }
        h5::write_tensor(file, "/output/h", data.h);
        h5::write_tensor(file, "/output/c_T", data.c_T);
        if (!data.grads.empty()) {
            h5::write_tensor(file, "/output/dh", data.dh);
            h5::write_tensor(file, "/input/dx", data.dx);
            for (int64_t l = 0; l < cfg.layers; l++) {
                const std::string g = layer_group(l) + "/grad";
                h5::write_tensor(file, g + "/weights", data.grads[l].weights);
                h5::write_tensor(file, g + "/bias", data.grads[l].bias);
                h5::write_tensor(file, g + "/c0", data.grads[l].c0);
                if (cfg.window > 1) h5::write_tensor(file, g + "/history", data.grads[l].history);
            }
        }
    });
}

RunData read_dump(const std::string &path, const ModelConfig &cfg) {
    H5::H5File file = open_hdf5_for_reading(path, "a qrnn dump");
    try {
        check_dump_attributes(file, path, cfg);
        RunData d;
        const int64_t G = cfg.pooling_variant().gate_count(), B = cfg.batch, m = cfg.hidden, k = cfg.window;
        d.x = read_tensor(file, path, "/input/x", {cfg.seq, B, cfg.input});
        d.state = initial_state<float>(cfg);
        for (int64_t l = 0; l < cfg.layers; l++) {
            const int64_t n = cfg.layer_input(l);
            const std::string g = layer_group(l);
            d.params.push_back({read_tensor(file, path, g + "/weights", {G, k, n, m}),
                                read_tensor(file, path, g + "/bias", {G, m})});
            d.state.layers[l].c = read_tensor(file, path, g + "/c0", {B, m});
            if (k > 1) d.state.layers[l].history = read_tensor(file, path, g + "/history", {k - 1, B, n});
        }
        return d;
    } catch (const H5::Exception &e) {
        fail(path, ": cannot read HDF5 dump: ", e.getDetailMsg());
    }
}

}  // namespace qrnn
