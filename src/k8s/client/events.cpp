#include "k8s/client/events.hpp"

#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <random>

namespace drover::k8s {

namespace {

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0 || !buf[0]) return "drover";
  return buf;
}

std::string truncate(const std::string& s, size_t n) { return s.size() <= n ? s : s.substr(0, n); }

// Event names follow the kubelet's "<object>.<unique hex>", so they sort next to the object.
std::string event_name(const std::string& object_name) {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(rng()));
  return truncate(object_name, 253 - 17) + "." + hex;
}

}  // namespace

EventRecorder::EventRecorder(Client& client, EventRecorderOptions opts)
    : client_(client), opts_(std::move(opts)) {
  if (opts_.reporting_instance.empty()) opts_.reporting_instance = hostname();
}

std::string EventRecorder::micro_time(std::chrono::system_clock::time_point t) {
  auto us = std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
  std::time_t secs = static_cast<std::time_t>(us / 1000000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof buf, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(us % 1000000));
  return buf;
}

json EventRecorder::record(const json& regarding, EventType type, const std::string& reason,
                           const std::string& action, const std::string& note) {
  const json& md = regarding.at("metadata");
  std::string obj_ns = md.value("namespace", "");
  std::string obj_name = md.value("name", "");
  // Events about cluster-scoped objects live in "default", as kubectl looks for them there.
  std::string ev_ns = obj_ns.empty() ? "default" : obj_ns;
  const char* type_str = type == EventType::kWarning ? "Warning" : "Normal";
  std::string key = regarding.value("kind", "") + "\x1f" + obj_ns + "\x1f" + obj_name + "\x1f" +
                    md.value("uid", "") + "\x1f" + type_str + "\x1f" + reason + "\x1f" + action +
                    "\x1f" + note;
  auto now_steady = std::chrono::steady_clock::now();
  std::string now = micro_time(std::chrono::system_clock::now());

  std::unique_lock lock(mu_);
  auto it = seen_.find(key);
  if (it != seen_.end() && now_steady - it->second.last < opts_.aggregate_window) {
    Seen& s = it->second;
    s.count += 1;
    s.last = now_steady;
    lru_.splice(lru_.begin(), lru_, s.lru);
    json series = {{"count", s.count}, {"lastObservedTime", now}};
    if (s.count > 2 && now_steady - s.last_patch < opts_.series_interval) {
      json out = s.event;  // counted; the server hears of it with a later repeat
      out["series"] = series;
      return out;
    }
    s.last_patch = now_steady;
    std::string ns = s.ns, name = s.name;
    lock.unlock();
    try {
      json out =
          client_.patch(resources::kEvents, ns, name, PatchType::kMerge, {{"series", series}});
      lock.lock();
      it = seen_.find(key);
      if (it != seen_.end()) it->second.event = out;
      return out;
    } catch (const ApiError& e) {
      if (!is_not_found(e)) throw;  // the Event expired (the server's event TTL): start anew
      lock.lock();
      it = seen_.find(key);
    }
  }
  if (it != seen_.end()) {
    lru_.erase(it->second.lru);
    seen_.erase(it);
  }
  lock.unlock();

  json ref = {{"apiVersion", regarding.value("apiVersion", "v1")},
              {"kind", regarding.value("kind", "")},
              {"name", obj_name}};
  if (!obj_ns.empty()) ref["namespace"] = obj_ns;
  if (md.contains("uid")) ref["uid"] = md["uid"];
  if (md.contains("resourceVersion")) ref["resourceVersion"] = md["resourceVersion"];
  json ev = {{"apiVersion", "events.k8s.io/v1"},
             {"kind", "Event"},
             {"metadata", {{"name", event_name(obj_name)}, {"namespace", ev_ns}}},
             {"eventTime", now},
             {"reportingController", opts_.reporting_controller},
             {"reportingInstance", truncate(opts_.reporting_instance, 128)},
             {"action", truncate(action, 128)},
             {"reason", truncate(reason, 128)},
             {"note", truncate(note, 1024)},
             {"type", type_str},
             {"regarding", ref}};
  json out = client_.create(resources::kEvents, ev_ns, ev);

  lock.lock();
  if (seen_.size() >= opts_.max_tracked && !lru_.empty()) {
    seen_.erase(lru_.back());
    lru_.pop_back();
  }
  if (!seen_.count(key)) {
    lru_.push_front(key);
    seen_[key] = Seen{
        ev_ns, out["metadata"].value("name", ""), 1, now_steady, now_steady, out, lru_.begin()};
  }
  return out;
}

}  // namespace drover::k8s
