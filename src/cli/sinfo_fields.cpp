#include "cli/sinfo_fields.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>

#include "cli/format.hpp"
#include "core/duration.hpp"
#include "core/hostlist.hpp"
#include "core/text.hpp"
#include "proto/data_parser/cluster.hpp"
#include "proto/data_parser/sinfo.hpp"

namespace drover::cli::sinfo {
namespace {

const json& no_partition() {
  static const json empty = json::object();
  return empty;
}
const json& part(const Line& l) { return l.partition ? *l.partition : no_partition(); }

// The first node of a line: what it shows for fields all of its nodes agree on.
const json& first(const Line& l) {
  static const json none = json::object();
  return l.nodes.empty() ? none : *l.nodes.front();
}

struct Span {
  int64_t lo = 0, hi = 0;
};

// Smallest and largest value of a numeric node field over the line (0 and 0 without nodes).
Span span(const Line& l, const char* key, int64_t dflt) {
  Span s;
  for (size_t i = 0; i < l.nodes.size(); ++i) {
    const int64_t v = l.nodes[i]->value(key, dflt);
    s.lo = i == 0 ? v : std::min(s.lo, v);
    s.hi = i == 0 ? v : std::max(s.hi, v);
  }
  return s;
}

// Sizes of unlike nodes show as the smallest followed by '+' ("2+").
std::string at_least(const Span& s) { return std::to_string(s.lo) + (s.lo == s.hi ? "" : "+"); }
std::string size_of(const Line& l, const char* key, int64_t dflt) {
  return at_least(span(l, key, dflt));
}

std::string or_null(const std::string& s) { return s.empty() ? "(null)" : s; }

std::string join(const json& list) {
  std::string out;
  if (!list.is_array()) return out;
  for (const auto& x : list) out += (out.empty() ? "" : ",") + x.get<std::string>();
  return out;
}

// Names, host names or addresses of a line's nodes in Slurm's ranged form.
std::string node_list(const Line& l, const char* key) {
  std::vector<std::string> names;
  for (const json* n : l.nodes) {
    std::string v = n->value(key, "");
    names.push_back(v.empty() ? n->value("name", "") : v);
  }
  return core::compress_hostlist(names);
}

std::string counts(const proto::data_parser::SinfoCounts& c, bool four) {
  std::string out = std::to_string(c.allocated) + "/" + std::to_string(c.idle);
  if (four) out += "/" + std::to_string(c.other) + "/" + std::to_string(c.total);
  return out;
}

std::string reason_user(const Line& l, const Context& ctx, bool with_uid) {
  const json& n = first(l);
  if (!l.nodes.empty() && n.value("reason", "").empty()) return "Unknown";
  const uint32_t uid = n.value("reason_uid", 0u);
  std::string name = ctx.user_name ? ctx.user_name(uid) : std::to_string(uid);
  return with_uid ? name + "(" + std::to_string(uid) + ")" : name;
}

std::string state_of(const Line& l, bool long_name) {
  // A partition none of whose nodes passed the filters still gets its line.
  if (l.nodes.empty()) return "n/a";
  const std::string s = first(l).value("state_short", "unk");
  return long_name ? long_state(s) : s;
}

std::string time_limit(int64_t minutes, const char* none) {
  return minutes < 0 ? none : core::format_elapsed(minutes * 60);
}

// CPULoad and FreeMem: what the agents last reported, a range over unlike nodes.
std::string reported_range(const Line& l, bool load) {
  bool known = false;
  int64_t lo = 0, hi = 0;
  for (const json* n : l.nodes) {
    const int64_t v =
        load ? (n->value("cpu_load", -1.0) < 0 ? -1 : proto::data_parser::cpu_load_hundredths(*n))
             : n->value("free_mem_mb", int64_t{-1});
    if (v < 0) continue;
    lo = known ? std::min(lo, v) : v;
    hi = known ? std::max(hi, v) : v;
    known = true;
  }
  if (!known && !l.nodes.empty()) return "N/A";
  auto text = [&](int64_t v) {
    if (!load) return std::to_string(v);
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(v) / 100.0);
    return std::string(buf);
  };
  return lo == hi ? text(lo) : text(lo) + "-" + text(hi);
}

#define LINE [](const Line& l, const Context&) -> std::string
#define P part(l)

// clang-format off
const Field kFields[] = {
  {"allocmem", 0, "ALLOCMEM", Grouping::Node, LINE { return std::to_string(first(l).value("alloc_mem_mb", int64_t{0})); }},
  {"allocnodes", 'S', "ALLOCNODES", Grouping::Partition, LINE {
     const std::string v = P.value("alloc_nodes", "");
     return v.empty() ? "all" : v; }},
  {"available", 'a', "AVAIL", Grouping::Partition, LINE { return core::to_lower(P.value("state", "UP")); }},
  {"cluster", 'V', "CLUSTER", Grouping::Summary, [](const Line&, const Context&) -> std::string { return "N/A"; }},  // only federations name it
  {"comment", 0, "COMMENT", Grouping::Node, LINE { return or_null(first(l).value("comment", "")); }},
  {"cores", 'Y', "CORES", Grouping::Exact, LINE { return size_of(l, "cores_per_socket", 1); }},
  {"cpus", 'c', "CPUS", Grouping::Exact, LINE { return size_of(l, "cpus", 1); }},
  {"cpusload", 'O', "CPU_LOAD", Grouping::Exact, LINE { return reported_range(l, true); }},
  {"cpusstate", 'C', "CPUS(A/I/O/T)", Grouping::Summary, LINE { return counts(proto::data_parser::sinfo_cpu_counts(l.nodes), true); }},
  {"defaulttime", 'L', "DEFAULTTIME", Grouping::Partition, LINE { return time_limit(P.value("default_time_min", int64_t{-1}), "n/a"); }},
  {"disk", 'd', "TMP_DISK", Grouping::Exact, LINE { return size_of(l, "tmp_disk_mb", 0); }},
  {"extra", 0, "EXTRA", Grouping::Node, LINE { return or_null(first(l).value("extra", "")); }},
  {"features", 'f', "AVAIL_FEATURES", Grouping::Node, LINE { return or_null(join(first(l).value("features", json::array()))); }},
  {"features_act", 'b', "ACTIVE_FEATURES", Grouping::Node, LINE { return or_null(join(first(l).value("active_features", json::array()))); }},
  {"freemem", 'e', "FREE_MEM", Grouping::Exact, LINE { return reported_range(l, false); }},
  {"gres", 'G', "GRES", Grouping::Node, LINE { return or_null(first(l).value("gres", "")); }},
  {"gresused", 0, "GRES_USED", Grouping::Node, LINE { return or_null(proto::data_parser::gres_used_text(first(l))); }},
  {"groups", 'g', "GROUPS", Grouping::Partition, LINE {
     const std::string g = join(P.value("allow_groups", json::array()));
     return g.empty() ? "all" : g; }},
  {"maxcpuspernode", 'B', "MAX_CPUS_PER_NODE", Grouping::Partition, LINE {
     const int64_t m = P.value("max_cpus_per_node", int64_t{-1});
     return m < 0 ? std::string("UNLIMITED") : std::to_string(m); }},
  {"memory", 'm', "MEMORY", Grouping::Exact, LINE { return size_of(l, "real_memory_mb", 1); }},
  {"nodeaddr", 'o', "NODE_ADDR", Grouping::Node, LINE { return node_list(l, "address"); }},
  {"nodeai", 'A', "NODES(A/I)", Grouping::Summary, LINE { return counts(proto::data_parser::sinfo_node_counts(l.nodes), false); }},
  {"nodeaiot", 'F', "NODES(A/I/O/T)", Grouping::Summary, LINE { return counts(proto::data_parser::sinfo_node_counts(l.nodes), true); }},
  {"nodehost", 'n', "HOSTNAMES", Grouping::Node, LINE { return node_list(l, "hostname"); }},
  {"nodelist", 'N', "NODELIST", Grouping::Summary, LINE { return node_list(l, "name"); }},
  {"nodes", 'D', "NODES", Grouping::Summary, LINE { return std::to_string(l.nodes.size()); }},
  {"oversubscribe", 'h', "OVERSUBSCRIBE", Grouping::Partition, LINE {
     // YES and FORCE without a count mean 4 jobs per resource, and say so.
     const std::string o = P.value("over_subscribe", "NO");
     return o == "YES" || o == "FORCE" ? o + ":4" : o; }},
  {"partition", 'P', "PARTITION", Grouping::Partition, LINE {
     return P.value("name", "") + (P.value("is_default", false) ? "*" : ""); }},
  {"partitionname", 'R', "PARTITION", Grouping::Partition, LINE { return P.value("name", ""); }},
  {"port", 0, "PORT", Grouping::Exact, LINE { return std::to_string(first(l).value("port", 0)); }},
  {"preemptmode", 'M', "PREEMPT_MODE", Grouping::Partition, LINE { return P.value("preempt_mode", "OFF"); }},
  {"priorityjobfactor", 'I', "PRIO_JOB_FACTOR", Grouping::Partition, LINE { return std::to_string(P.value("priority_job_factor", 1)); }},
  {"prioritytier", 'p', "PRIO_TIER", Grouping::Partition, LINE { return std::to_string(P.value("priority_tier", 1)); }},
  {"reason", 'E', "REASON", Grouping::Node, LINE { return first(l).value("reason", "").empty() ? "none" : first(l).value("reason", ""); }},
  {"root", 'r', "ROOT", Grouping::Partition, LINE { return P.value("root_only", false) ? "yes" : "no"; }},
  {"size", 's', "JOB_SIZE", Grouping::Partition, LINE {
     // A job has at least one node, whatever MinNodes says (unless MaxNodes is 0 too).
     const int64_t lo = P.value("min_nodes", 0), hi = P.value("max_nodes", -1);
     if (lo == hi) return std::to_string(lo);
     return std::to_string(std::max<int64_t>(lo, 1)) + "-" + (hi < 0 ? std::string("infinite") : std::to_string(hi)); }},
  {"socketcorethread", 'z', "S:C:T", Grouping::Exact, LINE {
     return size_of(l, "sockets", 1) + ":" + size_of(l, "cores_per_socket", 1) + ":" + size_of(l, "threads_per_core", 1); }},
  {"sockets", 'X', "SOCKETS", Grouping::Exact, LINE { return size_of(l, "sockets", 1); }},
  {"statecompact", 't', "STATE", Grouping::Node, LINE { return state_of(l, false); }},
  {"statecomplete", 0, "STATECOMPLETE", Grouping::Node, LINE {
     return l.nodes.empty() ? std::string("n/a") : core::to_lower(first(l).value("state_long", "UNKNOWN")); }},
  {"statelong", 'T', "STATE", Grouping::Node, LINE { return state_of(l, true); }},
  {"threads", 'Z', "THREADS", Grouping::Exact, LINE { return size_of(l, "threads_per_core", 1); }},
  {"time", 'l', "TIMELIMIT", Grouping::Partition, LINE { return time_limit(P.value("max_time_min", int64_t{-1}), "infinite"); }},
  {"timestamp", 'H', "TIMESTAMP", Grouping::Node, LINE {
     const json& n = first(l);
     const int64_t t = n.value("reason_time", int64_t{0});
     return n.value("reason", "").empty() || t == 0 ? std::string("Unknown") : core::format_timestamp(t); }},
  {"user", 'u', "USER", Grouping::Node, [](const Line& l, const Context& ctx) { return reason_user(l, ctx, false); }},
  {"userlong", 'U', "USER", Grouping::Node, [](const Line& l, const Context& ctx) { return reason_user(l, ctx, true); }},
  {"version", 'v', "VERSION", Grouping::Exact, LINE {
     const std::string v = first(l).value("version", "");
     return v.empty() ? "N/A" : v; }},
  {"weight", 'w', "WEIGHT", Grouping::Exact, LINE { return size_of(l, "weight", 1); }},
};
// clang-format on
#undef P
#undef LINE

// Reads a -o/-O size: an optional sign and digits, as Slurm's atoi-like parsing does.
int read_size(std::string_view s, size_t& i) {
  const size_t start = i;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  const size_t digits = i;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i]))) ++i;
  if (i == digits) {
    i = start;
    return 0;
  }
  return parse_width(s.substr(start, i - start));
}

// The value as a column shows it: padded or cut to the width; a default partition keeps its
// '*' when its name is cut ("debug*" in 3 columns is "de*").
std::string cell(const Column& c, const std::string& value, int width) {
  if (width < 0) return std::string();
  if (c.field && c.field->code == 'P' && width > 0 && value.size() > static_cast<size_t>(width) &&
      !value.empty() && value.back() == '*')
    return value.substr(0, static_cast<size_t>(width - 1)) + "*";
  return fit(value, width, c.right);
}

}  // namespace

const char* const kAllFormat =
    "%a|%b|%c|%d|%e|%f|%g|%h|%l|%m|%n|%o|%p|%r|%s|%t|%u|%v|%w|%z|%A |%B |%C |%D |%E |%F |%G |%H "
    "|%I |%L |%M |%N |%O |%P |%R |%S |%T |%U |%V |%X |%Y |%Z ";

const Field* field_by_code(char code) {
  if (code == 0) return nullptr;
  for (const auto& f : kFields)
    if (f.code == code) return &f;
  return nullptr;
}

const Field* field_by_name(std::string_view name) {
  const std::string lower = core::to_lower(name);
  for (const auto& f : kFields)
    if (lower == f.name) return &f;
  return nullptr;
}

std::vector<Column> parse_letters(std::string_view spec, bool builtin, std::string& errors) {
  if (spec == "%all") spec = kAllFormat;
  std::vector<Column> out;
  std::string literal;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] != '%' || i + 1 >= spec.size()) {
      literal += spec[i];
      continue;
    }
    if (spec[i + 1] == '%') {
      literal += '%';
      ++i;
      continue;
    }
    Column c;
    size_t j = i + 1;
    if (spec[j] == '.') {
      c.right = true;
      ++j;
    }
    if (builtin && j < spec.size() && spec[j] == '#') {
      c.widest = true;
      ++j;
    }
    while (j < spec.size() && std::isdigit(static_cast<unsigned char>(spec[j])))
      c.width = add_width_digit(c.width, spec[j++]);
    if (j >= spec.size()) {
      literal += spec.substr(i);
      break;
    }
    c.field = field_by_code(spec[j]);
    if (!c.field) {
      errors += "Invalid node format specification: " + std::string(1, spec[j]) + "\n";
      literal += spec.substr(i, j - i + 1);
      i = j;
      continue;
    }
    c.literal = std::move(literal);
    literal.clear();
    out.push_back(std::move(c));
    i = j;
  }
  if (!literal.empty()) {
    Column tail;
    tail.literal = std::move(literal);
    out.push_back(std::move(tail));
  }
  return out;
}

std::vector<Column> parse_names(std::string_view spec, std::string& errors) {
  std::vector<Column> out;
  for (const auto& item : core::split_list(spec, ',')) {
    if (item.empty()) continue;
    const size_t colon = item.find(':');
    const std::string name = item.substr(0, colon);
    if (core::iequals(name, "all")) {
      std::string ignored;
      for (auto& c : parse_letters(kAllFormat, false, ignored)) out.push_back(std::move(c));
      continue;
    }
    const Field* f = field_by_name(name);
    if (!f) {
      errors += "sinfo: error: Invalid job format specification: " + name + "\n";
      continue;
    }
    Column c;
    c.field = f;
    c.width = 20;
    if (colon != std::string::npos) {
      std::string_view size = std::string_view(item).substr(colon + 1);
      size_t i = 0;
      if (i < size.size() && size[i] == '.') {
        c.right = true;
        ++i;
      }
      c.width = read_size(size, i);
      c.suffix = std::string(size.substr(i));
    }
    out.push_back(std::move(c));
  }
  return out;
}

std::string render(const std::vector<Column>& columns, const std::vector<Line>& lines,
                   const Context& ctx, bool with_header) {
  std::vector<int> widths;
  for (const auto& c : columns) {
    int w = c.width;
    if (c.widest && c.field) {
      w = static_cast<int>(std::string_view(c.field->header).size());
      for (const auto& l : lines) w = std::max(w, static_cast<int>(c.field->value(l, ctx).size()));
    }
    widths.push_back(w);
  }
  std::string out;
  auto line = [&](const std::function<std::string(const Field&)>& value) {
    for (size_t i = 0; i < columns.size(); ++i) {
      const Column& c = columns[i];
      out += c.literal;
      if (c.field) out += cell(c, value(*c.field), widths[i]) + c.suffix;
    }
    out += '\n';
  };
  if (with_header) line([](const Field& f) { return std::string(f.header); });
  for (const auto& l : lines) line([&](const Field& f) { return f.value(l, ctx); });
  return out;
}

std::string node_key(const Field& f, const json& node, const Context& ctx) {
  return f.value(Line{nullptr, {&node}}, ctx);
}

std::string partition_key(const Field& f, const json& partition, const Context& ctx) {
  return f.value(Line{&partition, {}}, ctx);
}

std::string base_state(std::string compact) {
  while (!compact.empty() && std::string("*~#!%$@^-").find(compact.back()) != std::string::npos)
    compact.pop_back();
  return compact;
}

std::string long_state(const std::string& compact) {
  static const std::map<std::string, std::string> names = {
      {"idle", "idle"},     {"alloc", "allocated"}, {"mix", "mixed"},     {"drain", "drained"},
      {"drng", "draining"}, {"down", "down"},       {"resv", "reserved"}, {"maint", "maint"},
      {"unk", "unknown"},   {"comp", "completing"}, {"fail", "fail"},     {"plnd", "planned"}};
  const std::string base = base_state(compact), suffix = compact.substr(base.size());
  auto it = names.find(base);
  return (it == names.end() ? base : it->second) + suffix;
}

}  // namespace drover::cli::sinfo
