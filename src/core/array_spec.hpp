#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace drover::core {

// "Not an array task" in task-id fields.
inline constexpr uint32_t kNoArrayTask = 0xfffffffe;

struct ArraySpec;

// A set of job-array task indices kept as stepped ranges, so that `--array=0-999999` costs
// one entry however many tasks it names. Ranges are kept sorted, disjoint and normalised
// (a range whose first == last has step 1), so equal sets compare equal. The normal form is
// cut greedily from the smallest index: a range takes every following index while the gap
// stays the same, and a range of step > 1 needs three indices ({0,500} is two single ones).
// insert/erase/pop_min only rework the ranges next to the change: O(log n + ranges moved).
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
  // ArrayTaskId=, untruncated (see format_array_spec_display for the cut Slurm applies).
  // Slurm 22.05 writes a set that is one arithmetic progression of step 2 with 7 or more
  // elements, or of step 3+ with 6 or more, as "0-12:2" / "0-20:4"; every other set as a list
  // of consecutive runs: "0,4,8,12", "1-3,5,7,9,11,13,15" (checked against Slurm 22.05).
  // The empty set formats as "".
  std::string format() const;
  // Compact and lossless: the normal ranges as "a", "a-b" or "a-b:s", joined by ','
  // ("0-499998:2,500002-999998:2"). Its length grows with ranges().size(), not with size(),
  // so use it (not format()) to store or send a set; parse() reads it back.
  std::string format_ranges() const;
  // Parses the forms format() and format_ranges() write (and what --array accepts before any
  // '%', with the same leniency). "" and "," give the empty set. Throws
  // ParseError("Invalid job array specification") on anything else.
  static IndexSet parse(std::string_view text);

  bool operator==(const IndexSet&) const = default;

 private:
  friend ArraySpec parse_array_spec(std::string_view text, uint32_t max_array_size);
  friend std::string format_array_spec_display(const ArraySpec& spec);
  // Adds one comma-separated --array item (see parse_array_spec).
  static void parse_item_(std::string_view item, uint64_t max_size, IndexSet& into,
                          uint64_t& budget);
  size_t find_(uint32_t index) const;  // index of the range holding index, or ranges_.size()
  void insert_(uint32_t first, uint32_t last, uint32_t step, uint64_t& budget);
  void normalize_(size_t from, size_t stable);
  std::string format_(size_t max_chars) const;  // stops once longer than max_chars

  std::vector<Range> ranges_;
};

// --array=SPEC: "0-15", "0,6,16-32", "0-15:4", "1-7%2" (a '%' limit on simultaneously running
// tasks), combinations thereof.
struct ArraySpec {
  IndexSet tasks;
  uint32_t max_running = 0;  // 0: no limit
};

// Parses --array's value as slurmctld 22.05 does (sbatch itself checks nothing): items split at
// ',' (empty items skipped), each "N", "N-M" or "N-M:S" read like C's strtol (so " 1", "+1",
// "1- 3" pass) up to its end or a '%'; the throttle is read after the first '%' ("%0", "%x" and
// negative values mean none). Every index and the step must be < max_array_size (slurm.conf
// MaxArraySize, default 1001). A spec naming no index at all ("", ",") gives empty `tasks`:
// Slurm then submits an ordinary, non-array job. Drover also refuses specs whose progressions
// interleave over about a million indices ("0-3000000:2,1-3000000:3"). Every error throws
// ParseError("Invalid job array specification") (sbatch prints "sbatch: error: Batch job
// submission failed: Invalid job array specification", exit 1).
ArraySpec parse_array_spec(std::string_view text, uint32_t max_array_size);

// "5-1024%4" / "0,4,8,12" / "1,3": tasks.format() plus "%N" when there is a throttle.
// Untruncated, so parse_array_spec(format_array_spec(s)) == s.
std::string format_array_spec(const ArraySpec& spec);
// What scontrol prints after ArrayTaskId= and squeue for %K (and inside "36_[...]" for %i):
// format_array_spec, except that a task list longer than 61 characters is cut to its first 60
// followed by "..." before the "%N" ("1,4,7,...,58,61,...%5"). squeue's %i then cuts
// "36_[...]" to its first 31 characters (checked against Slurm 22.05).
std::string format_array_spec_display(const ArraySpec& spec);

// A job reference as scancel/scontrol/squeue -j/--dependency take it: "36", "36_5",
// "36_[1-3,7]", "36_*" (whole array).
struct JobRef {
  uint64_t job_id = 0;
  std::optional<IndexSet> tasks;  // none: the job (or whole array) itself
};
// "36_*" gives no tasks (the whole array). Task lists are "N" or "N-M" items without steps or
// white space. Throws ParseError("Invalid job id specified") on anything else (the caller adds
// its own prefix, e.g. "scancel: error: Invalid job id 36_x").
JobRef parse_job_ref(std::string_view text);
// scancel's argument form: refs separated by ',' outside brackets ("36_4,37" = "36_4" and
// "37"; "36_[1,3]" is one ref).
std::vector<JobRef> parse_job_ref_list(std::string_view text);
// The same split, item texts only (views into `text`); throws on an empty item.
std::vector<std::string_view> split_job_ref_list(std::string_view text);

}  // namespace drover::core
