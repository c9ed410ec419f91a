#include "lm/checkpoint.h"

#include <cmath>
#include <sstream>

#include "core/error.h"
#include "lm/convention.h"
#include "runtime/h5io.h"
#include "runtime/atomic_file.h"

namespace qrnn::lm {
namespace {

constexpr const char *kCheckpointFormat = "qrnn-lm-checkpoint";
constexpr const char *kCheckpointWhat = "training checkpoint";

std::string state_group(size_t l) { return "/state/" + std::to_string(l); }

const std::vector<std::pair<const char *, double TrainProgress::*>> &progress_sums() {
    static const std::vector<std::pair<const char *, double TrainProgress::*>> sums{
        {"loss", &TrainProgress::loss},         {"rnn_ms", &TrainProgress::rnn_ms}, {"softmax_ms", &TrainProgress::softmax_ms},
        {"optim_ms", &TrainProgress::optim_ms}, {"seconds", &TrainProgress::seconds}};
    return sums;
}

}  // namespace

void write_checkpoint(const std::string &path, const CheckpointInfo &info, TrainableModel &model) {
    write_hdf5_atomically(path, kCheckpointWhat, [&](H5::H5File &file) {
        write_checkpoint_header(file, kCheckpointFormat, info.identity, info.config);
        h5::write_attr(file, "rng", std::string("counter-based hash of (seed, stream, step, batch, channel): its state is the "
                                                "seed and the time attribute of each /state/<l>"));
        std::string vocab;
        for (auto &w : info.vocab) vocab += w + "\n";
        h5::write_bytes(file, "/vocab", vocab);
        const std::vector<nn::Param> params = model.params();
        for (auto &p : params) h5::write_checked_tensor(file, "/params/" + p.name, *p.value);
        if (!info.best_params.empty()) {
            if (info.best_params.size() != params.size()) fail(path, ": ", info.best_params.size(), " best parameters for a model of ", params.size());
            H5::Group best = file.createGroup("/best");
            h5::write_attr(best, "epoch", info.best_epoch);
            for (size_t i = 0; i < params.size(); i++) h5::write_checked_tensor(file, "/best/" + params[i].name, info.best_params[i]);
        }
        const auto &states = model.carried_state();
        file.createGroup("/state");
        for (size_t l = 0; l < states.size(); l++) {
            H5::Group g = file.createGroup(state_group(l));
            h5::write_attr(g, "time", states[l].time);
            for (size_t i = 0; i < states[l].names.size(); i++)
                h5::write_checked_tensor(file, state_group(l) + "/" + states[l].names[i], states[l].tensors[i]);
        }
        H5::Group opt = file.createGroup("/optimizer");
        h5::write_attr(opt, "lr", info.lr);
        h5::write_attr(opt, "plateau_best", info.plateau.best);
        h5::write_attr(opt, "plateau_bad", info.plateau.bad);
        h5::write_attr(opt, "plateau_started", int64_t(info.plateau.started));
        H5::Group prog = file.createGroup("/progress");
        const TrainProgress &p = info.progress;
        h5::write_attr(prog, "epoch", p.epoch);
        h5::write_attr(prog, "batch", p.batch);
        h5::write_attr(prog, "step", p.step);
        h5::write_attr(prog, "targets", p.targets);
        for (auto &[name, member] : progress_sums()) h5::write_attr(prog, name, p.*member);
        write_epochs(file, "/history", p.history);
    });
}

CheckpointInfo read_checkpoint_info(const std::string &path, bool to_resume) {
    H5::H5File file = open_hdf5_for_reading(path, kCheckpointWhat);
    CheckpointInfo info;
    try {
        require_convention(file, path, kCheckpointFormat, kCheckpointWhat, to_resume);
        info.identity = h5::read_string(file, path, "identity");
        info.config = h5::read_string(file, path, "config");
        std::istringstream words(h5::read_bytes(file, path, "/vocab"));
        for (std::string w; std::getline(words, w);) info.vocab.push_back(w);
        H5::Group opt = file.openGroup("/optimizer");
        info.lr = h5::read_double(opt, path, "lr");
        info.plateau.best = h5::read_double(opt, path, "plateau_best");
        info.plateau.bad = h5::read_int(opt, path, "plateau_bad");
        info.plateau.started = h5::read_int(opt, path, "plateau_started") != 0;
        H5::Group prog = file.openGroup("/progress");
        TrainProgress &p = info.progress;
        p.epoch = h5::read_int(prog, path, "epoch");
        p.batch = h5::read_int(prog, path, "batch");
        p.step = h5::read_int(prog, path, "step");
        p.targets = h5::read_int(prog, path, "targets");
        for (auto &[name, member] : progress_sums()) p.*member = h5::read_double(prog, path, name);
        p.history = read_epochs(file, path, "/history");
        if (file.nameExists("/best")) {
            H5::Group best = file.openGroup("/best");
            info.best_epoch = h5::read_int(best, path, "epoch");
        }
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", kCheckpointWhat, " (", e.getDetailMsg(), ")");
    }
    return info;
}

void validate_progress(const std::string &path, const CheckpointInfo &info, int64_t batches_per_epoch, int64_t epochs) {
    const TrainProgress &p = info.progress;
    auto bad = [&](const char *field, auto value, const auto &...why) { fail(path, ": /progress ", field, " ", value, ": ", why...); };
    if (p.epoch < 0 || p.epoch > epochs) bad("epoch", p.epoch, "outside [0, ", epochs, "] (epochs)");
    if (p.batch < 0 || p.batch >= batches_per_epoch) bad("batch", p.batch, "outside [0, ", batches_per_epoch, ") (batches per epoch)");
    if (p.epoch == epochs && p.batch != 0) bad("batch", p.batch, "after the last epoch (", epochs, ")");
    if (p.step != p.epoch * batches_per_epoch + p.batch)
        bad("step", p.step, "is not epoch x batches per epoch + batch = ", p.epoch, " x ", batches_per_epoch, " + ", p.batch);
    if (p.targets < 0) bad("targets", p.targets, "is negative");
    for (auto &[name, member] : progress_sums())
        if (!std::isfinite(p.*member) || p.*member < 0) bad(name, p.*member, "must be finite and >= 0");
    if (static_cast<int64_t>(p.history.size()) != p.epoch)
        fail(path, ": /history holds ", p.history.size(), " epochs, /progress epoch is ", p.epoch);
    if (info.best_epoch < (p.epoch > 0 ? 1 : 0) || info.best_epoch > p.epoch)
        fail(path, ": /best epoch ", info.best_epoch, " outside [1, ", p.epoch, "] (the finished epochs)");
    if (!(info.lr > 0) || !std::isfinite(info.lr)) fail(path, ": /optimizer lr ", info.lr, ": must be finite and > 0");
}

void set_params(TrainableModel &model, const std::vector<Tensor<float>> &values) {
    const std::vector<nn::Param> params = model.params();
    if (values.size() != params.size()) fail("set_params: ", values.size(), " tensors for ", params.size(), " parameters");
    for (size_t i = 0; i < params.size(); i++) *params[i].value = values[i];
}

std::vector<Tensor<float>> read_best_params(const std::string &path, TrainableModel &model) {
    H5::H5File file = open_hdf5_for_reading(path, kCheckpointWhat);
    std::vector<Tensor<float>> best;
    try {
        if (!file.nameExists("/best")) return best;
        for (auto &p : model.params()) {
            best.emplace_back(p.value->shape);
            h5::read_checked_tensor_into(file, path, "/best/" + p.name, best.back(), h5::is_checksummed(file));
        }
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", kCheckpointWhat, " (", e.getDetailMsg(), ")");
    }
    return best;
}

void load_checkpoint_model(const std::string &path, TrainableModel &model) {
    H5::H5File file = open_hdf5_for_reading(path, kCheckpointWhat);
    const bool checksummed = h5::is_checksummed(file);
    auto load = [&](const std::string &name, Tensor<float> &into) {
        h5::read_checked_tensor_into(file, path, name, into, checksummed);
    };
    try {
        for (auto &p : model.params()) load("/params/" + p.name, *p.value);
        auto &states = model.carried_state();
        for (size_t l = 0; l < states.size(); l++) {
            if (!file.nameExists(state_group(l))) fail(path, ": group ", state_group(l), " is missing");
            H5::Group g = file.openGroup(state_group(l));
            states[l].time = h5::read_int(g, path, "time");
            if (states[l].time < 0) fail(path, ": ", state_group(l), " attribute time ", states[l].time, ": must be >= 0");
            for (size_t i = 0; i < states[l].names.size(); i++)
                load(state_group(l) + "/" + states[l].names[i], states[l].tensors[i]);
        }
    } catch (const H5::Exception &e) {
        fail(path, ": malformed ", kCheckpointWhat, " (", e.getDetailMsg(), ")");
    }
}

}  // namespace qrnn::lm
