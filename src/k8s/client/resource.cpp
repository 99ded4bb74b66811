#include "k8s/client/resource.hpp"

#include <cctype>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace drover::k8s {

namespace {

void check_segment(std::string_view what, std::string_view s) {
  if (s.empty() || s == "." || s == ".." || s.find_first_of("/%?#") != std::string_view::npos) {
    throw std::invalid_argument("invalid " + std::string(what) + " \"" + std::string(s) +
                                "\" in a resource path");
  }
}

}  // namespace

std::string resource_path(const Resource& r, std::string_view ns, std::string_view name,
                          std::string_view subresource) {
  check_segment("version", r.version);
  check_segment("resource", r.resource);
  std::string p = r.group.empty() ? "/api/" + r.version : "/apis/" + r.group + "/" + r.version;
  if (!r.group.empty()) check_segment("group", r.group);
  if (!ns.empty()) {
    if (!r.namespaced) {
      throw std::invalid_argument(r.resource + " is cluster-scoped; no namespace may be given");
    }
    check_segment("namespace", ns);
    p += "/namespaces/";
    p += ns;
  }
  p += "/" + r.resource;
  if (!name.empty()) {
    check_segment("name", name);
    p += "/";
    p += name;
  }
  if (!subresource.empty()) {
    if (name.empty()) throw std::invalid_argument("a subresource needs an object name");
    check_segment("subresource", subresource);
    p += "/";
    p += subresource;
  }
  return p;
}

std::string url_encode(std::string_view s) {
  static const char* hex = "0123456789ABCDEF";
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string Query::str() const {
  std::string s;
  for (const auto& [k, v] : params) {
    s += s.empty() ? '?' : '&';
    s += url_encode(k);
    s += '=';
    s += url_encode(v);
  }
  return s;
}

void ListOptions::append_to(Query& q) const {
  if (!label_selector.empty()) q.add("labelSelector", label_selector);
  if (!field_selector.empty()) q.add("fieldSelector", field_selector);
  if (limit > 0) q.add("limit", std::to_string(limit));
  if (!continue_token.empty()) q.add("continue", continue_token);
  if (!resource_version.empty()) q.add("resourceVersion", resource_version);
  if (!resource_version_match.empty()) q.add("resourceVersionMatch", resource_version_match);
}

void WatchOptions::append_to(Query& q) const {
  q.add("watch", "true");
  if (!label_selector.empty()) q.add("labelSelector", label_selector);
  if (!field_selector.empty()) q.add("fieldSelector", field_selector);
  if (!resource_version.empty()) q.add("resourceVersion", resource_version);
  if (allow_bookmarks) q.add("allowWatchBookmarks", "true");
  if (timeout_seconds > 0) q.add("timeoutSeconds", std::to_string(timeout_seconds));
}

std::string DeleteOptions::body() const {
  nlohmann::json b = nlohmann::json::object();
  if (grace_period_seconds) b["gracePeriodSeconds"] = *grace_period_seconds;
  if (!propagation_policy.empty()) b["propagationPolicy"] = propagation_policy;
  if (!precondition_uid.empty()) b["preconditions"]["uid"] = precondition_uid;
  if (!precondition_resource_version.empty())
    b["preconditions"]["resourceVersion"] = precondition_resource_version;
  if (dry_run) b["dryRun"] = {"All"};
  if (b.empty()) return "";
  b["apiVersion"] = "v1";
  b["kind"] = "DeleteOptions";
  return b.dump();
}

const char* content_type(PatchType t) {
  switch (t) {
    case PatchType::kMerge:
      return "application/merge-patch+json";
    case PatchType::kStrategicMerge:
      return "application/strategic-merge-patch+json";
    case PatchType::kJson:
      return "application/json-patch+json";
  }
  return "application/merge-patch+json";
}

void WriteOptions::append_to(Query& q) const {
  if (!field_manager.empty()) q.add("fieldManager", field_manager);
  if (dry_run) q.add("dryRun", "All");
}

}  // namespace drover::k8s
