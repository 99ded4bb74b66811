// libFuzzer entry for job references ("36", "36_5", "36_[1-3,7]", "36_*") and scancel's
// comma-separated lists of them. Checks that parsing succeeds or throws the one ParseError, and
// that a reference written back in the canonical form parses to the same reference.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "core/array_spec.hpp"
#include "core/error.hpp"

using drover::core::JobRef;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

std::string write(const JobRef& r) {
  std::string out = std::to_string(r.job_id);
  if (!r.tasks) return out;
  out += "_[";
  bool first = true;
  for (const auto& range : r.tasks->ranges()) {
    for (uint64_t x = range.first; x <= range.last; x += range.step) {
      if (!first) out += ',';
      first = false;
      out += std::to_string(x);
      if (range.step == 1 && range.last != range.first) {
        out += '-' + std::to_string(range.last);
        break;
      }
    }
  }
  return out + "]";
}

void check_ref(const JobRef& r) {
  check(r.job_id >= 1 && r.job_id <= 4294967295u);
  if (r.tasks) {
    check(!r.tasks->empty());
    check(r.tasks->max() < drover::core::kNoArrayTask);
  }
  if (r.tasks && r.tasks->ranges().size() > 2000) return;  // keep iterations fast
  JobRef again = drover::core::parse_job_ref(write(r));
  check(again.job_id == r.job_id && again.tasks == r.tasks);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  try {
    check_ref(drover::core::parse_job_ref(in));
  } catch (const drover::core::ParseError& e) {
    check(std::string_view(e.what()) == "Invalid job id specified");
  }
  try {
    for (const JobRef& r : drover::core::parse_job_ref_list(in)) check_ref(r);
  } catch (const drover::core::ParseError& e) {
    check(std::string_view(e.what()) == "Invalid job id specified");
  }
  return 0;
}
