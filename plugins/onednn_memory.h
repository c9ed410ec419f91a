// oneDNN 2.x memory helpers shared by the lstm-onednn model plugin and its trainable layer: f32 descriptors,
// memories over our host tensors (no copy), and memories in the layout a primitive asks for.
#pragma once
#include <dnnl.hpp>

namespace qrnn::onednn {

using tag = dnnl::memory::format_tag;

inline dnnl::memory::desc f32(const dnnl::memory::dims &dims, tag t) {
    return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, t);
}

// A memory over host data we own (oneDNN may write into it when it is an output).
inline dnnl::memory wrap(const dnnl::memory::desc &d, const dnnl::engine &engine, const float *data) {
    return dnnl::memory(d, engine, const_cast<float *>(data));
}

// `user` as the primitive wants it: `user` itself when the layouts agree, else a reordered copy (run now).
inline dnnl::memory prepared(const dnnl::memory::desc &want, const dnnl::memory &user, const dnnl::engine &engine,
                             dnnl::stream &stream) {
    if (want == user.get_desc()) return user;
    dnnl::memory mem(want, engine);
    dnnl::reorder(user, mem).execute(stream, const_cast<dnnl::memory &>(user), mem);
    return mem;
}

}  // namespace qrnn::onednn
