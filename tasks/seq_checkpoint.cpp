#include "tasks/seq_checkpoint.h"

#include <cmath>

#include "core/error.h"
#include "lm/convention.h"
#include "runtime/h5io.h"
#include "lm/run_files.h"
#include "runtime/atomic_file.h"

namespace qrnn::lm {
namespace {

constexpr const char *kSeqCheckpointFormat = "qrnn-seq-checkpoint";
constexpr const char *kSeqCheckpointWhat = "sequence-task checkpoint";

const std::vector<std::pair<const char *, double SeqCheckpoint::*>> &progress_values() {
    static const std::vector<std::pair<const char *, double SeqCheckpoint::*>> values{
        {"seconds", &SeqCheckpoint::seconds}, {"best", &SeqCheckpoint::best}, {"epoch_loss", &SeqCheckpoint::epoch_loss}};
    return values;
}
const std::vector<std::pair<const char *, int64_t SeqCheckpoint::*>> &progress_counts() {
    static const std::vector<std::pair<const char *, int64_t SeqCheckpoint::*>> counts{
        {"epoch", &SeqCheckpoint::epoch}, {"step", &SeqCheckpoint::step}, {"epoch_steps", &SeqCheckpoint::epoch_steps}};
    return counts;
}

// An Adam moment as a tensor of its parameter's shape.
Tensor<float> moment_tensor(const std::vector<float> &moment, const nn::Param &p) {
    Tensor<float> t(p.value->shape);
    if (moment.size() != t.data.size()) fail("Adam moment of '", p.name, "' has ", moment.size(), " values, the parameter ", t.data.size());
    t.data.assign(moment.begin(), moment.end());
    return t;
}

void check_seq_progress(const std::string &path, const SeqCheckpoint &cp) {
    for (auto &[name, member] : progress_counts())
        if (cp.*member < 0) fail(path, ": /progress ", name, " ", cp.*member, ": must be >= 0");
    if (cp.epoch_steps > cp.step) fail(path, ": /progress epoch_steps ", cp.epoch_steps, " is above step ", cp.step);
    if (static_cast<int64_t>(cp.history.size()) != cp.epoch)
        fail(path, ": /history holds ", cp.history.size(), " epochs, /progress epoch is ", cp.epoch);
    for (auto &[name, member] : progress_values())
        if (!std::isfinite(cp.*member)) fail(path, ": /progress ", name, " ", cp.*member, ": not finite");
}

void write_int8_layers(H5::H5File &file, const SeqCheckpoint &cp) {
    if (cp.int8.empty()) return;
    H5::Group group = file.createGroup("/int8");
    h5::write_attr(group, "calibration", cp.int8_calibration);
    for (size_t l = 0; l < cp.int8.size(); l++) {
        const Int8LayerParams &q = cp.int8[l];
        const std::string at = "/int8/layer_" + std::to_string(l);
        H5::Group layer = file.createGroup(at);
        std::vector<hsize_t> dims(q.weights.shape.begin(), q.weights.shape.end());
        H5::DataSet weights = file.createDataSet(at + "/weights", H5::PredType::NATIVE_INT8,
                                                 H5::DataSpace(static_cast<int>(dims.size()), dims.data()));
        weights.write(q.weights.data.data(), H5::PredType::NATIVE_INT8);
        h5::write_checked_tensor(file, at + "/weight_scales", q.weight_scales);
        h5::write_attr(layer, "input_scale", static_cast<double>(q.input_scale));
    }
}

Tensor<int8_t> read_int8_tensor(H5::H5File &file, const std::string &path) {
    H5::DataSet set = file.openDataSet(path);
    H5::DataSpace space = set.getSpace();
    std::vector<hsize_t> dims(static_cast<size_t>(space.getSimpleExtentNdims()));
    space.getSimpleExtentDims(dims.data());
    Tensor<int8_t> t(std::vector<int64_t>(dims.begin(), dims.end()));
    set.read(t.data.data(), H5::PredType::NATIVE_INT8);
    return t;
}

void read_int8_layers(H5::H5File &file, const std::string &path, SeqCheckpoint &cp) {
    if (!file.nameExists("/int8")) return;
    H5::Group group = file.openGroup("/int8");
    cp.int8_calibration = h5::read_string(group, path, "calibration");
    const bool checksummed = h5::is_checksummed(file);
    for (size_t l = 0; file.nameExists("/int8/layer_" + std::to_string(l)); l++) {
        const std::string at = "/int8/layer_" + std::to_string(l);
        H5::Group layer = file.openGroup(at);
        Tensor<int8_t> weights = read_int8_tensor(file, at + "/weights");
        if (weights.shape.size() != 4) fail(path, ": dataset ", at, "/weights has shape ", weights.shape_str(), ", not [G][k][n][m]");
        Tensor<float> scales({weights.dim(0), weights.dim(3)});
        h5::read_checked_tensor_into(file, path, at + "/weight_scales", scales, checksummed);
        const double input_scale = h5::read_double(layer, path, "input_scale");
        if (!(input_scale > 0) || !std::isfinite(input_scale)) fail(path, ": ", at, " attribute input_scale ", input_scale, ": must be > 0");
        cp.int8.push_back(int8_layer_from(std::move(weights), std::move(scales), static_cast<float>(input_scale)));
    }
}

}  // namespace

void write_seq_checkpoint(const std::string &path, const SeqCheckpoint &cp, const std::vector<nn::Param> &params) {
    write_hdf5_atomically(path, kSeqCheckpointWhat, [&](H5::H5File &file) {
        write_checkpoint_header(file, kSeqCheckpointFormat, cp.identity, cp.config);
        for (auto &p : params) h5::write_checked_tensor(file, "/params/" + p.name, *p.value);
        H5::Group adam = file.createGroup("/adam");
        h5::write_attr(adam, "t", cp.adam.t);
        for (size_t i = 0; i < cp.adam.m.size(); i++) {
            h5::write_checked_tensor(file, "/adam/m/" + params.at(i).name, moment_tensor(cp.adam.m[i], params[i]));
            h5::write_checked_tensor(file, "/adam/v/" + params.at(i).name, moment_tensor(cp.adam.v[i], params[i]));
        }
        H5::Group prog = file.createGroup("/progress");
        for (auto &[name, member] : progress_counts()) h5::write_attr(prog, name, cp.*member);
        for (auto &[name, member] : progress_values()) h5::write_attr(prog, name, cp.*member);
        write_epochs(file, "/history", cp.history, seq_epoch_fields());
        write_int8_layers(file, cp);
    });
}

SeqCheckpoint read_seq_checkpoint(const std::string &path, const std::string &identity, const std::vector<nn::Param> &params) {
    H5::H5File file = open_hdf5_for_reading(path, kSeqCheckpointWhat);
    SeqCheckpoint cp;
    try {
        require_convention(file, path, kSeqCheckpointFormat, kSeqCheckpointWhat);
        cp.identity = h5::read_string(file, path, "identity");
        require_same_identity(path, cp.identity, identity);
        cp.config = h5::read_string(file, path, "config");
        const bool checksummed = h5::is_checksummed(file);
        for (auto &p : params) h5::read_checked_tensor_into(file, path, "/params/" + p.name, *p.value, checksummed);
        H5::Group adam = file.openGroup("/adam");
        cp.adam.t = h5::read_int(adam, path, "t");
        if (cp.adam.t > 0)
            for (auto &p : params) {
                Tensor<float> m(p.value->shape), v(p.value->shape);
                h5::read_checked_tensor_into(file, path, "/adam/m/" + p.name, m, checksummed);
                h5::read_checked_tensor_into(file, path, "/adam/v/" + p.name, v, checksummed);
                cp.adam.m.emplace_back(m.data.begin(), m.data.end()), cp.adam.v.emplace_back(v.data.begin(), v.data.end());
            }
        H5::Group prog = file.openGroup("/progress");
        for (auto &[name, member] : progress_counts()) cp.*member = h5::read_int(prog, path, name);
        for (auto &[name, member] : progress_values()) cp.*member = h5::read_double(prog, path, name);
        cp.history = read_epochs(file, path, "/history", seq_epoch_fields());
        check_seq_progress(path, cp);
        read_int8_layers(file, path, cp);
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", kSeqCheckpointWhat, " (", e.getDetailMsg(), ")");
    }
    return cp;
}

bool is_seq_checkpoint(const std::string &path) {
    H5::H5File file = open_hdf5_for_reading(path, kSeqCheckpointWhat);
    try {
        h5::require_format(file, path, kSeqCheckpointFormat, kSeqCheckpointWhat);
    } catch (const Error &) {
        return false;
    }
    return true;
}

SeqCheckpoint read_seq_checkpoint_header(const std::string &path) {
    H5::H5File file = open_hdf5_for_reading(path, kSeqCheckpointWhat);
    SeqCheckpoint cp;
    try {
        require_convention(file, path, kSeqCheckpointFormat, kSeqCheckpointWhat, /*to_resume=*/false);
        cp.identity = h5::read_string(file, path, "identity");
        cp.config = h5::read_string(file, path, "config");
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", kSeqCheckpointWhat, " (", e.getDetailMsg(), ")");
    }
    return cp;
}

}  // namespace qrnn::lm
