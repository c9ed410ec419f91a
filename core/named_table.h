// Look-ups in a fixed table of entries that have a `name` member (the keys of a config, the fields of a run):
// the entry by name, and the names for "unknown key 'x' (known: a, b, c)" messages.
#pragma once
#include <string>
#include <vector>

namespace qrnn {

template <class T>
const T *find_named(const std::vector<T> &table, const std::string &name) {
    for (auto &entry : table)
        if (entry.name == name) return &entry;
    return nullptr;
}

template <class T>
std::string named_list(const std::vector<T> &table) {
    std::string names;
    for (auto &entry : table) names += (names.empty() ? "" : ", ") + entry.name;
    return names;
}

}  // namespace qrnn
