#include "runtime/kernel.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <future>
#include <map>
#include <iostream>
#include <mutex>
#include <thread>

#include "core/error.h"
#include "runtime/amd_isa_check.h"
#include "runtime/buffer_cache.h"
#include "runtime/jit_compile.h"
#include "runtime/kernel_cache.h"
#include "runtime/static_thread_pool.h"
#include "schedules/gemm_tuning.h"
#include "schedules/kernel_key.h"
#include "schedules/schedule.h"

namespace qrnn {
namespace fs = std::filesystem;
namespace {

constexpr const char *kFunction = "qrnn_kernel";
using ArgvFunction = int (*)(void **);

// A kernel's error message: on the thread that reported it, and (for errors inside a parallel task, reported on
// a worker) the last one of the process.
thread_local std::string t_kernel_error;
std::mutex last_error_mutex;
std::string last_error;
void record_kernel_error(void *, const char *message) {
    t_kernel_error = message;
    std::lock_guard<std::mutex> lock(last_error_mutex);
    last_error = message;
}
std::string kernel_error(int code) {
    if (!t_kernel_error.empty()) return t_kernel_error;
    std::lock_guard<std::mutex> lock(last_error_mutex);
    return last_error.empty() ? "Halide error " + std::to_string(code) : last_error;
}

// The pipeline's arguments in Halide's canonical order (buffers, then scalars, each by name).
std::vector<Halide::Internal::InferredArgument> inferred_arguments(const Halide::Pipeline &pipeline) {
    std::vector<Halide::Internal::Function> outputs;
    for (const Halide::Func &f : pipeline.outputs()) outputs.push_back(f.function());
    auto args = Halide::Internal::infer_arguments(Halide::Internal::Stmt(), outputs);
    std::sort(args.begin(), args.end());
    return args;
}

// The arguments and outputs as text (names, types, dimensions): part of the disk key, so that two pipelines sharing
// a key by mistake are told apart.
std::string signature(const std::vector<Halide::Internal::InferredArgument> &args, const Halide::Pipeline &pipeline) {
    std::ostringstream s;
    for (const auto &a : args) s << a.arg.name << ":" << a.arg.type << ":" << int(a.arg.dimensions) << ",";
    s << "->";
    for (const Halide::Func &f : pipeline.outputs()) {
        s << f.name().substr(0, f.name().find('$')) << ":" << f.dimensions();  // "out$1": a second Func named out
        for (const Halide::Type &t : f.output_types()) s << ":" << t;
        s << ",";
    }
    return s.str();
}

// Installs the project's allocator, thread pool and error recorder in a loaded object's own Halide runtime; false
// (nothing installed) when the object lacks one of the setters.
bool install_handlers(void *handle) {
    void *set_malloc = dlsym(handle, "halide_set_custom_malloc"), *set_free = dlsym(handle, "halide_set_custom_free"),
         *set_par_for = dlsym(handle, "halide_set_custom_do_par_for"), *set_error = dlsym(handle, "halide_set_error_handler");
    if (!set_malloc || !set_free || !set_par_for || !set_error) return false;
    reinterpret_cast<halide_malloc_t (*)(halide_malloc_t)>(set_malloc)(reinterpret_cast<halide_malloc_t>(&cached_halide_malloc));
    reinterpret_cast<halide_free_t (*)(halide_free_t)>(set_free)(reinterpret_cast<halide_free_t>(&cached_halide_free));
    if (halide_do_par_for_t f = static_thread_pool_handler())
        reinterpret_cast<halide_do_par_for_t (*)(halide_do_par_for_t)>(set_par_for)(f);
    reinterpret_cast<halide_error_handler_t (*)(halide_error_handler_t)>(set_error)(record_kernel_error);
    return true;
}

// dlopen returns the object already loaded under a path, even when the file there has been replaced since. An entry
// replaced while this process had it loaded (a foreign key file, a hash collision) is opened as a private copy.
void *open_entry(const std::string &path, const std::string &key) {
    static std::mutex mutex;
    static std::map<std::string, std::string> loaded;  // path -> key of what this process opened there
    std::lock_guard<std::mutex> lock(mutex);
    auto [it, fresh] = loaded.emplace(path, key);
    if (fresh || it->second == key) return dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    const std::string copy = kernel_temp_path(".so");
    std::error_code ec;
    fs::copy_file(path, copy, ec);
    void *handle = ec ? nullptr : dlopen(copy.c_str(), RTLD_NOW | RTLD_LOCAL);
    fs::remove(copy, ec);
    return handle;
}

void warn_once(const std::string &why) {
    static std::once_flag once;
    std::call_once(once, [&] { std::cerr << "warning: kernel cache unused (" << why << "); pipelines are JIT-compiled\n"; });
}

// A kernel compiled for avx512_sapphirerapids that holds an instruction AMD's Zen 4/5 lack (runtime/amd_isa_check.h)
// is compiled again without the feature; said once per process.
void warn_recompiled_once(const std::string &key, const std::string &op) {
    static std::once_flag once;
    std::call_once(once, [&] {
        size_t fields = 0;  // the key's first three fields: component, variant, schedule
        for (int i = 0; i < 3 && fields != std::string::npos; i++) fields = key.find('|', fields + (i > 0));
        std::cerr << "warning: kernel " << key.substr(0, fields) << " compiled for avx512_sapphirerapids holds "
                  << op << ", which AMD's Zen 4/5 lack; compiled without the bf16/int8 dot product instead (slower)\n";
    });
}

}  // namespace

struct Kernel::Loaded {
    void *handle = nullptr;  // never closed: the process may still run its code
    ArgvFunction run = nullptr;
};

namespace {
// The shared object stored under `key`: found, else compiled to an object, linked and stored. Throws qrnn::Error
// when it cannot be stored (the caller then JIT-compiles).
std::string stored_entry(Halide::Pipeline &pipeline, const std::string &key,
                         const std::vector<Halide::Internal::InferredArgument> &inferred, const Halide::Target &target) {
    if (std::string path = find_cached_kernel(key); !path.empty()) return path;
    const std::string dir = kernel_cache_dir();
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (::access(dir.c_str(), W_OK) != 0) fail("cannot write to ", dir, " (QRNN_CACHE_DIR, XDG_CACHE_HOME, HOME)");
    const std::string object = kernel_temp_path(".o");
    std::vector<Halide::Argument> args;
    for (const auto &a : inferred) args.push_back(a.arg);
    pipeline.compile_to_object(object, args, kFunction, target);
    if (target.has_feature(Halide::Target::AVX512_SapphireRapids))
        if (const std::string op = first_instruction_amd_lacks(object); !op.empty()) {
            warn_recompiled_once(key, op);
            pipeline.compile_to_object(object, args, kFunction, target.without_feature(Halide::Target::AVX512_SapphireRapids));
        }
    struct RemoveObject {
        const std::string &path;
        ~RemoveObject() {
            std::error_code ignored;
            fs::remove(path, ignored);
        }
    } remove_object{object};
    return store_kernel(key, object);
}
}  // namespace

void Kernel::compile(const Halide::Target &target, const std::string &key) {
    auto jit = [&] {
        if (!target.has_gpu_feature()) use_cpu_jit_handlers(pipeline_);
        pipeline_.compile_jit(target);
    };
    if (key.empty() || target.has_gpu_feature() || kernel_cache_dir().empty()) return jit();
    auto inferred = inferred_arguments(pipeline_);
    for (const auto &a : inferred)
        if (!a.param.defined()) return jit();  // a captured Buffer would be frozen into the object
    const Halide::Target aot = target.without_feature(Halide::Target::JIT);
    const std::string full = key + "|" + aot.to_string() + "|gemm" + knobs_key(gemm_core_knobs(aot).knobs()) + "|" +
                             kernel_code_identity() + "|" + signature(inferred, pipeline_);
    std::string path;
    try {
        path = stored_entry(pipeline_, full, inferred, aot);
    } catch (const Error &e) {
        warn_once(e.what());
        return jit();
    }
    void *handle = open_entry(path, full);
    auto run = handle ? reinterpret_cast<ArgvFunction>(dlsym(handle, (std::string(kFunction) + "_argv").c_str())) : nullptr;
    if (!run || !install_handlers(handle)) {
        warn_once(std::string("cannot load ") + path + ": " + (handle ? "symbols missing" : dlerror()));
        return jit();
    }
    loaded_ = std::make_shared<Loaded>(Loaded{handle, run});
    for (const auto &a : inferred) params_.push_back(a.param);
}

void Kernel::realize(Halide::Realization outputs) {
    if (!loaded_) return pipeline_.realize(outputs);
    std::vector<void *> argv;
    for (const auto &p : params_)
        argv.push_back(p.is_buffer() ? const_cast<halide_buffer_t *>(p.raw_buffer()) : p.scalar_address());
    for (size_t i = 0; i < outputs.size(); i++) argv.push_back(outputs[i].raw_buffer());
    t_kernel_error.clear();
    if (int code = loaded_->run(argv.data())) throw Halide::RuntimeError(kernel_error(code));
}

void compile_kernels(const std::vector<Kernel *> &kernels, const Halide::Target &target) {
    std::vector<std::string> keys;
    for (size_t i = 0; i < kernels.size(); i++) keys.push_back(next_kernel_key());
    const size_t threads = std::max<size_t>(1, std::min<size_t>(kernels.size(), std::thread::hardware_concurrency()));
    // Kernel i compiles on worker i % threads; worker 0 is this thread.
    auto worker = [&](size_t first) {
        for (size_t i = first; i < kernels.size(); i += threads) kernels[i]->compile(target, keys[i]);
    };
    std::vector<std::future<void>> others;
    for (size_t w = 1; w < threads; w++) others.push_back(std::async(std::launch::async, worker, w));
    std::exception_ptr error;
    try {
        worker(0);
    } catch (...) {
        error = std::current_exception();
    }
    for (auto &f : others) try {
            f.get();
        } catch (...) {
            if (!error) error = std::current_exception();
        }
    if (error) std::rethrow_exception(error);
}

}  // namespace qrnn
