// The external plugin ABI: a shared library exposes ONE C entry point, qrnn_plugin_entry, returning its
// ABI version and a function that registers its plugins with the usual registries (register_pooling,
// register_model, register_layer_schedule). Write one with QRNN_PLUGIN (see plugins/examples/).
#pragma once

// Bump when a registry struct (PoolingVariant, ModelPlugin, LayerSchedule, ...) changes layout.
// 2: PoolingVariant gained its backward (halide_partials, reference_partials, backward_flops_per_step).
// 3: KnobSpec gained its valid range (min, max).
// 4: ModelPlugin gained features; LayerFuncs gained gate_rows.
// 5: ModelPlugin gained layer, stack and verifier (a model registers everything in one record).
// 6: ModelPlugin gained inference_verifier; nn::Layer gained set_knobs and prepare_training.
// 7: ModelConfig is a ModelSpec and RunSettings; the schedule records derive from ScheduleRecord.
#define QRNN_PLUGIN_ABI_VERSION 8

extern "C" {
struct QrnnPluginEntry {
    int abi_version;               // QRNN_PLUGIN_ABI_VERSION the library was built with
    const char *description;       // one line, for messages
    void (*register_plugins)(void);  // called once, after the ABI version was checked
};
typedef const QrnnPluginEntry *(*QrnnPluginEntryFn)(void);
}

#define QRNN_PLUGIN_ENTRY_SYMBOL "qrnn_plugin_entry"

// Defines the entry point of a plugin library: QRNN_PLUGIN("my variants", my_register_function)
#define QRNN_PLUGIN(description, register_function)                                        \
    extern "C" __attribute__((visibility("default"))) const QrnnPluginEntry *qrnn_plugin_entry(void) { \
        static const QrnnPluginEntry entry{QRNN_PLUGIN_ABI_VERSION, description, register_function};   \
        return &entry;                                                                     \
    }
