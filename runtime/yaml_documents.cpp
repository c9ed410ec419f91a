#include "runtime/yaml_documents.h"

#include <yaml-cpp/eventhandler.h>

#include <sstream>
#include <vector>

namespace qrnn {

std::optional<YAML::Mark> second_yaml_document(const std::string &text) {
    struct DocumentStarts : YAML::EventHandler {
        std::vector<YAML::Mark> marks;
        void OnDocumentStart(const YAML::Mark &mark) override { marks.push_back(mark); }
        void OnDocumentEnd() override {}
        void OnNull(const YAML::Mark &, YAML::anchor_t) override {}
        void OnAlias(const YAML::Mark &, YAML::anchor_t) override {}
        void OnScalar(const YAML::Mark &, const std::string &, YAML::anchor_t, const std::string &) override {}
        void OnSequenceStart(const YAML::Mark &, const std::string &, YAML::anchor_t, YAML::EmitterStyle::value) override {}
        void OnSequenceEnd() override {}
        void OnMapStart(const YAML::Mark &, const std::string &, YAML::anchor_t, YAML::EmitterStyle::value) override {}
        void OnMapEnd() override {}
    } starts;
    std::istringstream in(text);
    YAML::Parser parser(in);
    if (parser.HandleNextDocument(starts) && parser.HandleNextDocument(starts) && starts.marks.size() > 1)
        return starts.marks[1];
    return std::nullopt;
}

}  // namespace qrnn
