#pragma once
// JSON forms of the domain types: the journal's record format and the wire format.
#include <nlohmann/json.hpp>

#include "core/job.hpp"
#include "core/node.hpp"

namespace drover::core {
void to_json(nlohmann::json& j, const GresCount& v);
void from_json(const nlohmann::json& j, GresCount& v);
void to_json(nlohmann::json& j, const IndexSet& v);  // IndexSet::format_ranges() text
void from_json(const nlohmann::json& j, IndexSet& v);
void to_json(nlohmann::json& j, const Dependency& d);
void from_json(const nlohmann::json& j, Dependency& d);
void to_json(nlohmann::json& j, const JobSpec& s);
void from_json(const nlohmann::json& j, JobSpec& s);
void to_json(nlohmann::json& j, const NodeAlloc& a);
void from_json(const nlohmann::json& j, NodeAlloc& a);
void to_json(nlohmann::json& j, const Step& s);
void from_json(const nlohmann::json& j, Step& s);
void to_json(nlohmann::json& j, const Job& job);
// The job without its script and environment: what queries return.
void job_summary_json(nlohmann::json& j, const Job& job);
void from_json(const nlohmann::json& j, Job& job);
}  // namespace drover::core
namespace drover::proto {
class JsonObjectText;
}
namespace drover::core {
// job_summary_json's members but "steps", written into an object as text (json_text.hpp);
// "spec" always, with only `spec_only`'s keys when given (sorted).
void job_summary_text(proto::JsonObjectText& w, const Job& job,
                      const std::vector<std::string>* spec_only = nullptr);
void to_json(nlohmann::json& j, const Node& n);
void from_json(const nlohmann::json& j, Node& n);
}  // namespace drover::core
