#include "proto/data_parser/values.hpp"

#include <cstring>
#include <sstream>

#include "core/memsize.hpp"

namespace drover::proto::data_parser {

json number(int64_t n) { return {{"set", true}, {"infinite", false}, {"number", n}}; }
json number(double n) { return {{"set", true}, {"infinite", false}, {"number", n}}; }
json unset() { return {{"set", false}, {"infinite", false}, {"number", 0}}; }
json infinite() { return {{"set", false}, {"infinite", true}, {"number", 0}}; }
json time_value(int64_t t) { return t == 0 ? unset() : number(t); }
json limit(int64_t minutes) { return minutes < 0 ? infinite() : number(minutes); }

std::string signal_name(int sig) {
  if (sig <= 0) return "";
  const char* name = ::sigabbrev_np(sig);
  return name ? name : std::to_string(sig);
}

json exit_code(int code, int signal, bool pending) {
  json status = pending ? "PENDING" : signal != 0 ? "SIGNALED" : code != 0 ? "ERROR" : "SUCCESS";
  return {
      {"status", json::array({status})},
      {"return_code", pending || signal != 0 ? unset() : number(int64_t{code})},
      {"signal",
       {{"id", signal != 0 ? number(int64_t{signal}) : unset()}, {"name", signal_name(signal)}}}};
}

json tres_list(const std::string& tres) {
  // Slurm's fixed TRES ids; GRES get theirs from the database, which drover does not have.
  static const std::pair<const char*, int> kIds[] = {{"cpu", 1},  {"mem", 2},     {"energy", 3},
                                                     {"node", 4}, {"billing", 5}, {"fs", 6},
                                                     {"vmem", 7}, {"pages", 8}};
  json out = json::array();
  std::stringstream in(tres);
  std::string item;
  while (std::getline(in, item, ',')) {
    const auto eq = item.find('=');
    if (eq == std::string::npos) continue;
    std::string type = item.substr(0, eq), name;
    if (auto slash = type.find('/'); slash != std::string::npos) {
      name = type.substr(slash + 1);
      type.resize(slash);
    }
    int64_t count = 0;
    const std::string value = item.substr(eq + 1);
    try {
      count = type == "mem" ? core::parse_mem_mb(value) : std::stoll(value);
    } catch (const std::exception&) {
      continue;
    }
    int id = 0;
    for (const auto& [n, i] : kIds)
      if (type == n) id = i;
    out.push_back({{"type", type}, {"name", name}, {"id", id}, {"count", count}});
  }
  return out;
}

json csv(const std::string& text) {
  json out = json::array();
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  return out;
}

std::string str(const json& view, const char* key) {
  auto it = view.find(key);
  if (it == view.end() || it->is_null()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_array()) {
    std::string out;
    for (const auto& v : *it)
      out += (out.empty() ? "" : ",") + (v.is_string() ? v.get<std::string>() : v.dump());
    return out;
  }
  return it->dump();
}

int64_t num(const json& view, const char* key, int64_t dflt) {
  auto it = view.find(key);
  return it != view.end() && it->is_number() ? it->get<int64_t>() : dflt;
}

}  // namespace drover::proto::data_parser
