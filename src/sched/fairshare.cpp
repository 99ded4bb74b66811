#include "sched/fairshare.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "core/error.hpp"
#include "core/text.hpp"

namespace drover::sched {
namespace {

// Largest number of shares (Slurm keeps 0x7fffffff for "parent").
constexpr uint32_t kMaxShares = 0x7ffffffe;
// Level FS Slurm gives a FairShare=parent account (its NO_VAL): above any finite value, below
// the +inf of associations without usage. Such an account has no children of its own to rank.
constexpr long double kParentAccountLevelFs = 4294967294.0L;

// The fair-share structure derived from the tree: each association's fair-share parent (the
// nearest account above that is not FairShare=parent) and the associations that compete under
// each account (a "parent" account's children move up to where it would compete).
struct FsLinks {
  std::vector<AssocId> fs_parent;
  std::vector<std::vector<AssocId>> fs_children;
  std::vector<uint64_t> level_shares;  // sum of the raw shares of an association's competitors
};

FsLinks fs_links(const AssocTree& t) {
  const std::size_t n = t.size();
  FsLinks l;
  l.fs_parent.assign(n, AssocTree::kRoot);
  l.fs_children.assign(n, {});
  l.level_shares.assign(n, 0);
  // Pre-order from the root, so parents are linked before their children.
  std::vector<AssocId> stack{AssocTree::kRoot};
  while (!stack.empty()) {
    AssocId id = stack.back();
    stack.pop_back();
    const Association& a = t.at(id);
    if (id != AssocTree::kRoot) {
      AssocId p = a.parent;
      while (p != AssocTree::kRoot && t.at(p).shares.parent) p = t.at(p).parent;
      l.fs_parent[id] = p;
      l.fs_children[p].push_back(id);
    }
    for (auto it = a.children.rbegin(); it != a.children.rend(); ++it) stack.push_back(*it);
  }
  for (std::size_t p = 0; p < n; ++p) {
    uint64_t sum = 0;
    for (AssocId c : l.fs_children[p])
      if (!t.at(c).shares.parent) sum += t.at(c).shares.value;
    for (AssocId c : l.fs_children[p]) l.level_shares[c] = sum;
  }
  return l;
}

// Associations in pre-order (parents first).
std::vector<AssocId> preorder(const AssocTree& t) {
  std::vector<AssocId> out, stack{AssocTree::kRoot};
  while (!stack.empty()) {
    AssocId id = stack.back();
    stack.pop_back();
    out.push_back(id);
    const auto& ch = t.at(id).children;
    for (auto it = ch.rbegin(); it != ch.rend(); ++it) stack.push_back(*it);
  }
  return out;
}

double norm_usage_of(const AssocTree& t, AssocId id) {
  long double root = t.at(AssocTree::kRoot).raw_usage;
  if (root <= 0) return 0;
  return static_cast<double>(std::min<long double>(1.0L, t.at(id).raw_usage / root));
}

// ---- Fair Tree ----

struct FairTreeRanker {
  const AssocTree& t;
  const FsLinks& l;
  std::vector<long double> level_fs;
  std::vector<ShareInfo>& out;
  uint32_t users;
  uint32_t rank;
  uint32_t rank_no_ties;

  // Ranks `siblings` (associations competing at one level, possibly merged from several tied
  // accounts): sorted by Level FS, highest first, users before accounts on equal values. A
  // user takes the next rank unless it ties with the association before it; an account is
  // descended into with the children of every sibling account tied with it.
  void rank_level(std::vector<AssocId> siblings, bool starts_tied) {
    std::stable_sort(siblings.begin(), siblings.end(), [&](AssocId a, AssocId b) {
      if (level_fs[a] != level_fs[b]) return level_fs[a] > level_fs[b];
      return t.at(a).is_user() && !t.at(b).is_user();
    });
    for (std::size_t i = 0; i < siblings.size(); ++i) {
      AssocId id = siblings[i];
      bool tied = i == 0 ? starts_tied : level_fs[siblings[i - 1]] == level_fs[id];
      if (t.at(id).is_user()) {
        if (!tied) rank = rank_no_ties;
        out[id].fairshare = static_cast<double>(rank) / static_cast<double>(users);
        --rank_no_ties;
        continue;
      }
      std::vector<AssocId> merged = l.fs_children[id];
      while (i + 1 < siblings.size() && !t.at(siblings[i + 1]).is_user() &&
             level_fs[siblings[i + 1]] == level_fs[id]) {
        ++i;
        const auto& more = l.fs_children[siblings[i]];
        merged.insert(merged.end(), more.begin(), more.end());
      }
      rank_level(std::move(merged), tied);
    }
  }
};

void compute_fair_tree(const AssocTree& t, const FsLinks& l, std::vector<ShareInfo>& out) {
  const std::size_t n = t.size();
  std::vector<long double> level_fs(n, 0);
  for (AssocId id = 0; id < n; ++id) {
    const Association& a = t.at(id);
    ShareInfo& s = out[id];
    s.raw_usage = a.raw_usage;
    if (id == AssocTree::kRoot) {
      s.norm_shares = 0;  // the root competes with nobody
      s.effective_usage = 1;
      continue;
    }
    AssocId fs_assoc = a.shares.parent ? l.fs_parent[id] : id;
    long double S = 0;
    if (fs_assoc != AssocTree::kRoot && l.level_shares[fs_assoc] > 0)
      S = static_cast<long double>(t.at(fs_assoc).shares.value) / l.level_shares[fs_assoc];
    long double parent_usage = t.at(l.fs_parent[id]).raw_usage;
    long double U = parent_usage > 0 ? a.raw_usage / parent_usage : 0;
    s.norm_shares = static_cast<double>(S);
    s.effective_usage = static_cast<double>(U);
    s.norm_usage = norm_usage_of(t, id);
    if (a.shares.parent) {
      level_fs[id] =
          a.is_user() ? std::numeric_limits<long double>::infinity() : kParentAccountLevelFs;
    } else {
      if (S == 0)
        level_fs[id] = 0;  // no shares: last, even without usage
      else
        level_fs[id] = U == 0 ? std::numeric_limits<long double>::infinity() : S / U;
      s.level_fs = static_cast<double>(level_fs[id]);
    }
  }
  uint32_t users = static_cast<uint32_t>(t.user_count());
  if (users == 0) return;
  FairTreeRanker r{t, l, std::move(level_fs), out, users, users, users};
  r.rank_level(l.fs_children[AssocTree::kRoot], false);
}

// ---- classic ----

double classic_factor(double effective_usage, double norm_shares, uint32_t dampening) {
  if (norm_shares <= 0) return 0;
  return std::pow(2.0, -((effective_usage / norm_shares) / dampening));
}

void compute_classic(const AssocTree& t, const FsLinks& l, const FairShareOptions& opt,
                     std::vector<ShareInfo>& out) {
  const std::vector<AssocId> order = preorder(t);
  // Normalised shares: the product of shares / level shares up to the root, skipping
  // FairShare=parent levels; a "parent" association takes its fair-share parent's.
  for (AssocId id : order) {
    const Association& a = t.at(id);
    ShareInfo& s = out[id];
    s.raw_usage = a.raw_usage;
    if (id == AssocTree::kRoot) {
      s.norm_shares = 1;
      s.effective_usage = 1;
      continue;
    }
    s.norm_usage = norm_usage_of(t, id);
    if (a.shares.parent) {
      s.norm_shares = out[l.fs_parent[id]].norm_shares;
      continue;
    }
    double ns = 1;
    for (AssocId x = id; x != AssocTree::kRoot; x = t.at(x).parent) {
      if (t.at(x).shares.parent) continue;
      if (l.level_shares[x] == 0)
        ns = 0;
      else
        ns *= static_cast<double>(t.at(x).shares.value) / static_cast<double>(l.level_shares[x]);
    }
    s.norm_shares = ns;
  }
  // Effective usage, top down.
  for (AssocId id : order) {
    if (id == AssocTree::kRoot) continue;
    const Association& a = t.at(id);
    ShareInfo& s = out[id];
    const AssocId p = l.fs_parent[id];
    const long double ua = *s.norm_usage;
    if (p == AssocTree::kRoot) {
      s.effective_usage = static_cast<double>(ua);
    } else if (a.shares.parent) {
      s.effective_usage = out[p].effective_usage;
    } else if (opt.depth_oblivious) {
      // R = ratio_p * ratio_l^k, with k pulling R back toward 1 when the parent's ratio and the
      // association's local ratio point different ways; U_E = R * S.
      const ShareInfo& ps = out[p];
      if (s.norm_shares != 0 && ps.norm_shares != 0 && ps.effective_usage != 0 && ua != 0) {
        long double ratio_p = ps.effective_usage / ps.norm_shares;
        long double ratio_s = 0;
        for (AssocId sib : l.fs_children[p])
          if (!t.at(sib).shares.parent) ratio_s += *out[sib].norm_usage;
        ratio_s /= ps.norm_shares;
        long double ratio_l = (ua / s.norm_shares) / ratio_s;
        long double k = 1;
        if (ratio_p != 0 && ratio_l != 0 && std::log(ratio_p) * std::log(ratio_l) < 0) {
          long double f = 5.0L * std::log(ratio_p);
          k = 1 / (1 + f * f);
        }
        s.effective_usage = static_cast<double>(ratio_p * std::pow(ratio_l, k) * s.norm_shares);
      } else {
        s.effective_usage = static_cast<double>(ua);
      }
    } else if (l.level_shares[id] == 0) {
      s.effective_usage = out[p].effective_usage;
    } else {
      long double ue_parent = out[p].effective_usage;
      s.effective_usage = static_cast<double>(
          ua + (ue_parent - ua) * (static_cast<long double>(a.shares.value) / l.level_shares[id]));
    }
  }
  for (AssocId id : order)
    out[id].fairshare =
        classic_factor(out[id].effective_usage, out[id].norm_shares, opt.dampening_factor);
}

// ---- sshare field rendering (print_fields.c) ----

struct Col {
  std::string name;
  int len;  // negative: left-justified
};

// snprintf into a string of whatever size it takes (-o widths are the user's).
template <typename... Args>
std::string sprintf_str(const char* spec, Args... args) {
  int n = std::snprintf(nullptr, 0, spec, args...);
  std::string out(static_cast<std::size_t>(std::max(n, 0)) + 1, '\0');
  std::snprintf(out.data(), out.size(), spec, args...);
  out.resize(static_cast<std::size_t>(std::max(n, 0)));
  return out;
}

// A string cell: cut to the width with a '+' in the last place; null prints as blank.
std::string cell_str(const Col& c, const std::optional<std::string>& v, const SshareOptions& o,
                     bool last) {
  if (o.parsable || o.parsable2) {
    std::string s = v.value_or("");
    return (o.parsable2 && last) ? s : s + "|";
  }
  int w = std::abs(c.len);
  std::string s = v ? *v : " ";
  if (v && s.size() > static_cast<std::size_t>(w)) {
    s.resize(w);
    if (w > 0) s[w - 1] = '+';
  }
  return sprintf_str(c.len >= 0 ? "%*.*s " : "%-*.*s ", w, w, s.c_str());
}

std::string cell_blank(const Col& c, const SshareOptions& o, bool last) {
  if (o.parsable || o.parsable2) return (o.parsable2 && last) ? "" : "|";
  return sprintf_str("%*s ", c.len, " ");
}

std::string cell_uint(const Col& c, uint64_t v, const SshareOptions& o, bool last) {
  const auto n = static_cast<unsigned long long>(v);
  if (o.parsable || o.parsable2) return sprintf_str((o.parsable2 && last) ? "%llu" : "%llu|", n);
  int w = std::abs(c.len);
  return sprintf_str(c.len >= 0 ? "%*llu " : "%-*llu ", w, n);
}

// Doubles print as %f in the width; when that is too wide, as %e with as many digits as fit.
std::string cell_double(const Col& c, double v, const SshareOptions& o, bool last) {
  if (o.parsable || o.parsable2) return sprintf_str((o.parsable2 && last) ? "%f" : "%f|", v);
  int w = std::abs(c.len);
  const std::string plain = sprintf_str("%*f", w, v);
  if (static_cast<int>(plain.size()) > w) {
    const int e_length = static_cast<int>(sprintf_str("%*.*e", w, w, v).size());
    if (e_length > w) w -= e_length - w;
    return sprintf_str(c.len >= 0 ? "%*.*e " : "%-*.*e ", w, w, v);
  }
  return sprintf_str(c.len >= 0 ? "%*f " : "%-*f ", w, v);
}

// sshare's field table: names, default widths, in the order -o prefixes are matched.
struct ColumnDef {
  SshareColumn column;
  const char* name;
  int len;
};
constexpr ColumnDef kColumns[] = {
    {SshareColumn::Account, "Account", -20},
    {SshareColumn::Cluster, "Cluster", 10},
    {SshareColumn::EffectvUsage, "EffectvUsage", 13},
    {SshareColumn::FairShare, "FairShare", 10},
    {SshareColumn::GrpTRESMins, "GrpTRESMins", 30},
    {SshareColumn::GrpTRESRaw, "GrpTRESRaw", 30},
    {SshareColumn::ID, "ID", 6},
    {SshareColumn::LevelFS, "LevelFS", 10},
    {SshareColumn::NormShares, "NormShares", 11},
    {SshareColumn::NormUsage, "NormUsage", 11},
    {SshareColumn::Partition, "Partition", 12},
    {SshareColumn::RawShares, "RawShares", 10},
    {SshareColumn::RawUsage, "RawUsage", 11},
    {SshareColumn::TRESRunMins, "TRESRunMins", 30},
    {SshareColumn::User, "User", 10},
};

const ColumnDef& column_def(SshareColumn c) {
  for (const ColumnDef& d : kColumns)
    if (d.column == c) return d;
  return kColumns[0];
}

}  // namespace

RawShares parse_raw_shares(std::string_view text) {
  if (core::iequals(text, "parent")) return RawShares{1, true};
  uint64_t v = 0;
  bool ok = !text.empty() && text.size() <= 10;
  for (char ch : text) {
    if (ch < '0' || ch > '9') ok = false;
    if (ok) v = v * 10 + static_cast<uint64_t>(ch - '0');
  }
  if (!ok || v > kMaxShares)
    throw core::ParseError("Fairshare=" + std::string(text) +
                           ": expected a number of shares (0-2147483646) or 'parent'");
  return RawShares{static_cast<uint32_t>(v), false};
}

AssocTree::AssocTree(int64_t usage_time) : usage_time_(usage_time) {
  Association root;
  root.account = "root";
  root.parent = kRoot;
  assocs_.push_back(std::move(root));
  accounts_.emplace("root", kRoot);
}

AssocId AssocTree::add_account(std::string_view name, std::string_view parent, RawShares shares) {
  if (name.empty()) throw std::invalid_argument("account name is empty");
  if (find_account(name)) throw std::invalid_argument("account " + std::string(name) + " exists");
  auto p = find_account(parent);
  if (!p) throw std::invalid_argument("no parent account " + std::string(parent));
  Association a;
  a.account = std::string(name);
  a.parent = *p;
  a.shares = shares;
  AssocId id = static_cast<AssocId>(assocs_.size());
  assocs_.push_back(std::move(a));
  assocs_[*p].children.push_back(id);
  accounts_.emplace(std::string(name), id);
  return id;
}

AssocId AssocTree::add_user(std::string_view user, std::string_view account, RawShares shares) {
  if (user.empty()) throw std::invalid_argument("user name is empty");
  auto p = find_account(account);
  if (!p) throw std::invalid_argument("no account " + std::string(account));
  if (find_user(user, account))
    throw std::invalid_argument("user " + std::string(user) + " is already in account " +
                                std::string(account));
  Association a;
  a.account = std::string(account);
  a.user = std::string(user);
  a.parent = *p;
  a.shares = shares;
  AssocId id = static_cast<AssocId>(assocs_.size());
  assocs_.push_back(std::move(a));
  assocs_[*p].children.push_back(id);
  users_.emplace(std::make_pair(std::string(user), std::string(account)), id);
  ++user_count_;
  return id;
}

std::optional<AssocId> AssocTree::find_account(std::string_view name) const {
  auto it = accounts_.find(name);
  if (it == accounts_.end()) return std::nullopt;
  return it->second;
}

std::optional<AssocId> AssocTree::find_user(std::string_view user, std::string_view account) const {
  auto it = users_.find({std::string(user), std::string(account)});
  if (it == users_.end()) return std::nullopt;
  return it->second;
}

double decay_factor(int64_t seconds, int64_t half_life_s) {
  if (half_life_s <= 0 || seconds <= 0) return 1.0;
  return std::exp2(-static_cast<double>(seconds) / static_cast<double>(half_life_s));
}

void AssocTree::decay_to(int64_t now, int64_t half_life_s) {
  if (now <= usage_time_) return;
  const double d = decay_factor(now - usage_time_, half_life_s);
  if (d != 1.0)
    for (auto& a : assocs_) a.raw_usage *= d;
  usage_time_ = now;
}

void AssocTree::add_usage(AssocId id, double billing_seconds) {
  for (AssocId x = id;; x = assocs_.at(x).parent) {
    assocs_.at(x).raw_usage += billing_seconds;
    if (x == kRoot) break;
  }
}

void AssocTree::add_running_usage(AssocId id, int64_t t0, int64_t t1, double billing_rate,
                                  int64_t half_life_s) {
  if (t0 > t1 || t1 > usage_time_)
    throw std::invalid_argument("usage interval must end by the tree's usage time");
  double amount;
  if (half_life_s <= 0) {
    amount = billing_rate * static_cast<double>(t1 - t0);
  } else {
    // rate * H/ln2 * (2^(-(T - t1)/H) - 2^(-(T - t0)/H)), written with expm1 so short intervals
    // keep their precision.
    const double h = static_cast<double>(half_life_s);
    const double ln2 = std::log(2.0);
    const double end_weight = std::exp2(-static_cast<double>(usage_time_ - t1) / h);
    amount = billing_rate * (h / ln2) * end_weight *
             -std::expm1(-static_cast<double>(t1 - t0) * ln2 / h);
  }
  add_usage(id, amount);
}

void AssocTree::reset_usage() {
  for (auto& a : assocs_) a.raw_usage = 0;
}

FairShareOptions fairshare_options(const PriorityConfig& conf) {
  FairShareOptions o;
  o.fair_tree = conf.fair_tree();
  o.depth_oblivious = conf.flags.depth_oblivious;
  o.dampening_factor = conf.fairshare_dampening_factor;
  return o;
}

std::vector<ShareInfo> compute_fairshare(const AssocTree& tree, const FairShareOptions& opt) {
  std::vector<ShareInfo> out(tree.size());
  const FsLinks links = fs_links(tree);
  if (opt.fair_tree)
    compute_fair_tree(tree, links, out);
  else
    compute_classic(tree, links, opt, out);
  return out;
}

double job_fairshare_factor(const AssocTree& tree, const std::vector<ShareInfo>& shares, AssocId id,
                            const FairShareOptions& opt) {
  const ShareInfo& s = shares.at(id);
  if (opt.fair_tree) return s.fairshare.value_or(0.0);
  if (tree.at(id).shares.parent) {
    // The job uses the values of the association whose shares it borrows.
    AssocId p = tree.at(id).parent;
    while (p != AssocTree::kRoot && tree.at(p).shares.parent) p = tree.at(p).parent;
    return classic_factor(shares.at(p).effective_usage, shares.at(p).norm_shares,
                          opt.dampening_factor);
  }
  return classic_factor(s.effective_usage, s.norm_shares, opt.dampening_factor);
}

double billable_tres(const std::map<std::string, double>& tres,
                     const std::map<std::string, double>& billing_weights, bool max_tres) {
  if (billing_weights.empty()) {
    auto it = tres.find("cpu");
    return it == tres.end() ? 0.0 : it->second;
  }
  double node = 0, global = 0;
  for (const auto& [name, count] : tres) {
    if (name == "billing") continue;
    auto w = billing_weights.find(name);
    double v = count * (w == billing_weights.end() ? 0.0 : w->second);
    bool node_tres =
        name == "cpu" || name == "mem" || name == "node" || name.rfind("gres/", 0) == 0;
    if (max_tres && node_tres)
      node = std::max(node, v);
    else
      global += v;
  }
  return node + global;
}

std::vector<SshareRow> sshare_rows(const AssocTree& tree, const std::vector<ShareInfo>& shares) {
  std::vector<SshareRow> rows;
  struct Item {
    AssocId id;
    int depth;
  };
  std::vector<Item> stack{{AssocTree::kRoot, 0}};
  while (!stack.empty()) {
    Item it = stack.back();
    stack.pop_back();
    const Association& a = tree.at(it.id);
    const ShareInfo& s = shares.at(it.id);
    SshareRow r;
    r.depth = it.depth;
    r.account = a.account;
    r.user = a.user;
    r.id = it.id;
    if (it.id != AssocTree::kRoot) r.parent = a.is_user() ? a.account : tree.at(a.parent).account;
    if (it.id != AssocTree::kRoot) r.raw_shares = a.shares;
    r.norm_shares = s.norm_shares;
    // Shown truncated to an integer, as Slurm hands it to sshare.
    r.raw_usage = s.raw_usage <= 0        ? 0
                  : s.raw_usage >= 1.8e19 ? UINT64_MAX
                                          : static_cast<uint64_t>(s.raw_usage);
    r.norm_usage = s.norm_usage;
    r.effective_usage = s.effective_usage;
    r.fairshare = s.fairshare;
    r.level_fs = s.level_fs;
    rows.push_back(std::move(r));
    // Users first, then accounts, each by name; pushed in reverse to pop in order.
    std::vector<AssocId> kids = a.children;
    std::sort(kids.begin(), kids.end(), [&](AssocId x, AssocId y) {
      const Association &ax = tree.at(x), &ay = tree.at(y);
      if (ax.is_user() != ay.is_user()) return ax.is_user();
      return (ax.is_user() ? ax.user : ax.account) < (ay.is_user() ? ay.user : ay.account);
    });
    for (auto k = kids.rbegin(); k != kids.rend(); ++k) stack.push_back({*k, it.depth + 1});
  }
  return rows;
}

void sshare_print_depths(std::vector<SshareRow>& rows) {
  // The accounts printed so far with their depth (sshare's print tree).
  std::vector<std::pair<std::string, int>> printed;
  for (SshareRow& r : rows) {
    const bool has_parent = !r.parent.empty();
    const std::pair<std::string, int>* parent = nullptr;
    const std::pair<std::string, int>* same = nullptr;
    for (const auto& e : printed) {
      if (r.user.empty() && e.first == r.account) {
        same = &e;
        break;
      }
      if (has_parent && e.first == r.parent) parent = &e;
    }
    if (same && has_parent) {
      r.depth = same->second;
      continue;
    }
    r.depth = parent ? parent->second + 1 : 0;
    if (r.user.empty()) printed.emplace_back(r.account, r.depth);
  }
}

std::vector<std::string> sshare_field_names() {
  std::vector<std::string> out;
  for (const ColumnDef& d : kColumns) out.emplace_back(d.name);
  return out;
}

std::vector<SshareField> parse_sshare_fields(std::string_view list) {
  std::vector<SshareField> out;
  std::vector<std::string> seen;
  for (const std::string& item : core::split_list(list, ',')) {
    if (item.empty()) continue;
    bool repeated = false;
    for (const std::string& s : seen) repeated = repeated || core::iequals(s, item);
    if (repeated) continue;
    seen.push_back(item);
    std::string name = item;
    int width = 0;
    if (auto pct = item.find('%'); pct != std::string::npos) {
      name = item.substr(0, pct);
      width = std::atoi(item.c_str() + pct + 1);
    }
    const ColumnDef* def = nullptr;
    for (const ColumnDef& d : kColumns) {
      const std::string_view full = d.name;
      if (name.size() <= full.size() && core::iequals(full.substr(0, name.size()), name)) {
        def = &d;
        break;
      }
    }
    if (!def) throw core::ParseError("Invalid field requested: \"" + name + "\"");
    out.push_back({def->column, width != 0 ? width : def->len});
  }
  return out;
}

std::vector<SshareField> sshare_default_fields(bool long_format, bool fair_tree, bool partitions) {
  using C = SshareColumn;
  std::vector<C> cols = {C::Account, C::User};
  if (partitions) cols.push_back(C::Partition);
  cols.insert(cols.end(), {C::RawShares, C::NormShares, C::RawUsage});
  if (long_format) cols.push_back(C::NormUsage);
  cols.insert(cols.end(), {C::EffectvUsage, C::FairShare});
  if (long_format) {
    if (fair_tree) cols.push_back(C::LevelFS);
    cols.insert(cols.end(), {C::GrpTRESMins, C::TRESRunMins});
  }
  std::vector<SshareField> out;
  for (C c : cols) out.push_back({c, column_def(c).len});
  return out;
}

std::string format_sshare(const std::vector<SshareRow>& rows,
                          const std::vector<SshareField>& fields, const SshareOptions& opt) {
  std::vector<Col> cols;
  for (const SshareField& f : fields) cols.push_back({column_def(f.column).name, f.len});
  const bool parsable = opt.parsable || opt.parsable2;
  std::string out;
  if (!opt.no_header) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const Col& c = cols[i];
      const bool last = i + 1 == cols.size();
      if (parsable)
        out += (opt.parsable2 && last) ? c.name : c.name + "|";
      else
        out += sprintf_str("%*.*s ", c.len, std::abs(c.len), c.name.c_str());
    }
    out += "\n";
    if (!parsable) {
      for (const Col& c : cols) out += std::string(std::abs(c.len), '-') + " ";
      out += "\n";
    }
  }
  using C = SshareColumn;
  for (const SshareRow& r : rows) {
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const Col& c = cols[i];
      const bool last = i + 1 == cols.size();
      auto dbl = [&](const std::optional<double>& v) {
        return v ? cell_double(c, *v, opt, last) : cell_blank(c, opt, last);
      };
      auto str = [&](const std::string& v) {
        return cell_str(c, v.empty() ? std::nullopt : std::optional<std::string>(v), opt, last);
      };
      switch (fields[i].column) {
        case C::Account:
          out += cell_str(c, std::string(r.depth, ' ') + r.account, opt, last);
          break;
        case C::Cluster:
          out += str(r.cluster);
          break;
        case C::User:
          out += str(r.user);
          break;
        case C::Partition:
          out += str(r.partition);
          break;
        case C::ID:
          out += cell_uint(c, uint64_t{r.id} + 1, opt, last);
          break;
        case C::RawShares:
          if (!r.raw_shares)
            out += cell_blank(c, opt, last);
          else if (r.raw_shares->parent)
            out += cell_str(c, std::string("parent"), opt, last);
          else
            out += cell_uint(c, r.raw_shares->value, opt, last);
          break;
        case C::NormShares:
          out += cell_double(c, r.norm_shares, opt, last);
          break;
        case C::RawUsage:
          out += cell_uint(c, r.raw_usage, opt, last);
          break;
        case C::NormUsage:
          out += dbl(r.norm_usage);
          break;
        case C::EffectvUsage:
          out += dbl(r.effective_usage);
          break;
        case C::FairShare:
          // Fair Tree shows FairShare for users only; a missing value prints as blank either way.
          out += (opt.fair_tree && r.user.empty()) ? cell_str(c, std::nullopt, opt, last)
                                                   : dbl(r.fairshare);
          break;
        case C::LevelFS:
          out += dbl(r.level_fs);
          break;
        case C::GrpTRESMins:
          out += cell_str(c, r.grp_tres_mins, opt, last);
          break;
        case C::GrpTRESRaw:
          out += cell_str(c, r.grp_tres_raw, opt, last);
          break;
        case C::TRESRunMins:
          out += cell_str(c, r.tres_run_mins, opt, last);
          break;
      }
    }
    out += "\n";
  }
  return out;
}

std::string format_sshare(const std::vector<SshareRow>& rows, const SshareOptions& opt) {
  return format_sshare(rows, sshare_default_fields(opt.long_format, opt.fair_tree), opt);
}

}  // namespace drover::sched
