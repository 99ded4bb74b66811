#include "core/time_spec.hpp"

#include <algorithm>
#include <ctime>
#include <limits>
#include <optional>
#include <string>

#include "core/text.hpp"

namespace drover::core {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r';
}

int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return b > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
  return r;
}

struct Unit {
  std::string_view name;
  int64_t seconds;
};
// Longer names first: the first that prefixes the text wins.
constexpr Unit kUnits[] = {{"seconds", 1},    {"second", 1},   {"minutes", 60}, {"minute", 60},
                           {"hours", 3600},   {"hour", 3600},  {"days", 86400}, {"day", 86400},
                           {"weeks", 604800}, {"week", 604800}};

// One left-to-right pass in the manner of Slurm 22.05's parser: every component overrides the
// date or the time of day set so far; the error positions are the ones Slurm prints.
class TimeParser {
 public:
  TimeParser(std::string_view text, int64_t now) : s_(text), now_(now) {}

  int64_t parse() {
    base_ = local(now_, 0);
    year_ = base_.tm_year + 1900;
    mon_ = base_.tm_mon + 1;
    mday_ = base_.tm_mday;
    size_t p = 0;
    while (p < s_.size()) {
      const char c = s_[p];
      if (is_space(c) || c == 'T' || c == '-') {
        ++p;
      } else if (keyword(p, "now")) {
        if (p != 0) fail(now_not_first(p));
        p = parse_now();
      } else if (keyword(p, "today")) {
        set_date(p, base_.tm_year + 1900, base_.tm_mon + 1, base_.tm_mday);
        p += 5;
      } else if (keyword(p, "tomorrow")) {
        set_date(p, base_.tm_year + 1900, base_.tm_mon + 1, base_.tm_mday + 1);
        p += 8;
      } else if (keyword(p, "midnight")) {
        set_time(p, 0, 0, 0);
        p += 8;
      } else if (keyword(p, "noon")) {
        set_time(p, 12, 0, 0);
        p += 4;
      } else if (keyword(p, "fika")) {
        set_time(p, 15, 0, 0);
        p += 4;
      } else if (keyword(p, "teatime")) {
        set_time(p, 16, 0, 0);
        p += 7;
      } else if (is_digit(c)) {
        p = (at(p + 1) == ':' || at(p + 2) == ':') ? parse_clock(p) : parse_date(p);
      } else {
        fail(static_cast<int64_t>(p));
      }
    }
    // Blank input, or only 'T' / '-': Slurm's parser returns 0 and prints nothing itself.
    if (!any_) throw ParseError("");
    if (now_only_) return now_value_;
    std::tm t{};
    t.tm_year = year_ - 1900;
    t.tm_mon = mon_ - 1;
    t.tm_mday = mday_;
    t.tm_hour = time_set_ ? hour_ : 0;
    t.tm_min = time_set_ ? min_ : 0;
    t.tm_sec = time_set_ ? sec_ : 0;
    int64_t r = make(t);
    // A time of day alone that is not in the future means tomorrow; a date without a year
    // that is not in the future means next year (checked: both roll over when equal to now).
    if (!date_set_ && r <= now_) {
      t.tm_mday += 1;
      r = make(t);
    } else if (date_set_ && !year_set_ && r <= now_) {
      t.tm_year += 1;
      r = make(t);
    }
    return r;
  }

 private:
  [[noreturn]] void fail(int64_t pos) const {
    throw ParseError("Invalid time specification (pos=" + std::to_string(pos) +
                     "): " + std::string(s_));
  }
  char at(size_t i) const { return i < s_.size() ? s_[i] : '\0'; }
  bool keyword(size_t p, std::string_view word) const {
    return p + word.size() <= s_.size() && iequals(s_.substr(p, word.size()), word);
  }
  int digits(size_t from, size_t to) const {  // inclusive
    int v = 0;
    for (size_t i = from; i <= to; ++i) v = v * 10 + (s_[i] - '0');
    return v;
  }
  std::tm local(int64_t t, size_t pos) const {
    std::tm out{};
    auto tt = static_cast<time_t>(t);
    if (localtime_r(&tt, &out) == nullptr) fail(static_cast<int64_t>(pos));
    return out;
  }
  static int64_t make(std::tm t) {
    t.tm_isdst = -1;
    return static_cast<int64_t>(std::mktime(&t));
  }

  // "now" anywhere but at the very start. Slurm 22.05 mis-indexes this case: it reads the
  // rest at twice the offset, past the end of the string when that is short, so its result
  // depends on memory beyond the argument ("noon now+1hour12" even passes, as now+12s).
  // Drover refuses it, with the position Slurm prints whenever its read stays inside the text.
  static int64_t now_not_first(size_t p) { return static_cast<int64_t>(2 * p + 3); }

  // A later component changes a date/time that "now..." gave: break it down first.
  void leave_now(size_t pos) {
    if (!now_only_) return;
    now_only_ = false;
    std::tm t = local(now_value_, pos);
    year_ = t.tm_year + 1900;
    mon_ = t.tm_mon + 1;
    mday_ = t.tm_mday;
    hour_ = t.tm_hour;
    min_ = t.tm_min;
    sec_ = t.tm_sec;
  }
  // A date without a year keeps the year (and whether one was given) from before:
  // "12/01/25 12/05" is 2025-12-05, "today 11/20" does not move to next year.
  void set_date(size_t pos, std::optional<int> year, int mon, int mday) {
    leave_now(pos);
    any_ = date_set_ = true;
    if (year) {
      year_ = *year;
      year_set_ = true;
    }
    mon_ = mon;
    mday_ = mday;
  }
  void set_time(size_t pos, int h, int m, int sec) {
    leave_now(pos);
    any_ = time_set_ = true;
    hour_ = h;
    min_ = m;
    sec_ = sec;
  }

  // now[ ][+|-][ ]N[ ][unit] at position 0.
  size_t parse_now() {
    size_t q = 3;
    while (q < s_.size() && is_space(s_[q])) ++q;
    int64_t value = now_;
    size_t next = q;
    if (q < s_.size()) {
      if (s_[q] != '+' && s_[q] != '-') fail(static_cast<int64_t>(q));
      const bool minus = s_[q] == '-';
      size_t r = q + 1;
      while (r < s_.size() && is_space(s_[r])) ++r;
      if (!is_digit(at(r))) fail(static_cast<int64_t>(q));
      uint64_t n = 0;
      for (; r < s_.size() && is_digit(s_[r]); ++r)
        n = n > (UINT64_MAX - 9) / 10 ? UINT64_MAX : n * 10 + static_cast<uint64_t>(s_[r] - '0');
      size_t u = r;
      while (u < s_.size() && is_space(s_[u])) ++u;
      int64_t unit = 1;
      next = u;
      if (u < s_.size()) {
        const Unit* found = nullptr;
        for (const auto& un : kUnits)
          if (keyword(u, un.name)) {
            found = &un;
            break;
          }
        if (found == nullptr) fail(static_cast<int64_t>(u) - 1);
        unit = found->seconds;
        next = u + found->name.size();
      }
      int64_t offset;
      const uint64_t cap = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
      offset = n > cap / static_cast<uint64_t>(unit) ? std::numeric_limits<int64_t>::max()
                                                     : static_cast<int64_t>(n) * unit;
      value = sat_add(now_, minus ? -offset : offset);
    }
    any_ = date_set_ = year_set_ = time_set_ = true;
    now_only_ = true;
    now_value_ = value;
    return next;
  }

  // HH:MM[:SS][ ][AM|PM]; the hour has one or two digits, minutes and seconds two.
  size_t parse_clock(size_t p) {
    const size_t hl = is_digit(at(p + 1)) ? p + 1 : p;
    int hour = digits(p, hl);
    if (at(hl + 1) != ':') fail(static_cast<int64_t>(hl) + 1);
    if (hour > 23) fail(static_cast<int64_t>(hl) - 1);
    const size_t m = hl + 2;
    if (!is_digit(at(m))) fail(static_cast<int64_t>(m));
    if (!is_digit(at(m + 1))) fail(static_cast<int64_t>(m) + 1);
    const int min = digits(m, m + 1);
    if (min > 59) fail(static_cast<int64_t>(m));
    size_t q = m + 2;
    int sec = 0;
    if (at(q) == ':') {
      const size_t sp = q + 1;
      if (!is_digit(at(sp))) fail(static_cast<int64_t>(sp));
      if (!is_digit(at(sp + 1))) fail(static_cast<int64_t>(sp) + 1);
      sec = digits(sp, sp + 1);
      if (sec > 59) fail(static_cast<int64_t>(sp));
      q = sp + 2;
    }
    size_t r = q;
    while (r < s_.size() && is_space(s_[r])) ++r;
    if (keyword(r, "am") || keyword(r, "pm")) {
      if (hour > 12) fail(static_cast<int64_t>(r));
      if (keyword(r, "am"))
        hour = hour == 12 ? 0 : hour;
      else
        hour = hour < 12 ? hour + 12 : hour;
      q = r + 2;
    }
    set_time(p, hour, min, sec);
    return q;
  }

  // YYYY-MM-DD, or MM[/.]DD[[/.]YY] / MMDD[YY] with one- or two-digit month and day.
  size_t parse_date(size_t p) {
    if (at(p + 4) == '-' && at(p + 7) == '-') {
      for (size_t i = p + 1; i < p + 4; ++i)
        if (!is_digit(at(i))) fail(static_cast<int64_t>(i));  // "100\t-12-01": pos 3
      const int year = digits(p, p + 3);
      const size_t m = p + 5;
      if (!is_digit(at(m))) fail(static_cast<int64_t>(m));
      if (!is_digit(at(m + 1))) fail(static_cast<int64_t>(m) + 1);
      const int mon = digits(m, m + 1);
      if (mon < 1 || mon > 12) fail(static_cast<int64_t>(m));
      const size_t d = p + 8;
      if (!is_digit(at(d))) fail(static_cast<int64_t>(d));
      const size_t dl = is_digit(at(d + 1)) ? d + 1 : d;
      const int mday = digits(d, dl);
      if (mday < 1 || mday > 31) fail(static_cast<int64_t>(dl) - 1);
      set_date(p, year, mon, mday);
      return dl + 1;
    }
    const size_t ml = is_digit(at(p + 1)) ? p + 1 : p;
    const int mon = digits(p, ml);
    if (mon < 1 || mon > 12) fail(static_cast<int64_t>(ml) - 1);
    size_t q = ml + 1;
    if (at(q) == '/' || at(q) == '.')
      ++q;
    else if (!is_digit(at(q)))
      fail(static_cast<int64_t>(q));
    if (!is_digit(at(q))) fail(static_cast<int64_t>(q));
    const size_t dl = is_digit(at(q + 1)) ? q + 1 : q;
    const int mday = digits(q, dl);
    if (mday < 1 || mday > 31) fail(static_cast<int64_t>(dl) - 1);
    size_t r = dl + 1;
    std::optional<int> year;
    if (at(r) == '/' || at(r) == '.') ++r;  // consumed even without a year: "12/01/T10:00"
    if (is_digit(at(r))) {
      // A year has exactly two digits ("10130": the '0' at 4 starts a year missing a digit).
      if (!is_digit(at(r + 1))) fail(static_cast<int64_t>(r) + 1);
      // "00" counts as no year at all (checked: "12/01/00" is this year's or next year's).
      if (int yy = digits(r, r + 1); yy != 0) year = 2000 + yy;
      r += 2;
    }
    set_date(p, year, mon, mday);
    return r;
  }

  std::string_view s_;
  int64_t now_;
  std::tm base_{};
  bool any_ = false, date_set_ = false, year_set_ = false, time_set_ = false;
  bool now_only_ = false;
  int64_t now_value_ = 0;
  int year_ = 1970, mon_ = 1, mday_ = 1, hour_ = 0, min_ = 0, sec_ = 0;
};

}  // namespace

int64_t parse_time_spec(std::string_view text, int64_t now) {
  return TimeParser(text, now).parse();
}

}  // namespace drover::core
