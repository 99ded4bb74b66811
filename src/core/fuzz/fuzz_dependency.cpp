// libFuzzer entry for --dependency. Checks that parsing succeeds or throws one of Slurm's two
// messages, that the entries are well formed and unique, and that format_dependency_spec parses
// back to the same entries (and format_dependency shows exactly the unsatisfied ones).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <tuple>

#include "core/dependency.hpp"
#include "core/error.hpp"

using namespace drover::core;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  Dependency dep;
  try {
    dep = parse_dependency(in);
  } catch (const ParseError& e) {
    std::string_view what = e.what();
    check(what == "Job dependency problem" ||
          what == "Requested operation not supported on this system");
    return 0;
  }
  check(in.empty() == dep.empty());
  std::set<std::tuple<DepType, uint64_t, uint32_t>> seen;
  for (const auto& e : dep.entries) {
    check(seen.insert({e.type, e.job_id, e.array_task}).second);
    check(e.state == DepState::Unfulfilled);
    if (e.type == DepType::Singleton) {
      check(e.job_id == 0 && e.array_task == kNoArrayTask && e.delay_min == 0);
    } else {
      check(e.job_id >= 1 && e.job_id <= 0xffffffffu);
      check(e.array_task != 0xffffffffu);
      check(e.delay_min >= 0 && e.delay_min <= 0xffffffffu / 60);
    }
  }
  if (dep.entries.size() > 5000) return 0;  // keep iterations fast
  const std::string spec = format_dependency_spec(dep);
  Dependency again = parse_dependency(spec);
  check(again.entries == dep.entries);
  if (dep.entries.size() > 1) check(again.any == dep.any);
  check(format_dependency_spec(again) == spec);
  // Satisfied entries vanish from the display; the others keep their order.
  if (!dep.entries.empty()) {
    Dependency half = dep;
    for (size_t i = 0; i < half.entries.size(); i += 2) half.entries[i].state = DepState::Satisfied;
    Dependency rest = dep;
    rest.entries.clear();
    for (size_t i = 1; i < dep.entries.size(); i += 2) rest.entries.push_back(dep.entries[i]);
    check(format_dependency(half) == format_dependency(rest));
    check(format_dependency(dep, [](uint64_t) { return false; }) == format_dependency(dep));
  }
  return 0;
}
