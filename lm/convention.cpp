#include "lm/convention.h"

#include "core/error.h"
#include "runtime/h5io.h"

namespace qrnn::lm {

void write_checkpoint_header(H5::H5File &file, const std::string &format, const std::string &identity,
                             const std::string &config) {
    h5::write_attr(file, "format", format);
    h5::write_attr(file, "format_version", kConventionVersion);
    h5::write_attr(file, "convention", std::string(kConvention));
    h5::write_attr(file, "identity", identity);
    h5::write_attr(file, "config", config);
    h5::mark_checksummed(file);
}

void require_convention(H5::H5File &file, const std::string &path, const std::string &format, const std::string &what,
                        bool to_resume) {
    h5::require_format(file, path, format, what);
    const int64_t version = h5::read_int(file, path, "format_version");
    if (version == 1 && !to_resume) return;
    if (version == 1)
        fail(path, ": ", what, " of format_version 1, trained under the old convention (loss summed over the batch's "
             "tokens, weight decay added before clipping); this build trains under PyTorch's (", kConvention,
             ") and does not resume it: delete it or name another --checkpoint");
    h5::require_format_version(file, path, format, kConventionVersion, what);
}

}  // namespace qrnn::lm
