// Test fixture: a plugin whose register function throws something that is not a std::exception; the
// loader must turn it into a one-line error (exit 2), not abort.
#include "plugins/plugin_api.h"

namespace {
void register_throwing() { throw 42; }
}  // namespace

QRNN_PLUGIN("register function throws an int (test fixture)", register_throwing)
