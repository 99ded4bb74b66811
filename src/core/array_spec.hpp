#pragma once
#include "core/error.hpp"
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace drover::core {

// "Not an array task" in task-id fields.
inline constexpr uint32_t kNoArrayTask = 0xfffffffe;

// A set of job-array task indices kept as stepped ranges, so that `--array=0-999999` costs
// one entry however many tasks it names. Ranges are kept sorted, disjoint and normalised
// (a range whose first == last has step 1), so equal sets compare equal.
class IndexSet {
 public:
  struct Range {
    uint32_t first = 0, last = 0, step = 1;  // first, first+step, ..., last (last is a member)
    bool operator==(const Range&) const = default;
  };

  IndexSet() = default;
  static IndexSet single(uint32_t index);
  // Adds first..last by step (last is rounded down to a member). Overlaps are merged.
  void insert(uint32_t first, uint32_t last, uint32_t step = 1);
  void insert(uint32_t index) { insert(index, index, 1); }
  bool erase(uint32_t index);  // true if it was a member
  uint32_t pop_min();          // precondition: !empty()

  bool empty() const { return ranges_.empty(); }
  uint64_t size() const;
  uint32_t min() const;  // precondition: !empty()
  uint32_t max() const;  // precondition: !empty()
  bool contains(uint32_t index) const;
  const std::vector<Range>& ranges() const { return ranges_; }
  std::vector<uint32_t> to_vector(size_t limit = SIZE_MAX) const;  // ascending, at most limit

  // Slurm's display form of the set, as squeue/scontrol print it inside "36_[...]" and in
  // ArrayTaskId=: "1-3,5,7-15:2" (steps shown the way Slurm 22.05 shows them).
  std::string format() const;
  // Parses the form format() writes (and what --array accepts before any '%'). Throws
  // ParseError("Invalid job array specification") on anything else.
  static IndexSet parse(std::string_view text);

  bool operator==(const IndexSet&) const = default;

 private:
  std::vector<Range> ranges_;
};

// --array=SPEC: "0-15", "0,6,16-32", "0-15:4", "1-7%2" (a '%' limit on simultaneously running
// tasks), combinations thereof.
struct ArraySpec {
  IndexSet tasks;
  uint32_t max_running = 0;  // 0: no limit
};

// Parses --array's value. Every index must be < max_array_size (slurm.conf MaxArraySize,
// default 1001). Throws ParseError with Slurm's wording ("Invalid job array specification"
// for syntax errors; over-size indices get what real Slurm 22.05 prints, see the tests).
ArraySpec parse_array_spec(std::string_view text, uint32_t max_array_size);

// "5-1024%4" / "0-15:4" / "1,3": the remainder of an array as squeue shows it inside
// "36_[...]", with the throttle when there is one.
std::string format_array_spec(const ArraySpec& spec);

// A job reference as scancel/scontrol/squeue -j/--dependency take it: "36", "36_5",
// "36_[1-3,7]", "36_*" (whole array).
struct JobRef {
  uint64_t job_id = 0;
  std::optional<IndexSet> tasks;  // none: the job (or whole array) itself
};
// Throws ParseError("Invalid job id specified") on anything else (the caller adds its own
// prefix, e.g. "scancel: error: Invalid job id 36_x").
JobRef parse_job_ref(std::string_view text);

}  // namespace drover::core
