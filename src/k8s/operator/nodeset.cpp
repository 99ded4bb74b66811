#include "k8s/operator/nodeset.hpp"

#include <cmath>
#include <cstdio>
#include <limits>

namespace drover::k8s::op {

using core::ParseError;
using nlohmann::json;

namespace {

[[noreturn]] void bad(std::string_view field, std::string_view what) {
  throw ParseError("NodeSet " + std::string(field) + ": " + std::string(what));
}

std::vector<std::string> string_list(const json& spec, const char* key) {
  std::vector<std::string> out;
  if (!spec.contains(key) || spec[key].is_null()) return out;
  const json& v = spec[key];
  if (!v.is_array()) bad(std::string("spec.") + key, "must be a list of strings");
  for (const json& e : v) {
    if (!e.is_string() || e.get<std::string>().empty())
      bad(std::string("spec.") + key, "must be a list of non-empty strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

// Decimal digits with an optional fraction at s[i..]; advances i.
bool read_decimal(std::string_view s, size_t& i, long double& out) {
  size_t start = i;
  long double v = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + (s[i++] - '0');
  if (i < s.size() && s[i] == '.') {
    ++i;
    long double scale = 0.1L;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
      v += (s[i++] - '0') * scale;
      scale /= 10;
    }
  }
  out = v;
  return i > start && !(i == start + 1 && s[start] == '.');
}

}  // namespace

int64_t parse_duration_seconds(std::string_view s) {
  const std::string err = "invalid duration \"" + std::string(s) + "\" (use e.g. 90s, 30m, 1h30m)";
  if (s.empty()) throw ParseError(err);
  if (s == "0") return 0;
  long double total = 0;
  size_t i = 0;
  while (i < s.size()) {
    long double v = 0;
    if (!read_decimal(s, i, v)) throw ParseError(err);
    size_t u = i;
    while (i < s.size() && !(s[i] >= '0' && s[i] <= '9') && s[i] != '.') ++i;
    std::string_view unit = s.substr(u, i - u);
    long double mul;
    if (unit == "h")
      mul = 3600;
    else if (unit == "m")
      mul = 60;
    else if (unit == "s")
      mul = 1;
    else if (unit == "ms")
      mul = 1e-3L;
    else if (unit == "us" || unit == "\xC2\xB5s")
      mul = 1e-6L;
    else if (unit == "ns")
      mul = 1e-9L;
    else
      throw ParseError(err);
    total += v * mul;
  }
  if (total > static_cast<long double>(std::numeric_limits<int32_t>::max())) throw ParseError(err);
  return static_cast<int64_t>(std::ceil(total - 1e-9L));
}

long double parse_quantity(std::string_view s) {
  const std::string err = "invalid quantity \"" + std::string(s) + "\"";
  size_t i = 0;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  long double v = 0;
  if (!read_decimal(s, i, v)) throw ParseError(err);
  std::string_view suffix = s.substr(i);
  long double mul = 1;
  if (suffix.empty())
    mul = 1;
  else if (suffix == "Ki")
    mul = 1024.0L;
  else if (suffix == "Mi")
    mul = std::pow(1024.0L, 2);
  else if (suffix == "Gi")
    mul = std::pow(1024.0L, 3);
  else if (suffix == "Ti")
    mul = std::pow(1024.0L, 4);
  else if (suffix == "Pi")
    mul = std::pow(1024.0L, 5);
  else if (suffix == "Ei")
    mul = std::pow(1024.0L, 6);
  else if (suffix == "n")
    mul = 1e-9L;
  else if (suffix == "u")
    mul = 1e-6L;
  else if (suffix == "m")
    mul = 1e-3L;
  else if (suffix == "k")
    mul = 1e3L;
  else if (suffix == "M")
    mul = 1e6L;
  else if (suffix == "G")
    mul = 1e9L;
  else if (suffix == "T")
    mul = 1e12L;
  else if (suffix == "P")
    mul = 1e15L;
  else if (suffix == "E")
    mul = 1e18L;
  else if (suffix[0] == 'e' || suffix[0] == 'E') {
    size_t j = 1;
    bool eneg = false;
    if (j < suffix.size() && (suffix[j] == '+' || suffix[j] == '-')) eneg = suffix[j++] == '-';
    if (j >= suffix.size() || suffix.size() - j > 2) throw ParseError(err);
    int e = 0;
    for (; j < suffix.size(); ++j) {
      if (suffix[j] < '0' || suffix[j] > '9') throw ParseError(err);
      e = e * 10 + (suffix[j] - '0');
    }
    mul = std::pow(10.0L, eneg ? -e : e);
  } else {
    throw ParseError(err);
  }
  return (neg ? -v : v) * mul;
}

int NodeSetSpec::max_unavailable_for(int n) const {
  int v = max_unavailable_pct ? static_cast<int>(static_cast<int64_t>(n) * max_unavailable / 100)
                              : max_unavailable;
  return v < 1 ? 1 : v;
}

std::string NodeSetSpec::selector() const { return std::string(kNodeSetLabel) + "=" + name; }

NodeSetSpec parse_nodeset(const json& obj) {
  if (!obj.is_object()) throw ParseError("NodeSet: not an object");
  NodeSetSpec s;
  const json meta = obj.value("metadata", json::object());
  if (!meta.is_object() || !meta.contains("name") || !meta["name"].is_string() ||
      meta["name"].get<std::string>().empty())
    bad("metadata.name", "missing");
  s.name = meta["name"].get<std::string>();
  s.ns = meta.value("namespace", "");
  s.uid = meta.value("uid", "");
  s.generation = meta.value("generation", int64_t{0});
  s.deleting = meta.contains("deletionTimestamp") && !meta["deletionTimestamp"].is_null();
  if (meta.contains("finalizers") && meta["finalizers"].is_array())
    for (const json& f : meta["finalizers"])
      if (f.is_string() && f.get<std::string>() == kFinalizer) s.has_finalizer = true;
  s.status = obj.contains("status") && obj["status"].is_object() ? obj["status"] : json::object();

  if (!obj.contains("spec") || !obj["spec"].is_object()) bad("spec", "missing");
  const json& spec = obj["spec"];

  if (spec.contains("replicas")) {
    if (!spec["replicas"].is_number_integer() || spec["replicas"].get<int64_t>() < 0 ||
        spec["replicas"].get<int64_t>() > 100000)
      bad("spec.replicas", "must be an integer from 0 to 100000");
    s.replicas = spec["replicas"].get<int>();
  }

  if (!spec.contains("template") || !spec["template"].is_object()) bad("spec.template", "missing");
  s.pod_template = spec["template"];
  const json& pspec = s.pod_template.value("spec", json());
  if (!pspec.is_object() || !pspec.contains("containers") || !pspec["containers"].is_array() ||
      pspec["containers"].empty())
    bad("spec.template.spec.containers", "needs at least one container (the agent)");
  for (const json& c : pspec["containers"])
    if (!c.is_object() || !c.contains("name") || !c["name"].is_string())
      bad("spec.template.spec.containers", "every container needs a name");
  if (s.pod_template.contains("metadata") && !s.pod_template["metadata"].is_object())
    bad("spec.template.metadata", "must be an object");
  try {
    (void)shape_from_pod_spec(pspec);
  } catch (const ParseError& e) {
    bad("spec.template.spec.containers[].resources", e.what());
  }

  s.partitions = string_list(spec, "partitions");
  s.features = string_list(spec, "features");
  s.features_from_node_labels = string_list(spec, "featuresFromNodeLabels");
  s.drain_on_node_conditions = string_list(spec, "drainOnNodeConditions");
  // Absent: the defaults; an empty list turns the watch off.
  if (spec.contains("disruptionTaints") && !spec["disruptionTaints"].is_null())
    s.disruption_taints = string_list(spec, "disruptionTaints");

  if (spec.contains("updateStrategy") && !spec["updateStrategy"].is_null()) {
    const json& u = spec["updateStrategy"];
    if (!u.is_object()) bad("spec.updateStrategy", "must be an object");
    std::string type = u.value("type", "RollingUpdate");
    if (type == "RollingUpdate")
      s.update_type = UpdateType::RollingUpdate;
    else if (type == "OnDelete")
      s.update_type = UpdateType::OnDelete;
    else
      bad("spec.updateStrategy.type", "must be RollingUpdate or OnDelete, not \"" + type + "\"");
    if (u.contains("rollingUpdate") && u["rollingUpdate"].is_object() &&
        u["rollingUpdate"].contains("maxUnavailable")) {
      const json& m = u["rollingUpdate"]["maxUnavailable"];
      const char* field = "spec.updateStrategy.rollingUpdate.maxUnavailable";
      if (m.is_number_integer()) {
        if (m.get<int64_t>() < 1 || m.get<int64_t>() > 100000) bad(field, "must be at least 1");
        s.max_unavailable = m.get<int>();
      } else if (m.is_string()) {
        std::string v = m.get<std::string>();
        size_t i = 0;
        long double pct = 0;
        if (v.size() < 2 || v.back() != '%' || !read_decimal(v, i, pct) || i != v.size() - 1 ||
            v.find('.') != std::string::npos || pct < 1 || pct > 100)
          bad(field, "must be an integer >= 1 or a percentage from 1% to 100%");
        s.max_unavailable = static_cast<int>(pct);
        s.max_unavailable_pct = true;
      } else {
        bad(field, "must be an integer >= 1 or a percentage from 1% to 100%");
      }
    }
  }

  auto duration = [&](const char* key, int64_t& out) {
    if (!spec.contains(key) || spec[key].is_null()) return;
    if (!spec[key].is_string()) bad(std::string("spec.") + key, "must be a duration string");
    try {
      out = parse_duration_seconds(spec[key].get<std::string>());
    } catch (const ParseError& e) {
      bad(std::string("spec.") + key, e.what());
    }
  };
  duration("maxDrainTime", s.max_drain_time);
  duration("registrationTimeout", s.registration_timeout);

  if (spec.contains("drainTimeoutPolicy") && !spec["drainTimeoutPolicy"].is_null()) {
    std::string p = spec["drainTimeoutPolicy"].is_string()
                        ? spec["drainTimeoutPolicy"].get<std::string>()
                        : std::string("?");
    if (p == "Requeue")
      s.drain_timeout_policy = DrainTimeoutPolicy::Requeue;
    else if (p == "Cancel")
      s.drain_timeout_policy = DrainTimeoutPolicy::Cancel;
    else if (p == "Wait")
      s.drain_timeout_policy = DrainTimeoutPolicy::Wait;
    else
      bad("spec.drainTimeoutPolicy", "must be Requeue, Cancel or Wait, not \"" + p + "\"");
  }
  if (spec.contains("workloadProtection") && !spec["workloadProtection"].is_null()) {
    if (!spec["workloadProtection"].is_boolean())
      bad("spec.workloadProtection", "must be true or false");
    s.workload_protection = spec["workloadProtection"].get<bool>();
  }
  if (spec.contains("cost") && !spec["cost"].is_null()) {
    if (!spec["cost"].is_number() || !(spec["cost"].get<double>() >= 0))
      bad("spec.cost", "must be a number at least 0");
    s.cost = spec["cost"].get<double>();
  }
  if (spec.contains("autoscaling") && !spec["autoscaling"].is_null()) {
    const json& a = spec["autoscaling"];
    if (!a.is_object()) bad("spec.autoscaling", "must be an object");
    NodeSetSpec::Autoscaling as;
    auto count = [&](const char* key, int& out, bool required) {
      const std::string field = std::string("spec.autoscaling.") + key;
      if (!a.contains(key) || a[key].is_null()) {
        if (required) bad(field, "missing");
        return;
      }
      if (!a[key].is_number_integer() || a[key].get<int64_t>() < 0 ||
          a[key].get<int64_t>() > 100000)
        bad(field, "must be an integer from 0 to 100000");
      out = a[key].get<int>();
    };
    count("minReplicas", as.min_replicas, false);
    count("maxReplicas", as.max_replicas, true);
    if (as.min_replicas > as.max_replicas)
      bad("spec.autoscaling", "minReplicas must not exceed maxReplicas");
    auto dur = [&](const char* key, int64_t& out) {
      const std::string field = std::string("spec.autoscaling.") + key;
      if (!a.contains(key) || a[key].is_null()) return;
      if (!a[key].is_string()) bad(field, "must be a duration string");
      try {
        out = parse_duration_seconds(a[key].get<std::string>());
      } catch (const ParseError& e) {
        bad(field, e.what());
      }
    };
    dur("idleTimeout", as.idle_timeout);
    dur("startupTime", as.startup_time);
    s.autoscaling = as;
  }
  return s;
}

std::string pod_name(std::string_view nodeset, int ordinal) {
  return std::string(nodeset) + "-" + std::to_string(ordinal);
}

int pod_ordinal(std::string_view nodeset, std::string_view name) {
  if (name.size() <= nodeset.size() + 1 || name.substr(0, nodeset.size()) != nodeset ||
      name[nodeset.size()] != '-')
    return -1;
  std::string_view digits = name.substr(nodeset.size() + 1);
  if (digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) return -1;
  int v = 0;
  for (char c : digits) {
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  return v;
}

std::string template_hash(const json& pod_template) {
  // FNV-1a over the canonical dump (nlohmann orders object keys), so the same template always
  // hashes the same across operator restarts and versions of the library.
  const std::string text = pod_template.dump();
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ULL;
  }
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return std::string(buf, 10);
}

NodeShape shape_from_pod_spec(const json& pod_spec) {
  long double cpu = 0, mem = 0, gpus = 0;
  if (pod_spec.is_object() && pod_spec.contains("containers") && pod_spec["containers"].is_array())
    for (const json& c : pod_spec["containers"]) {
      if (!c.is_object() || !c.contains("resources") || !c["resources"].is_object()) continue;
      const json& r = c["resources"];
      auto get = [&](const char* key) -> long double {
        for (const char* part : {"requests", "limits"})
          if (r.contains(part) && r[part].is_object() && r[part].contains(key)) {
            const json& q = r[part][key];
            if (q.is_number()) return q.get<long double>();
            if (q.is_string()) return parse_quantity(q.get<std::string>());
            throw ParseError(std::string(key) + ": invalid quantity");
          }
        return 0;
      };
      cpu += get("cpu");
      mem += get("memory");
      gpus += get("nvidia.com/gpu");
    }
  NodeShape s;
  s.cpus = cpu >= 1 ? static_cast<int>(std::floor(cpu + 1e-9L)) : 1;
  s.real_memory_mb = static_cast<int64_t>(std::floor(mem / (1024.0L * 1024.0L) + 1e-9L));
  s.gpus = static_cast<int64_t>(std::floor(gpus + 1e-9L));
  return s;
}

std::string node_conf_line(const NodeShape& shape, const std::vector<std::string>& features) {
  std::string line = "CPUs=" + std::to_string(shape.cpus);
  if (shape.real_memory_mb > 0) line += " RealMemory=" + std::to_string(shape.real_memory_mb);
  if (shape.gpus > 0) line += " Gres=gpu:" + std::to_string(shape.gpus);
  if (!features.empty()) {
    line += " Feature=";
    for (size_t i = 0; i < features.size(); ++i) line += (i ? "," : "") + features[i];
  }
  return line;
}

}  // namespace drover::k8s::op
