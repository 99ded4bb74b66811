#pragma once
// Resource paths and request options: pure values, no I/O.

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace drover::k8s {

// One kind of API object: group ("" for the core group), version and plural resource name.
struct Resource {
  std::string group;
  std::string version;
  std::string resource;
  bool namespaced = true;

  std::string api_version() const { return group.empty() ? version : group + "/" + version; }
};

namespace resources {
inline const Resource kPods{"", "v1", "pods", true};
inline const Resource kNodes{"", "v1", "nodes", false};
inline const Resource kNamespaces{"", "v1", "namespaces", false};
inline const Resource kConfigMaps{"", "v1", "configmaps", true};
inline const Resource kCoreEvents{"", "v1", "events", true};
inline const Resource kEvents{"events.k8s.io", "v1", "events", true};
inline const Resource kLeases{"coordination.k8s.io", "v1", "leases", true};
inline const Resource kPodDisruptionBudgets{"policy", "v1", "poddisruptionbudgets", true};
inline const Resource kCustomResourceDefinitions{"apiextensions.k8s.io", "v1",
                                                 "customresourcedefinitions", false};
}  // namespace resources

// "/api/v1/namespaces/NS/pods/NAME/SUB" or "/apis/GROUP/VERSION/...". An empty ns gives the
// all-namespaces (or cluster-scoped) collection; an empty name the collection. Throws
// std::invalid_argument for a segment that is empty where needed, ".", "..", or holds '/',
// '%' or '?' (names are DNS labels/subdomains; this keeps a name from escaping its path).
std::string resource_path(const Resource& r, std::string_view ns, std::string_view name = {},
                          std::string_view subresource = {});

// Percent-encodes a query component (RFC 3986 unreserved characters pass through).
std::string url_encode(std::string_view s);

// An ordered list of query parameters; str() gives "" or "?k=v&k=v" with values encoded.
struct Query {
  std::vector<std::pair<std::string, std::string>> params;
  Query& add(std::string key, std::string value) {
    params.emplace_back(std::move(key), std::move(value));
    return *this;
  }
  std::string str() const;
};

struct ListOptions {
  std::string label_selector;
  std::string field_selector;
  long limit = 0;                      // page size; 0 = no paging
  std::string continue_token;          // from the previous page's metadata.continue
  std::string resource_version;        // "" = the latest (a quorum read)
  std::string resource_version_match;  // "NotOlderThan" / "Exact", with resource_version
  void append_to(Query& q) const;
};

struct WatchOptions {
  std::string label_selector;
  std::string field_selector;
  std::string resource_version;  // start after this version ("" = from now, after synthetic ADDEDs)
  bool allow_bookmarks = true;
  long timeout_seconds = 0;  // server-side end of the watch; 0 = the server's default
  void append_to(Query& q) const;
};

struct DeleteOptions {
  std::optional<long> grace_period_seconds;
  std::string propagation_policy;  // "Foreground", "Background", "Orphan" or "" (the default)
  std::string precondition_uid;
  std::string precondition_resource_version;
  bool dry_run = false;
  // The DeleteOptions object sent as the request body ("" when nothing is set).
  std::string body() const;
};

enum class PatchType { kMerge, kStrategicMerge, kJson };
const char* content_type(PatchType t);

struct ApplyOptions {
  std::string field_manager = "drover";
  bool force = false;  // take ownership of fields another manager owns instead of a 409
  bool dry_run = false;
};

struct WriteOptions {
  std::string field_manager = "drover";  // recorded in managedFields for create/update/patch
  bool dry_run = false;
  void append_to(Query& q) const;
};

}  // namespace drover::k8s
