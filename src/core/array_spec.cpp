#include "core/array_spec.hpp"

#include <algorithm>
#include <limits>

#include "core/error.hpp"

namespace drover::core {

namespace {

using Range = IndexSet::Range;

constexpr const char* kInvalidArray = "Invalid job array specification";
constexpr const char* kInvalidJobId = "Invalid job id specified";
constexpr uint64_t kMaxIndex = std::numeric_limits<uint32_t>::max();

// Work allowed for merging interleaved progressions while parsing one spec (indices visited
// one by one). Only specs whose progressions interleave over about a million indices, such as
// "0-3000000:2,1-3000000:3", get there; real Slurm accepts those, drover refuses them rather
// than spend a second on them. Specs of single or nested progressions cost nothing here.
constexpr uint64_t kParseBudget = uint64_t{1} << 20;

uint64_t count_of(const Range& r) { return (uint64_t{r.last} - r.first) / r.step + 1; }

bool is_c_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// What C's strtol(s + pos, &end, 10) yields on a 64-bit long: leading white space and one
// sign are skipped, the value saturates, and with no digits the value is 0 and `end` is `pos`.
// Slurm parses --array this way, so its quirks ("+1", " 1", "1- 3") are accepted here too.
struct CNumber {
  int64_t value = 0;
  size_t end = 0;
};
CNumber c_strtol(std::string_view s, size_t pos) {
  size_t i = pos;
  while (i < s.size() && is_c_space(s[i])) ++i;
  bool negative = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) negative = s[i++] == '-';
  if (i >= s.size() || !is_digit(s[i])) return {0, pos};
  const uint64_t limit = negative ? uint64_t{1} << 63 : (uint64_t{1} << 63) - 1;
  uint64_t v = 0;
  for (; i < s.size() && is_digit(s[i]); ++i) {
    uint64_t d = static_cast<uint64_t>(s[i] - '0');
    v = (v > (limit - d) / 10) ? limit : v * 10 + d;
  }
  int64_t value = negative ? (v == (uint64_t{1} << 63) ? std::numeric_limits<int64_t>::min()
                                                       : -static_cast<int64_t>(v))
                           : static_cast<int64_t>(v);
  return {value, i};
}

// Appends pieces (each a valid progression, ascending, intervals not overlapping) and joins a
// piece onto the previous one where that is trivially possible. The result need not be in
// IndexSet's normal form; IndexSet::normalize_ makes it so.
class PieceBuilder {
 public:
  explicit PieceBuilder(std::vector<Range>& out) : out_(out) {}
  void add(uint64_t first, uint64_t last, uint64_t step) {
    if (first > last) return;
    if (first == last) step = 1;
    Range r{static_cast<uint32_t>(first), static_cast<uint32_t>(last), static_cast<uint32_t>(step)};
    if (!out_.empty()) {
      Range& p = out_.back();
      if (p.first == p.last) {
        uint64_t gap = uint64_t{r.first} - p.last;
        if (r.first == r.last || gap == r.step) {
          p.last = r.last;
          p.step = static_cast<uint32_t>(r.first == r.last ? gap : r.step);
          return;
        }
      } else if (uint64_t{p.last} + p.step == r.first && (r.first == r.last || r.step == p.step)) {
        p.last = r.last;
        return;
      }
    }
    out_.push_back(r);
  }
  void add(const Range& r) { add(r.first, r.last, r.step); }

 private:
  std::vector<Range>& out_;
};

// Greatest element of r that is <= x (precondition: x >= r.first).
uint64_t floor_member(const Range& r, uint64_t x) {
  uint64_t hi = std::min<uint64_t>(x, r.last);
  return r.first + (hi - r.first) / r.step * r.step;
}
// Least element of r that is >= x (may be past r.last).
uint64_t ceil_member(const Range& r, uint64_t x) {
  if (x <= r.first) return r.first;
  return r.first + (x - r.first + r.step - 1) / r.step * r.step;
}

}  // namespace

// ---- IndexSet ------------------------------------------------------------------------------

IndexSet IndexSet::single(uint32_t index) {
  IndexSet s;
  s.ranges_.push_back({index, index, 1});
  return s;
}

uint64_t IndexSet::size() const {
  uint64_t n = 0;
  for (const auto& r : ranges_) n += count_of(r);
  return n;
}

uint32_t IndexSet::min() const { return ranges_.front().first; }
uint32_t IndexSet::max() const { return ranges_.back().last; }

size_t IndexSet::find_(uint32_t index) const {
  // The last range whose first <= index.
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), index,
                             [](uint32_t v, const Range& r) { return v < r.first; });
  if (it == ranges_.begin()) return ranges_.size();
  size_t i = static_cast<size_t>(it - ranges_.begin()) - 1;
  const Range& r = ranges_[i];
  if (index > r.last || (index - r.first) % r.step != 0) return ranges_.size();
  return i;
}

bool IndexSet::contains(uint32_t index) const { return find_(index) != ranges_.size(); }

std::vector<uint32_t> IndexSet::to_vector(size_t limit) const {
  std::vector<uint32_t> out;
  for (const auto& r : ranges_) {
    for (uint64_t x = r.first; x <= r.last; x += r.step) {
      if (out.size() >= limit) return out;
      out.push_back(static_cast<uint32_t>(x));
    }
  }
  return out;
}

// Normal form: ranges are cut greedily from the smallest element upwards. From element a with
// successor b (step s = b - a) the range takes every following element while the gap stays s.
// A range of step > 1 needs at least three elements; a would-be two-element one leaves a alone
// as a single index and the next range starts at b. Every set has exactly one such form.
//
// normalize_ rewrites ranges_[from..) into normal form, given that ranges_ are valid pieces
// (ascending, intervals disjoint) and ranges_[stable..) were normal ranges of the set before a
// change that touched only elements below ranges_[stable].first. A range's cut depends on at
// most the two elements after its last one, so the caller starts two ranges before the change;
// the walk stops as soon as it begins a range exactly where an unchanged old one begins.
void IndexSet::normalize_(size_t from, size_t stable) {
  if (ranges_.empty() || from >= ranges_.size()) return;
  const std::vector<Range>& v = ranges_;
  struct Cursor {
    size_t i;
    uint64_t x;
  };
  auto next = [&](Cursor& c) {
    if (c.x < v[c.i].last) {
      c.x += v[c.i].step;
      return true;
    }
    if (c.i + 1 >= v.size()) return false;
    ++c.i;
    c.x = v[c.i].first;
    return true;
  };
  std::vector<Range> out;
  Cursor c{from, v[from].first};
  size_t tail = v.size();
  for (;;) {
    if (c.i >= stable && c.x == v[c.i].first) {
      tail = c.i;
      break;
    }
    const uint64_t a = c.x;
    Cursor n = c;
    if (!next(n)) {
      out.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(a), 1});
      break;
    }
    const uint64_t s = n.x - a;
    Cursor last = n;
    bool more = true;
    Cursor after{};
    for (;;) {
      const Range& r = v[last.i];
      if (r.step == s && last.x < r.last) last.x = r.last;
      after = last;
      if (!next(after)) {
        more = false;
        break;
      }
      if (after.x - last.x != s) break;
      last = after;
    }
    const uint64_t k = (last.x - a) / s + 1;
    if (s > 1 && k == 2) {
      out.push_back({static_cast<uint32_t>(a), static_cast<uint32_t>(a), 1});
      c = n;
      continue;
    }
    out.push_back(
        {static_cast<uint32_t>(a), static_cast<uint32_t>(last.x), static_cast<uint32_t>(s)});
    if (!more) break;
    c = after;
  }
  ranges_.erase(ranges_.begin() + static_cast<std::ptrdiff_t>(from),
                ranges_.begin() + static_cast<std::ptrdiff_t>(tail));
  ranges_.insert(ranges_.begin() + static_cast<std::ptrdiff_t>(from), out.begin(), out.end());
}

void IndexSet::insert(uint32_t first, uint32_t last, uint32_t step) {
  uint64_t budget = std::numeric_limits<uint64_t>::max();
  insert_(first, last, step, budget);
}

void IndexSet::insert_(uint32_t first, uint32_t last, uint32_t step, uint64_t& budget) {
  if (last < first) return;
  if (step == 0) step = 1;
  const uint64_t pf = first, ps = step;
  const uint64_t pl = pf + (uint64_t{last} - pf) / ps * ps;
  // Ranges whose interval meets [pf, pl].
  auto lo_it = std::lower_bound(ranges_.begin(), ranges_.end(), pf,
                                [](const Range& r, uint64_t v) { return r.last < v; });
  auto hi_it = std::upper_bound(lo_it, ranges_.end(), pl,
                                [](uint64_t v, const Range& r) { return v < r.first; });
  const size_t lo = static_cast<size_t>(lo_it - ranges_.begin());
  const size_t hi = static_cast<size_t>(hi_it - ranges_.begin());

  std::vector<Range> pieces;
  PieceBuilder out(pieces);
  uint64_t cur = pf;  // next element of the new progression not yet placed
  auto emit_new_upto = [&](uint64_t upto) {
    if (cur > pl || cur > upto) return;
    uint64_t end = cur + (std::min(upto, pl) - cur) / ps * ps;
    out.add(cur, end, ps);
    cur = end + ps;
  };
  for (size_t i = lo; i < hi; ++i) {
    const Range r = ranges_[i];
    if (r.first > 0) emit_new_upto(uint64_t{r.first} - 1);
    if (cur > pl || cur > r.last) {
      out.add(r);
      continue;
    }
    // New elements inside r's interval: cur, cur+ps, ..., seg_end.
    const uint64_t seg_end = cur + (std::min<uint64_t>(pl, r.last) - cur) / ps * ps;
    const bool r_covers = r.step == 1 || (ps % r.step == 0 && (cur - r.first) % r.step == 0);
    if (r_covers) {
      out.add(r);
    } else {
      if (cur > r.first) out.add(r.first, floor_member(r, cur - 1), r.step);
      const uint64_t r_in = ceil_member(r, cur);  // first element of r inside [cur, seg_end]
      const bool new_covers =
          ps == 1 || r_in > seg_end || (r.step % ps == 0 && (r_in - cur) % ps == 0);
      if (new_covers) {
        out.add(cur, seg_end, ps);
      } else if (r.step == ps && ps % 2 == 0 && r_in - cur == ps / 2) {
        out.add(cur, seg_end, ps / 2);  // "0-N:4,2-N:4": the two halves of step 2
      } else {
        uint64_t x = cur, y = r_in;
        const uint64_t y_end = floor_member(r, seg_end);
        while (x <= seg_end || y <= y_end) {
          if (budget == 0) throw ParseError(kInvalidArray);
          --budget;
          uint64_t m = std::min(x <= seg_end ? x : UINT64_MAX, y <= y_end ? y : UINT64_MAX);
          out.add(m, m, 1);
          if (x == m) x += ps;
          if (y == m) y += r.step;
        }
      }
      const uint64_t r_after = ceil_member(r, seg_end + 1);
      if (r_after <= r.last) out.add(r_after, r.last, r.step);
    }
    cur = seg_end + ps;
  }
  emit_new_upto(kMaxIndex);

  ranges_.erase(lo_it, hi_it);
  ranges_.insert(ranges_.begin() + static_cast<std::ptrdiff_t>(lo), pieces.begin(), pieces.end());
  normalize_(lo >= 2 ? lo - 2 : 0, lo + pieces.size());
}

bool IndexSet::erase(uint32_t index) {
  const size_t i = find_(index);
  if (i == ranges_.size()) return false;
  const Range r = ranges_[i];
  std::vector<Range> pieces;
  PieceBuilder out(pieces);
  if (index > r.first) out.add(r.first, uint64_t{index} - r.step, r.step);
  if (index < r.last) out.add(uint64_t{index} + r.step, r.last, r.step);
  ranges_.erase(ranges_.begin() + static_cast<std::ptrdiff_t>(i));
  ranges_.insert(ranges_.begin() + static_cast<std::ptrdiff_t>(i), pieces.begin(), pieces.end());
  normalize_(i >= 2 ? i - 2 : 0, i + pieces.size());
  return true;
}

uint32_t IndexSet::pop_min() {
  const uint32_t m = min();
  erase(m);
  return m;
}

std::string IndexSet::format_(size_t max_chars) const {
  std::string out;
  if (ranges_.empty()) return out;
  // Slurm 22.05 writes a set that is one arithmetic progression with step 2 and 7+ elements,
  // or step 3+ and 6+ elements, as "first-last:step"; everything else as a plain list of
  // consecutive runs ("0,4,8,12", "1-3,5,7,9").
  if (ranges_.size() == 1 && ranges_[0].step > 1) {
    const Range& r = ranges_[0];
    if (count_of(r) >= (r.step == 2 ? 7u : 6u))
      return std::to_string(r.first) + "-" + std::to_string(r.last) + ":" + std::to_string(r.step);
  }
  bool open = false;
  uint64_t run_first = 0, run_last = 0;
  auto flush = [&] {
    if (!open) return;
    if (!out.empty()) out += ',';
    out += std::to_string(run_first);
    if (run_last != run_first) {
      out += '-';
      out += std::to_string(run_last);
    }
    open = false;
  };
  auto add_run = [&](uint64_t a, uint64_t b) {
    if (open && run_last + 1 == a) {
      run_last = b;
      return;
    }
    flush();
    run_first = a;
    run_last = b;
    open = true;
  };
  for (const auto& r : ranges_) {
    if (out.size() > max_chars) break;
    if (r.step == 1) {
      add_run(r.first, r.last);
      continue;
    }
    for (uint64_t x = r.first; x <= r.last && out.size() <= max_chars; x += r.step) add_run(x, x);
  }
  flush();
  return out;
}

std::string IndexSet::format() const { return format_(std::numeric_limits<size_t>::max()); }

std::string IndexSet::format_ranges() const {
  std::string out;
  for (const auto& r : ranges_) {
    if (!out.empty()) out += ',';
    out += std::to_string(r.first);
    if (r.last == r.first) continue;
    out += '-';
    out += std::to_string(r.last);
    if (r.step != 1) {
      out += ':';
      out += std::to_string(r.step);
    }
  }
  return out;
}

// One comma-separated item of an --array spec, up to its end or a '%': N, N-M or N-M:S, each
// number as strtol reads it and optionally followed by ']' (and the item optionally starting
// with '['), as Slurm 22.05 accepts. Indices and the step must be below max_size.
void IndexSet::parse_item_(std::string_view tok, uint64_t max_size, IndexSet& into,
                           uint64_t& budget) {
  size_t p = 0;
  auto at = [&](size_t i) { return i < tok.size() ? tok[i] : '\0'; };
  auto number = [&](size_t from) {
    CNumber n = c_strtol(tok, from);
    p = n.end;
    if (at(p) == ']') ++p;
    return n.value;
  };
  auto done = [&] { return p >= tok.size() || tok[p] == '%'; };
  if (at(p) == '[') ++p;
  const int64_t first = number(p);
  if (first < 0) throw ParseError(kInvalidArray);
  int64_t last = first, step = 1;
  if (at(p) == '-') {
    last = number(p + 1);
    if (at(p) == ':') {
      step = number(p + 1);
      if (step <= 0 || static_cast<uint64_t>(step) >= max_size) throw ParseError(kInvalidArray);
    }
    if (last < first) throw ParseError(kInvalidArray);
  }
  if (!done()) throw ParseError(kInvalidArray);
  if (static_cast<uint64_t>(last) >= max_size) throw ParseError(kInvalidArray);
  into.insert_(static_cast<uint32_t>(first), static_cast<uint32_t>(last),
               static_cast<uint32_t>(step), budget);
}

IndexSet IndexSet::parse(std::string_view text) {
  if (text.find('%') != std::string_view::npos) throw ParseError(kInvalidArray);
  IndexSet s;
  uint64_t budget = kParseBudget;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start) parse_item_(text.substr(start, end - start), kMaxIndex + 1, s, budget);
    start = end + 1;
  }
  return s;
}

// ---- --array -------------------------------------------------------------------------------

ArraySpec parse_array_spec(std::string_view text, uint32_t max_array_size) {
  ArraySpec spec;
  uint64_t budget = kParseBudget;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(',', start);
    if (end == std::string_view::npos) end = text.size();
    if (end > start)
      IndexSet::parse_item_(text.substr(start, end - start), max_array_size, spec.tasks, budget);
    start = end + 1;
  }
  // The throttle is read after the first '%' as strtol does and kept as a C int, so
  // "%4294967298" is 2 and anything that ends up <= 0 means no limit (as in Slurm 22.05).
  if (size_t pct = text.find('%'); pct != std::string_view::npos) {
    int64_t v = c_strtol(text, pct + 1).value;
    auto as_int = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(v)));
    spec.max_running = as_int > 0 ? static_cast<uint32_t>(as_int) : 0;
  }
  return spec;
}

std::string format_array_spec(const ArraySpec& spec) {
  std::string s = spec.tasks.format();
  if (spec.max_running > 0) s += "%" + std::to_string(spec.max_running);
  return s;
}

std::string format_array_spec_display(const ArraySpec& spec) {
  // Slurm 22.05 builds this text in a 64-byte buffer: a task list longer than 61 characters
  // is cut after 60 and "..." appended; the throttle follows either way.
  std::string s = spec.tasks.format_(61);
  if (s.size() > 61) s = s.substr(0, 60) + "...";
  if (spec.max_running > 0) s += "%" + std::to_string(spec.max_running);
  return s;
}

// ---- job references ------------------------------------------------------------------------

namespace {

// Unsigned decimal digits from pos; false if none or the value exceeds max.
bool read_uint(std::string_view s, size_t& pos, uint64_t max, uint64_t& value) {
  size_t i = pos;
  uint64_t v = 0;
  while (i < s.size() && is_digit(s[i])) {
    v = v * 10 + static_cast<uint64_t>(s[i] - '0');
    if (v > max) return false;
    ++i;
  }
  if (i == pos) return false;
  pos = i;
  value = v;
  return true;
}

}  // namespace

JobRef parse_job_ref(std::string_view text) {
  constexpr uint64_t kMaxTask = 0xfffffffd;  // below kNoArrayTask
  JobRef ref;
  size_t p = 0;
  if (!read_uint(text, p, kMaxIndex, ref.job_id) || ref.job_id == 0)
    throw ParseError(kInvalidJobId);
  if (p == text.size()) return ref;
  if (text[p] != '_') throw ParseError(kInvalidJobId);
  ++p;
  if (text.substr(p) == "*") return ref;
  IndexSet tasks;
  uint64_t v = 0;
  if (p < text.size() && text[p] == '[') {
    ++p;
    for (;;) {
      uint64_t first = 0, last = 0;
      if (!read_uint(text, p, kMaxTask, first)) throw ParseError(kInvalidJobId);
      last = first;
      if (p < text.size() && text[p] == '-') {
        ++p;
        if (!read_uint(text, p, kMaxTask, last) || last < first) throw ParseError(kInvalidJobId);
      }
      tasks.insert(static_cast<uint32_t>(first), static_cast<uint32_t>(last));
      if (p < text.size() && text[p] == ',') {
        ++p;
        continue;
      }
      break;
    }
    if (p + 1 != text.size() || text[p] != ']') throw ParseError(kInvalidJobId);
  } else {
    if (!read_uint(text, p, kMaxTask, v) || p != text.size()) throw ParseError(kInvalidJobId);
    tasks.insert(static_cast<uint32_t>(v));
  }
  ref.tasks = std::move(tasks);
  return ref;
}

std::vector<std::string_view> split_job_ref_list(std::string_view text) {
  std::vector<std::string_view> items;
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= text.size(); ++i) {
    if (i < text.size() && text[i] == '[') ++depth;
    if (i < text.size() && text[i] == ']') --depth;
    if (i == text.size() || (text[i] == ',' && depth == 0)) {
      if (i == start) throw ParseError(kInvalidJobId);
      items.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return items;
}

std::vector<JobRef> parse_job_ref_list(std::string_view text) {
  std::vector<JobRef> refs;
  for (std::string_view item : split_job_ref_list(text)) refs.push_back(parse_job_ref(item));
  return refs;
}

}  // namespace drover::core
