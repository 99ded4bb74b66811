#include "cli/squeue_rows.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <nlohmann/json.hpp>

namespace drover::cli {
namespace {

using nlohmann::json;

// Where the reader is: the containers open around it, innermost last. Columns, Rows and Row:
// the compact form (proto/job_list.hpp).
enum class Ctx : uint8_t { Top, Jobs, Job, Spec, Alloc, AllocEntry, Columns, Rows, Row, Other };

// The keys read; anything else is skipped.
enum class Key : uint8_t {
  None,
  // top
  Ok,
  Error,
  Now,
  ClusterName,
  Jobs,
  Columns,
  Rows,
  // job
  Id,
  ArrayJobId,
  ArrayTaskId,
  ArrayMaxRunning,
  ArrayPending,
  State,
  Completing,
  Reason,
  Partition,
  User,
  Nodelist,
  SchedNodes,
  Priority,
  Uid,
  StartTime,
  RunTime,
  TimeLimitMin,
  Alloc,
  Spec,
  // spec
  Name,
  Account,
  Qos,
  Ntasks,
  NodesMin,
  CpusPerTask,
  // alloc entry
  Cpus,
  // the compact form's summary of "alloc"
  AllocNodes,
  AllocCpus,
};

Key top_key(std::string_view k) {
  if (k == "ok") return Key::Ok;
  if (k == "error") return Key::Error;
  if (k == "now") return Key::Now;
  if (k == "cluster_name") return Key::ClusterName;
  if (k == "jobs") return Key::Jobs;
  if (k == "columns") return Key::Columns;
  if (k == "rows") return Key::Rows;
  return Key::None;
}

Key job_key(std::string_view k) {
  // By length first: most keys of a record are compared once.
  switch (k.size()) {
    case 2:
      return k == "id" ? Key::Id : Key::None;
    case 3:
      return k == "uid" ? Key::Uid : Key::None;
    case 4:
      return k == "user" ? Key::User : k == "spec" ? Key::Spec : Key::None;
    case 5:
      return k == "state" ? Key::State : k == "alloc" ? Key::Alloc : Key::None;
    case 6:
      return k == "reason" ? Key::Reason : Key::None;
    case 8:
      return k == "nodelist"   ? Key::Nodelist
             : k == "priority" ? Key::Priority
             : k == "run_time" ? Key::RunTime
                               : Key::None;
    case 9:
      return k == "partition" ? Key::Partition : Key::None;
    case 10:
      return k == "completing" ? Key::Completing : k == "start_time" ? Key::StartTime : Key::None;
    case 11:
      return k == "sched_nodes" ? Key::SchedNodes : Key::None;
    case 12:
      return k == "array_job_id" ? Key::ArrayJobId : Key::None;
    case 13:
      return k == "array_task_id"   ? Key::ArrayTaskId
             : k == "array_pending" ? Key::ArrayPending
                                    : Key::None;
    case 14:
      return k == "time_limit_min" ? Key::TimeLimitMin : Key::None;
    case 17:
      return k == "array_max_running" ? Key::ArrayMaxRunning : Key::None;
    default:
      return Key::None;
  }
}

Key spec_key(std::string_view k) {
  if (k == "name") return Key::Name;
  if (k == "account") return Key::Account;
  if (k == "qos") return Key::Qos;
  if (k == "ntasks") return Key::Ntasks;
  if (k == "nodes_min") return Key::NodesMin;
  if (k == "cpus_per_task") return Key::CpusPerTask;
  return Key::None;
}

// A column of the compact form: the job's keys, the spec's, and the allocation's summary.
Key column_key(std::string_view k) {
  if (k == "alloc_nodes") return Key::AllocNodes;
  if (k == "alloc_cpus") return Key::AllocCpus;
  if (k == "alloc" || k == "spec") return Key::None;  // not columns: objects
  const Key job = job_key(k);
  return job != Key::None ? job : spec_key(k);
}

// nlohmann's SAX interface: the lexer without a tree. Reads both forms of the job list: "jobs"
// (an object per job) and the compact "columns" + "rows" (proto/job_list.hpp).
class Reader {
 public:
  explicit Reader(JobList& out) : out_(out) {}

  bool null() {
    value_key();
    return true;
  }
  bool boolean(bool v) {
    const Key k = value_key();
    if (k == Key::Ok && top() == Ctx::Top) out_.ok = v;
    if (k == Key::Completing && in_job()) row().completing = v;
    return true;
  }
  bool number_integer(json::number_integer_t v) { return number(v); }
  bool number_unsigned(json::number_unsigned_t v) { return number(static_cast<int64_t>(v)); }
  bool number_float(json::number_float_t v, const json::string_t&) {
    // Truncated as the tree's get<int64_t>() does; out of range (or NaN), clamped rather than
    // undefined.
    constexpr double kLimit = 9223372036854775808.0;  // 2^63
    if (!(v > -kLimit)) return number(v < 0 ? INT64_MIN : 0);
    if (!(v < kLimit)) return number(INT64_MAX);
    return number(static_cast<int64_t>(v));
  }
  bool string(json::string_t& v) {
    const Key k = value_key();
    switch (top()) {
      case Ctx::Top:
        if (k == Key::Error) out_.error = std::move(v);
        if (k == Key::ClusterName) out_.cluster_name = std::move(v);
        break;
      case Ctx::Columns:
        columns_.push_back(column_key(v));
        break;
      case Ctx::Job:
      case Ctx::Spec:
      case Ctx::Row: {
        JobRow& r = row();
        switch (k) {
          case Key::ArrayPending:
            r.array_pending = std::move(v);
            break;
          case Key::State:
            r.state = std::move(v);
            break;
          case Key::Reason:
            r.reason = std::move(v);
            break;
          case Key::Partition:
            r.partition = std::move(v);
            break;
          case Key::User:
            r.user = std::move(v);
            break;
          case Key::Nodelist:
            r.nodelist = std::move(v);
            break;
          case Key::SchedNodes:
            r.sched_nodes = std::move(v);
            break;
          case Key::Name:
            r.name = std::move(v);
            break;
          case Key::Account:
            r.account = std::move(v);
            break;
          case Key::Qos:
            r.qos = std::move(v);
            break;
          default:
            break;
        }
        break;
      }
      default:
        break;
    }
    return true;
  }
  bool binary(json::binary_t&) { return true; }

  bool start_object(std::size_t) {
    const Ctx parent = top();
    const Key k = value_key();
    Ctx next = Ctx::Other;
    if (stack_.empty())
      next = Ctx::Top;
    else if (parent == Ctx::Jobs) {
      out_.jobs.emplace_back();
      next = Ctx::Job;
    } else if (parent == Ctx::Job && k == Key::Spec)
      next = Ctx::Spec;
    else if (parent == Ctx::Alloc) {
      ++row().alloc_nodes;
      next = Ctx::AllocEntry;
    }
    stack_.push_back(next);
    key_ = Key::None;
    return true;
  }
  bool key(json::string_t& k) {
    switch (top()) {
      case Ctx::Top:
        key_ = top_key(k);
        break;
      case Ctx::Job:
        key_ = job_key(k);
        break;
      case Ctx::Spec:
        key_ = spec_key(k);
        break;
      case Ctx::AllocEntry:
        key_ = k == "cpus" ? Key::Cpus : Key::None;
        break;
      default:
        key_ = Key::None;
        break;
    }
    return true;
  }
  bool end_object() { return pop(); }
  bool start_array(std::size_t) {
    const Ctx parent = top();
    const Key k = value_key();
    Ctx next = Ctx::Other;
    if (parent == Ctx::Top && k == Key::Jobs) {
      next = Ctx::Jobs;
    } else if (parent == Ctx::Top && k == Key::Columns) {
      columns_.clear();
      next = Ctx::Columns;
    } else if (parent == Ctx::Top && k == Key::Rows) {
      next = Ctx::Rows;
    } else if (parent == Ctx::Rows) {
      out_.jobs.emplace_back();
      column_ = 0;
      next = Ctx::Row;
    } else if (parent == Ctx::Job && k == Key::Alloc) {
      next = Ctx::Alloc;
    }
    stack_.push_back(next);
    key_ = Key::None;
    return true;
  }
  bool end_array() { return pop(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception&) {
    return false;
  }

 private:
  Ctx top() const { return stack_.empty() ? Ctx::Other : stack_.back(); }
  bool in_job() const {
    const Ctx c = top();
    return c == Ctx::Job || c == Ctx::Spec || c == Ctx::Row;
  }
  JobRow& row() { return out_.jobs.back(); }
  // The key of the value that comes now: the last key read, or in a row the next column's.
  Key value_key() {
    if (top() != Ctx::Row) return key_;
    const size_t i = column_++;
    return i < columns_.size() ? columns_[i] : Key::None;
  }
  bool pop() {
    stack_.pop_back();
    // After a nested value its key is spent; the next scalar comes after a key of its own.
    key_ = Key::None;
    return true;
  }
  bool number(int64_t v) {
    const Key k = value_key();
    switch (top()) {
      case Ctx::Top:
        if (k == Key::Now) out_.now = v;
        break;
      case Ctx::Job:
      case Ctx::Spec:
      case Ctx::Row: {
        JobRow& r = row();
        switch (k) {
          case Key::Id:
            r.id = static_cast<uint64_t>(v);
            break;
          case Key::ArrayJobId:
            r.array_job_id = static_cast<uint64_t>(v);
            break;
          case Key::ArrayTaskId:
            r.array_task_id = static_cast<uint32_t>(v);
            break;
          case Key::ArrayMaxRunning:
            r.array_max_running = static_cast<uint32_t>(v);
            break;
          case Key::Priority:
            r.priority = static_cast<uint32_t>(v);
            break;
          case Key::Uid:
            r.uid = static_cast<uint32_t>(v);
            break;
          case Key::StartTime:
            r.start_time = v;
            break;
          case Key::RunTime:
            r.run_time = v;
            break;
          case Key::TimeLimitMin:
            r.time_limit_min = v;
            break;
          case Key::Ntasks:
            r.ntasks = static_cast<int>(v);
            break;
          case Key::NodesMin:
            r.nodes_min = static_cast<int>(v);
            break;
          case Key::CpusPerTask:
            r.cpus_per_task = static_cast<int>(v);
            break;
          case Key::AllocNodes:
            r.alloc_nodes = static_cast<int>(v);
            break;
          case Key::AllocCpus:
            r.alloc_cpus = static_cast<int>(v);
            break;
          default:
            break;
        }
        break;
      }
      case Ctx::AllocEntry:
        if (k == Key::Cpus) row().alloc_cpus += static_cast<int>(v);
        break;
      default:
        break;
    }
    return true;
  }

  JobList& out_;
  std::vector<Ctx> stack_;
  Key key_ = Key::None;
  std::vector<Key> columns_;  // the compact form's columns, as keys
  size_t column_ = 0;         // in a row: the next value's column
};

// A json reader over the whole reply in memory that feeds Reader as nlohmann's SAX parser
// does (the same events, strings decoded the same way), without its per-character input
// adapter: most of a job list is short keys and plain ASCII strings, scanned here a run at a
// time. Malformed text is refused (false), as nlohmann refuses it.
class Lexer {
 public:
  Lexer(std::string_view text, Reader& r)
      : p_(text.data()), end_(text.data() + text.size()), r_(r) {}

  bool document() {
    if (!value(0)) return false;
    ws();
    return p_ == end_;
  }

 private:
  static constexpr int kMaxDepth = 512;

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool lit(std::string_view word) {
    if (static_cast<size_t>(end_ - p_) < word.size() || std::string_view(p_, word.size()) != word)
      return false;
    p_ += word.size();
    return true;
  }
  bool value(int depth) {
    ws();
    if (p_ == end_ || depth > kMaxDepth) return false;
    switch (*p_) {
      case '{':
        return object(depth);
      case '[':
        return array(depth);
      case '"':
        return string(buf_) && r_.string(buf_);
      case 't':
        return lit("true") && r_.boolean(true);
      case 'f':
        return lit("false") && r_.boolean(false);
      case 'n':
        return lit("null") && r_.null();
      default:
        return number();
    }
  }
  bool object(int depth) {
    ++p_;
    r_.start_object(static_cast<std::size_t>(-1));
    ws();
    if (p_ < end_ && *p_ == '}') {
      ++p_;
      return r_.end_object();
    }
    while (true) {
      ws();
      if (p_ == end_ || *p_ != '"' || !string(buf_)) return false;
      r_.key(buf_);
      ws();
      if (p_ == end_ || *p_ != ':') return false;
      ++p_;
      if (!value(depth + 1)) return false;
      ws();
      if (p_ == end_) return false;
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ != '}') return false;
      ++p_;
      return r_.end_object();
    }
  }
  bool array(int depth) {
    ++p_;
    r_.start_array(static_cast<std::size_t>(-1));
    ws();
    if (p_ < end_ && *p_ == ']') {
      ++p_;
      return r_.end_array();
    }
    while (true) {
      if (!value(depth + 1)) return false;
      ws();
      if (p_ == end_) return false;
      if (*p_ == ',') {
        ++p_;
        continue;
      }
      if (*p_ != ']') return false;
      ++p_;
      return r_.end_array();
    }
  }
  // Up to the next quote or backslash; control characters are not allowed raw.
  bool run() {
    while (p_ < end_ && *p_ != '"' && *p_ != '\\') {
      if (static_cast<unsigned char>(*p_) < 0x20) return false;
      ++p_;
    }
    return p_ < end_;
  }
  bool hex4(uint32_t& v) {
    if (end_ - p_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        return false;
    }
    return true;
  }
  static void utf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xc0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xe0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    } else {
      out += static_cast<char>(0xf0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3f));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3f));
      out += static_cast<char>(0x80 | (cp & 0x3f));
    }
  }
  bool string(std::string& out) {
    ++p_;  // the opening quote
    const char* start = p_;
    if (!run()) return false;
    out.assign(start, p_);
    while (*p_ == '\\') {
      if (++p_ == end_) return false;
      switch (*p_++) {
        case '"':
          out += '"';
          break;
        case '\\':
          out += '\\';
          break;
        case '/':
          out += '/';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'n':
          out += '\n';
          break;
        case 'r':
          out += '\r';
          break;
        case 't':
          out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          if (!hex4(cp)) return false;
          if (cp >= 0xd800 && cp <= 0xdbff) {  // a surrogate pair
            uint32_t low = 0;
            if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u') return false;
            p_ += 2;
            if (!hex4(low) || low < 0xdc00 || low > 0xdfff) return false;
            cp = 0x10000 + ((cp - 0xd800) << 10) + (low - 0xdc00);
          } else if (cp >= 0xdc00 && cp <= 0xdfff) {
            return false;
          }
          utf8(out, cp);
          break;
        }
        default:
          return false;
      }
      start = p_;
      if (!run()) return false;
      out.append(start, p_);
    }
    ++p_;  // the closing quote
    return true;
  }
  bool number() {
    const char* start = p_;
    if (*p_ == '-') ++p_;
    // No leading zeros ("01"), as json has none.
    if (end_ - p_ >= 2 && p_[0] == '0' && p_[1] >= '0' && p_[1] <= '9') return false;
    auto digits = [&] {
      const char* d = p_;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_;
      return p_ > d;
    };
    if (!digits()) return false;
    bool integral = true;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      integral = false;
      if (!digits()) return false;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) {
      ++p_;
      integral = false;
      if (p_ < end_ && (*p_ == '+' || *p_ == '-')) ++p_;
      if (!digits()) return false;
    }
    if (integral) {
      if (*start == '-') {
        int64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) return r_.number_integer(v);
      } else {
        uint64_t v = 0;
        if (std::from_chars(start, p_, v).ec == std::errc()) return r_.number_unsigned(v);
      }
    }
    // A fraction, an exponent, or an integer too large for 64 bits: a double, as nlohmann.
    const std::string text(start, p_);
    const double v = std::strtod(text.c_str(), nullptr);
    if (!std::isfinite(v)) return false;  // nlohmann refuses a number beyond a double's range
    return r_.number_float(v, text);
  }

  const char* p_;
  const char* end_;
  Reader& r_;
  std::string buf_;
};

}  // namespace

bool read_job_list(std::string_view text, JobList& out) {
  out = JobList{};
  // Room for the rows at once (a compact row is ~100 bytes; only touched pages cost).
  out.jobs.reserve(text.size() / 90);
  Reader reader(out);
  return Lexer(text, reader).document();
}

std::string job_state_long(const JobRow& job) {
  if (job.completing) return "COMPLETING";
  return job.state.empty() ? "PENDING" : job.state;
}

std::string job_state_short(const JobRow& job) {
  return job_state_short(job.state.empty() ? std::string_view("PENDING") : job.state,
                         job.completing);
}

bool job_active(const JobRow& job) {
  return job_active(job.state.empty() ? std::string_view("PENDING") : job.state, job.completing);
}

int job_node_count(const JobRow& job) {
  return job.alloc_nodes > 0 ? job.alloc_nodes : job.nodes_min;
}

int job_cpu_count(const JobRow& job) {
  if (job.alloc_cpus > 0) return job.alloc_cpus;
  return std::max(job.ntasks, job.nodes_min) * job.cpus_per_task;
}

}  // namespace drover::cli
