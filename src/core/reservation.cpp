#include "core/reservation.hpp"

#include <algorithm>
#include <array>
#include <utility>

#include "core/duration.hpp"
#include "core/text.hpp"
#include "core/time_spec.hpp"

namespace drover::core {
namespace {

struct FlagName {
  uint32_t bit;
  const char* name;
  bool user_settable;
};
// Slurm's display order.
constexpr std::array<FlagName, 8> kFlagNames{{
    {kResvMaint, "MAINT", true},
    {kResvFlex, "FLEX", true},
    {kResvOverlap, "OVERLAP", true},
    {kResvIgnoreJobs, "IGNORE_JOBS", true},
    {kResvDaily, "DAILY", true},
    {kResvWeekly, "WEEKLY", true},
    {kResvSpecNodes, "SPEC_NODES", false},
    {kResvAllNodes, "ALL_NODES", false},
}};

// "users=a,b" -> ("users", "a,b", op) where op is '=', '+' (+=) or '-' (-=).
struct Word {
  std::string key, value;
  char op = '=';
};

Word split_word(const std::string& w) {
  const size_t eq = w.find('=');
  if (eq == std::string::npos || eq == 0) throw ParseError("Invalid input: " + w);
  Word out;
  out.key = to_lower(w.substr(0, eq));
  out.value = w.substr(eq + 1);
  if (out.key.back() == '+' || out.key.back() == '-') {
    out.op = out.key.back();
    out.key.pop_back();
  }
  return out;
}

}  // namespace

std::string format_resv_flags(uint32_t flags) {
  std::string out;
  for (const auto& f : kFlagNames)
    if (flags & f.bit) {
      if (!out.empty()) out += ',';
      out += f.name;
    }
  return out;
}

uint32_t parse_resv_flags(std::string_view text) {
  uint32_t flags = 0;
  for (const auto& item : split_list(text, ',')) {
    bool found = false;
    for (const auto& f : kFlagNames)
      if (f.user_settable && iequals(item, f.name)) {
        flags |= f.bit;
        found = true;
      }
    if (!found) throw ParseError("Error parsing flags " + std::string(text) + ".");
  }
  return flags;
}

int64_t Reservation::period() const {
  if (flags & kResvDaily) return 86400;
  if (flags & kResvWeekly) return 7 * 86400;
  return 0;
}

bool Reservation::admits(const std::string& user, const std::string& account) const {
  if (!account.empty() && std::find(accounts.begin(), accounts.end(), account) != accounts.end())
    return true;
  if (users.empty()) return false;
  const bool listed = std::find(users.begin(), users.end(), user) != users.end();
  return users_denied ? !listed : listed;
}

void to_json(nlohmann::json& j, const Reservation& r) {
  j = {{"name", r.name},
       {"start", r.start},
       {"end", r.end},
       {"nodes", r.nodes},
       {"partition", r.partition},
       {"users", r.users},
       {"accounts", r.accounts},
       {"users_denied", r.users_denied},
       {"flags", r.flags}};
}

void from_json(const nlohmann::json& j, Reservation& r) {
  r.name = j.at("name").get<std::string>();
  r.start = j.at("start").get<int64_t>();
  r.end = j.at("end").get<int64_t>();
  r.nodes = j.value("nodes", std::vector<std::string>{});
  r.partition = j.value("partition", "");
  r.users = j.value("users", std::vector<std::string>{});
  r.accounts = j.value("accounts", std::vector<std::string>{});
  r.users_denied = j.value("users_denied", false);
  r.flags = j.value("flags", 0u);
}

void to_json(nlohmann::json& j, const ResvRequest& r) {
  j = nlohmann::json::object();
  j["name"] = r.name;
  if (r.start) j["start"] = *r.start;
  if (r.end) j["end"] = *r.end;
  if (r.duration_min) j["duration_min"] = *r.duration_min;
  if (r.nodes) j["nodes"] = *r.nodes;
  if (r.node_cnt) j["node_cnt"] = *r.node_cnt;
  if (r.partition) j["partition"] = *r.partition;
  if (r.users) j["users"] = *r.users;
  if (r.accounts) j["accounts"] = *r.accounts;
  if (r.flags) j["flags"] = *r.flags;
  j["users_add"] = r.users_add;
  j["users_remove"] = r.users_remove;
  j["accounts_add"] = r.accounts_add;
  j["accounts_remove"] = r.accounts_remove;
  j["flags_add"] = r.flags_add;
  j["flags_remove"] = r.flags_remove;
}

void from_json(const nlohmann::json& j, ResvRequest& r) {
  r.name = j.value("name", "");
  auto opt = [&j](const char* key, auto& out) {
    if (j.contains(key)) out = j.at(key).get<typename std::decay_t<decltype(out)>::value_type>();
  };
  opt("start", r.start);
  opt("end", r.end);
  opt("duration_min", r.duration_min);
  opt("nodes", r.nodes);
  opt("node_cnt", r.node_cnt);
  opt("partition", r.partition);
  opt("users", r.users);
  opt("accounts", r.accounts);
  opt("flags", r.flags);
  r.users_add = j.value("users_add", std::vector<std::string>{});
  r.users_remove = j.value("users_remove", std::vector<std::string>{});
  r.accounts_add = j.value("accounts_add", std::vector<std::string>{});
  r.accounts_remove = j.value("accounts_remove", std::vector<std::string>{});
  r.flags_add = j.value("flags_add", 0u);
  r.flags_remove = j.value("flags_remove", 0u);
}

ResvRequest parse_resv_words(const std::vector<std::string>& words, int64_t now) {
  ResvRequest r;
  for (const auto& text : words) {
    const Word w = split_word(text);
    const bool plain = w.op == '=';
    auto only_plain = [&] {
      if (!plain) throw ParseError("Unknown parameter " + text + ".");
    };
    if (w.key == "reservationname" || w.key == "reservation") {
      only_plain();
      r.name = w.value;
    } else if (w.key == "starttime") {
      only_plain();
      try {
        r.start = parse_time_spec(w.value, now);
      } catch (const ParseError&) {
        throw ParseError("Invalid start time " + text + ".");
      }
    } else if (w.key == "endtime") {
      only_plain();
      try {
        r.end = parse_time_spec(w.value, now);
      } catch (const ParseError&) {
        throw ParseError("Invalid end time " + text + ".");
      }
    } else if (w.key == "duration") {
      only_plain();
      try {
        r.duration_min = parse_time_limit_minutes(w.value);
      } catch (const ParseError&) {
        throw ParseError("Invalid duration " + text + ".");
      }
    } else if (w.key == "nodes") {
      only_plain();
      r.nodes = w.value;
    } else if (w.key == "nodecnt") {
      only_plain();
      try {
        size_t used = 0;
        const int n = std::stoi(w.value, &used);
        if (used != w.value.size() || n < 1) throw ParseError("");
        r.node_cnt = n;
      } catch (const std::exception&) {
        throw ParseError("Invalid node count " + text + ".");
      }
    } else if (w.key == "partitionname" || w.key == "partition") {
      only_plain();
      r.partition = w.value;
    } else if (w.key == "users" || w.key == "user") {
      if (w.op == '=')
        r.users = w.value;
      else
        (w.op == '+' ? r.users_add : r.users_remove) = split_list(w.value, ',');
    } else if (w.key == "accounts" || w.key == "account") {
      if (w.op == '=')
        r.accounts = w.value;
      else
        (w.op == '+' ? r.accounts_add : r.accounts_remove) = split_list(w.value, ',');
    } else if (w.key == "flags") {
      const uint32_t f = parse_resv_flags(w.value);
      if (w.op == '=')
        r.flags = f;
      else
        (w.op == '+' ? r.flags_add : r.flags_remove) |= f;
    } else {
      throw ParseError("Unknown parameter " + text + ".");
    }
  }
  return r;
}

}  // namespace drover::core
