// libFuzzer entry for --array specs and IndexSet. The first byte picks MaxArraySize (Slurm's
// default 1001, its maximum 4000001, or no practical limit); the rest is the spec. Checks that
// parsing succeeds or throws ParseError quickly, that the set is in normal form, that
// format/parse round-trip, that the display form is the full form or its 60-character cut, and
// that insert/erase/pop_min driven by the same bytes agree with a std::set model.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/array_spec.hpp"
#include "core/error.hpp"

using drover::core::ArraySpec;
using drover::core::IndexSet;

namespace {

void check(bool ok) {
  if (!ok) std::abort();
}

// The normal form from scratch: greedy from the smallest element, step > 1 runs need three.
std::vector<IndexSet::Range> reference_form(const std::vector<uint32_t>& xs) {
  std::vector<IndexSet::Range> out;
  size_t i = 0;
  while (i < xs.size()) {
    if (i + 1 == xs.size()) {
      out.push_back({xs[i], xs[i], 1});
      break;
    }
    uint32_t s = xs[i + 1] - xs[i];
    size_t j = i + 1;
    while (j + 1 < xs.size() && xs[j + 1] - xs[j] == s) ++j;
    if (s > 1 && j == i + 1) {
      out.push_back({xs[i], xs[i], 1});
      ++i;
      continue;
    }
    out.push_back({xs[i], xs[j], s});
    i = j + 1;
  }
  return out;
}

void check_set(const IndexSet& s) {
  uint64_t n = 0;
  for (const auto& r : s.ranges()) {
    check(r.step >= 1 && r.first <= r.last && (r.last - r.first) % r.step == 0);
    check((r.first == r.last) == (r.step == 1 && r.first == r.last));
    n += (uint64_t{r.last} - r.first) / r.step + 1;
  }
  check(n == s.size());
  check(s.empty() == (n == 0));
  if (n > 0) check(s.min() == s.ranges().front().first && s.max() == s.ranges().back().last);
  if (n <= 20000) {
    std::vector<uint32_t> xs = s.to_vector();
    check(xs.size() == n);
    check(s.ranges() == reference_form(xs));
    for (uint32_t x : xs) check(s.contains(x));
  }
  if (s.ranges().size() <= 20000) check(IndexSet::parse(s.format_ranges()) == s);
  // What format() writes parses back to the same set (bounded: it lists every index).
  if (s.size() <= 20000 || s.ranges().size() == 1) check(IndexSet::parse(s.format()) == s);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  static constexpr uint32_t kMax[] = {1001, 4000001, 4294967295u};
  const uint32_t max_size = kMax[data[0] % 3];
  std::string_view in(reinterpret_cast<const char*>(data + 1), size - 1);

  ArraySpec spec;
  try {
    spec = drover::core::parse_array_spec(in, max_size);
  } catch (const drover::core::ParseError& e) {
    check(std::string_view(e.what()) == "Invalid job array specification");
    spec = {};
  }
  check_set(spec.tasks);
  if (!spec.tasks.empty()) check(spec.tasks.max() < max_size);
  check(spec.max_running <= 2147483647u);
  if (spec.tasks.size() <= 20000 || spec.tasks.ranges().size() == 1) {
    std::string shown = drover::core::format_array_spec(spec);
    ArraySpec again = drover::core::parse_array_spec(shown, max_size);
    check(again.tasks == spec.tasks && again.max_running == spec.max_running);
    std::string display = drover::core::format_array_spec_display(spec);
    std::string suffix = spec.max_running ? "%" + std::to_string(spec.max_running) : "";
    std::string full = spec.tasks.format();
    if (full.size() <= 61)
      check(display == shown);
    else
      check(display == full.substr(0, 60) + "..." + suffix);
  }
  try {
    check_set(IndexSet::parse(in));
  } catch (const drover::core::ParseError&) {
  }

  // The same bytes as operations on a small model.
  IndexSet s;
  std::set<uint32_t> model;
  for (size_t i = 1; i + 3 < size; i += 4) {
    const uint32_t a = data[i + 1] % 64, b = data[i + 2] % 64, step = 1 + data[i + 3] % 9;
    switch (data[i] % 3) {
      case 0:
        s.insert(std::min(a, b), std::max(a, b), step);
        for (uint32_t x = std::min(a, b); x <= std::max(a, b); x += step) model.insert(x);
        break;
      case 1:
        check(s.erase(a) == (model.erase(a) == 1));
        break;
      case 2:
        if (!model.empty()) {
          check(s.pop_min() == *model.begin());
          model.erase(model.begin());
        }
        break;
    }
    check(s.to_vector() == std::vector<uint32_t>(model.begin(), model.end()));
    check_set(s);
  }
  return 0;
}
