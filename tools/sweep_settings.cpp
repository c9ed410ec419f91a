#include "tools/sweep_settings.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "sweep/run_spec.h"
#include "report/table.h"

namespace qrnn::cli {

Settings settings_of(const sweep::ResultTable &r, size_t i) {
    Settings s;
    for (auto &f : sweep::run_fields())
        if (f.name != "seed") s[f.name] = r.str(i, f.name);
    const std::string train = r.str(i, "train");
    for (size_t at = 0; at < train.size();) {
        const size_t comma = std::min(train.find(',', at), train.size()), eq = train.find('=', at);
        if (eq < comma) s[sweep::kTrainPrefix + train.substr(at, eq - at)] = train.substr(eq + 1, comma - eq - 1);
        at = comma + 1;
    }
    return s;
}

std::string training_task(const sweep::ResultTable &r, size_t i) {
    const Settings s = settings_of(r, i);
    auto it = s.find(std::string(sweep::kTrainPrefix) + "task");
    return it == s.end() ? "lm" : it->second;
}

void add_to_setting(std::vector<Setting> &settings, const sweep::ResultTable &r, size_t i) {
    const Settings keys = settings_of(r, i);
    auto same = std::find_if(settings.begin(), settings.end(), [&](const Setting &s) { return s.keys == keys; });
    if (same == settings.end()) settings.push_back({keys, {i}});
    else same->rows.push_back(i);
}

std::string setting_label(const Setting &s, const std::vector<Setting> &all) {
    std::string text;
    for (auto &[key, value] : s.keys) {
        if (key == "model") continue;
        const bool varies = std::any_of(all.begin(), all.end(), [&, &key = key, &value = value](const Setting &o) {
            auto it = o.keys.find(key);
            return it == o.keys.end() || it->second != value;
        });
        if (varies) text += (text.empty() ? "" : " ") + key + "=" + value;
    }
    return text.empty() ? "-" : text;
}

std::string seeds_of(const Setting &s, const sweep::ResultTable &r) {
    std::string seeds;
    for (size_t i : s.rows) seeds += (seeds.empty() ? "" : ",") + r.str(i, "seed");
    return seeds;
}

std::string setting_name(const Setting &s, const std::vector<Setting> &all) {
    return s.keys.at("model") + " " + setting_label(s, all);
}

std::vector<double> setting_mean_curve(const Setting &s, const std::vector<std::vector<double>> &curves) {
    std::vector<std::vector<double>> of_setting;
    for (size_t i : s.rows) of_setting.push_back(curves[i]);
    return mean_curve(of_setting);
}

double mean(const std::vector<double> &v) { return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()); }

double sample_sd(const std::vector<double> &v) {
    if (v.size() < 2) return std::nan("");
    const double m = mean(v);
    double sum = 0;
    for (double x : v) sum += (x - m) * (x - m);
    return std::sqrt(sum / static_cast<double>(v.size() - 1));
}

std::vector<double> mean_curve(const std::vector<std::vector<double>> &curves) {
    std::vector<double> sum, count;
    for (auto &c : curves) {
        sum.resize(std::max(sum.size(), c.size())), count.resize(sum.size());
        for (size_t e = 0; e < c.size(); e++) sum[e] += c[e], count[e]++;
    }
    for (size_t e = 0; e < sum.size(); e++) sum[e] /= count[e];
    return sum;
}

std::string num(double v, int decimals) { return std::isnan(v) ? std::string("-") : fixed(v, decimals); }

}  // namespace qrnn::cli
