#include "cli/scontrol_json.hpp"

#include <algorithm>
#include <optional>

#include "cli/job_info.hpp"
#include "cli/json_output.hpp"
#include "core/error.hpp"
#include "core/hostlist.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

namespace dp = proto::data_parser;

bool is_job(const std::string& w) { return w == "job" || w == "jobs" || w == "jobid"; }
bool is_node(const std::string& w) { return w == "node" || w == "nodes"; }
bool is_partition(const std::string& w) { return w == "partition" || w == "partitions"; }
// scontrol's reservation words: "res", "reservation", "reservations", ...
bool is_reservation(const std::string& w) {
  return w.size() >= 3 && (std::string("reservations").rfind(w, 0) == 0);
}

CommandResult done(const json& doc) {
  CommandResult r;
  r.out = json_text(doc);
  r.rc = doc.at("errors").empty() ? 0 : 1;
  return r;
}

// The entries of a `query WHAT` answer named `names` (all for none), and an error for each
// name not found.
struct Named {
  std::vector<json> found;
  json errors = json::array();
};
Named named(const json& reply, const char* what, const std::vector<std::string>& names, int missing,
            const std::string& noun) {
  Named out;
  const json& list = reply.at(what);
  for (const auto& item : list)
    if (names.empty() ||
        std::find(names.begin(), names.end(), item.value("name", "")) != names.end())
      out.found.push_back(item);
  for (const auto& name : names)
    if (std::none_of(list.begin(), list.end(),
                     [&](const json& item) { return item.value("name", "") == name; }))
      out.errors.push_back(
          dp::error_entry(missing, noun + " " + name + " not found", "scontrol show"));
  return out;
}

}  // namespace

bool scontrol_shows_json(const std::string& what) {
  return is_job(what) || is_node(what) || is_partition(what) || is_reservation(what);
}

CommandResult scontrol_show_json(const std::string& what, const std::string& id,
                                 const std::vector<std::string>& argv, const CommandEnv& env) {
  if (is_job(what)) {
    proto::QueryRequest req{.what = "jobs", .detail = true};
    std::optional<core::JobRef> ref;
    if (!id.empty()) {
      try {
        ref = core::parse_job_ref(id);
      } catch (const core::ParseError&) {
        return {"", "Invalid job id specified\n", 1};
      }
      req.job_id = ref->job_id;
    }
    const json reply = env.call(req.to_json());
    std::vector<json> jobs;
    for (const auto& j : reply.value("jobs", json::array()))
      if (!ref || job_matches_ref(j, *ref)) jobs.push_back(j);
    json doc =
        jobs_document(command_meta("scontrol", argv, reply.value("cluster_name", "")), reply, jobs);
    if (ref && jobs.empty())
      doc["errors"].push_back(dp::error_entry(dp::errnum::kInvalidJobId,
                                              "Unable to find JobId=" + id, "slurm_load_job"));
    return done(doc);
  }
  std::vector<std::string> names;
  if (!id.empty()) names = is_node(what) ? core::expand_hostlist(id) : std::vector{id};
  const char* key = is_node(what) ? "nodes" : is_partition(what) ? "partitions" : "reservations";
  const json reply = env.call(proto::QueryRequest{.what = key}.to_json());
  const dp::Meta meta = command_meta("scontrol", argv, reply.value("cluster_name", ""));
  const bool node = is_node(what), partition = is_partition(what);
  const Named n = named(reply, key, names,
                        node        ? dp::errnum::kInvalidNodeName
                        : partition ? dp::errnum::kInvalidPartitionName
                                    : dp::errnum::kReservationInvalid,
                        node        ? "Node"
                        : partition ? "Partition"
                                    : "Reservation");
  json doc = node        ? nodes_document(meta, reply, n.found)
             : partition ? partitions_document(meta, reply, n.found)
                         : reservations_document(meta, reply, n.found);
  doc["errors"] = n.errors;
  return done(doc);
}

}  // namespace drover::cli
