#include "proto/reply.hpp"

namespace drover::proto {
using nlohmann::json;

namespace {
template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
  if (v) j[key] = *v;
}
json ok_reply() { return json{{"ok", true}}; }
}  // namespace

// refusals

json ErrorReply::to_json() const {
  json j = error.reply();
  put(j, "bad_partition", bad_partition);
  put(j, "detail", detail);
  put(j, "local", local);
  return j;
}

ErrorReply ErrorReply::from_json(const json& j) {
  ErrorReply r;
  r.error = Error::from_reply(j).value_or(Error(Errno::kError));
  r.bad_partition = opt_string(j, "bad_partition");
  r.detail = opt_string(j, "detail");
  r.local = opt_bool(j, "local");
  return r;
}

// acknowledgements

json Ack::to_json() const { return ok_reply(); }
Ack Ack::from_json(const json&) { return {}; }

// submissions

json SubmitReply::to_json() const {
  json j = ok_reply();
  j["job_id"] = job_id;
  put(j, "retried", retried);
  put(j, "test_only", test_only);
  put(j, "start", start);
  put(j, "cpus", cpus);
  put(j, "nodes", nodes);
  put(j, "partition", partition);
  return j;
}

SubmitReply SubmitReply::from_json(const json& j) {
  SubmitReply r;
  r.job_id = need_uint(j, "job_id");
  r.retried = opt_bool(j, "retried");
  r.test_only = opt_bool(j, "test_only");
  r.start = opt_int(j, "start");
  r.cpus = opt_int(j, "cpus");
  r.nodes = opt_string(j, "nodes");
  r.partition = opt_string(j, "partition");
  return r;
}

// replies about several jobs

json JobsReply::to_json() const {
  json list = json::array();
  for (const auto& e : errors)
    list.push_back(
        {{"job", e.job}, {"error", e.error.message}, {"errno", static_cast<int>(e.error.code)}});
  json j = {{"ok", errors.empty()}, {"errors", std::move(list)}};
  put(j, "matched", matched);
  return j;
}

JobsReply JobsReply::from_json(const json& j) {
  JobsReply r;
  if (has(j, "errors")) {
    const json& list = j.at("errors");
    if (!list.is_array()) throw BadMessage("field \"errors\" is not an array");
    for (const json& e : list) {
      if (!e.is_object()) throw BadMessage("field \"errors\" is not an array of objects");
      r.errors.push_back({get_string(e, "job"), Error::from_entry(e)});
    }
  }
  r.matched = opt_uint(j, "matched");
  return r;
}

// reservations

json ReservationReply::to_json() const {
  json j = ok_reply();
  put(j, "name", name);
  return j;
}

ReservationReply ReservationReply::from_json(const json& j) {
  return {.name = opt_string(j, "name")};
}

}  // namespace drover::proto
