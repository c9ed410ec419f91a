// Test fixture: a plugin of the two other kinds, a schedule "tuned-alias" and a model "qrnn-alias", both
// delegating to the built-in ones, so tests can check that models and schedules load from a library too.
#include "plugins/model.h"
#include "plugins/plugin_api.h"
#include "schedules/schedule.h"

namespace {
void register_aliases() {
    qrnn::LayerSchedule schedule = qrnn::find_layer_schedule("tuned");
    schedule.name = "tuned-alias";
    schedule.description = "the built-in 'tuned' schedule, registered by a plugin (test fixture)";
    qrnn::register_layer_schedule(schedule);
    qrnn::ModelPlugin model = qrnn::find_model("qrnn");
    model.name = "qrnn-alias";
    model.description = "the built-in 'qrnn' model, registered by a plugin (test fixture)";
    model.build = [build = model.build](const qrnn::ModelConfig &cfg, const qrnn::RunOptions &opts) {
        qrnn::ModelConfig as_qrnn = cfg;
        as_qrnn.model = "qrnn";
        return build(as_qrnn, opts);
    };
    qrnn::register_model(model);
}
}  // namespace

QRNN_PLUGIN("schedule and model aliases (test fixture)", register_aliases)
