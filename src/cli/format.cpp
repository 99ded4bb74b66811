#include "cli/format.hpp"

#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <ctime>
#include <iostream>

namespace drover::cli {

int parse_width(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  const bool negative = i < s.size() && s[i] == '-';
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  int w = 0;
  while (i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])))
    w = add_width_digit(w, s[i++]);
  return negative ? -w : w;
}

std::vector<FormatField> parse_format(std::string_view spec) {
  std::vector<char> unknown;
  return parse_format(spec, {}, unknown);
}

std::vector<FormatField> parse_format(std::string_view spec, const std::function<bool(char)>& known,
                                      std::vector<char>& unknown) {
  std::vector<FormatField> out;
  std::string literal;
  for (size_t i = 0; i < spec.size(); ++i) {
    if (spec[i] != '%' || i + 1 >= spec.size()) {
      literal += spec[i];
      continue;
    }
    size_t j = i + 1;
    FormatField f;
    if (spec[j] == '%') {
      literal += '%';
      i = j;
      continue;
    }
    if (spec[j] == '.') {
      f.right = true;
      ++j;
    }
    if (j < spec.size() && spec[j] == '#') {
      f.dynamic = true;
      ++j;
    }
    while (j < spec.size() && std::isdigit(static_cast<unsigned char>(spec[j])))
      f.width = add_width_digit(f.width, spec[j++]);
    if (j >= spec.size()) {
      literal += spec.substr(i);
      break;
    }
    if (known && !known(spec[j])) {
      unknown.push_back(spec[j]);
      literal += spec.substr(i, j - i + 1);
      i = j;
      continue;
    }
    f.code = spec[j];
    f.literal = std::move(literal);
    literal.clear();
    out.push_back(std::move(f));
    i = j;
  }
  if (!literal.empty()) out.push_back({literal, 0, 0, false, false});
  return out;
}

namespace {

// Appends the escape of the control character at value[i] (one byte, or two for a C1) and
// returns how many bytes it took; 0 when value[i] is no control character.
size_t escape_at(std::string_view value, size_t i, std::string& out, bool keep_layout) {
  const auto c = static_cast<unsigned char>(value[i]);
  if (c == 0xc2 && i + 1 < value.size()) {
    const auto next = static_cast<unsigned char>(value[i + 1]);
    if (next >= 0x80 && next <= 0x9f) {  // U+0080..U+009F: C1 controls (0x9b is CSI)
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(next));
      out += buf;
      return 2;
    }
    return 0;
  }
  if (c >= 0x20 && c != 0x7f) return 0;
  if (keep_layout && (c == '\n' || c == '\t')) return 0;
  switch (c) {
    case '\t':
      out += "\\t";
      break;
    case '\n':
      out += "\\n";
      break;
    case '\r':
      out += "\\r";
      break;
    default: {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned>(c));
      out += buf;
    }
  }
  return 1;
}

// `keep_layout`: newlines and tabs pass (the output's own lines and separators).
std::string escape(std::string_view value, bool keep_layout) {
  std::string out;
  size_t done = 0;  // value[..done) is in out
  for (size_t i = 0; i < value.size();) {
    const auto c = static_cast<unsigned char>(value[i]);
    if (c >= 0x20 && c != 0x7f && c != 0xc2) {  // the common case, cheaply
      ++i;
      continue;
    }
    std::string esc;
    const size_t n = escape_at(value, i, esc, keep_layout);
    if (n == 0) {
      ++i;
      continue;
    }
    out.append(value.substr(done, i - done));
    out += esc;
    i += n;
    done = i;
  }
  if (done == 0) return std::string(value);
  out.append(value.substr(done));
  return out;
}

// Passes everything written on to `next` (which buffers as before), control characters
// escaped. Only a trailing 0xc2 waits for the next write: it may start a C1 control.
class EscapingBuf : public std::streambuf {
 public:
  explicit EscapingBuf(std::streambuf* next) : next_(next) {}
  ~EscapingBuf() override { flush(); }

 protected:
  int_type overflow(int_type ch) override {
    if (ch != traits_type::eof()) {
      pending_ += static_cast<char>(ch);
      flush_complete();
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<size_t>(n));
    flush_complete();
    return n;
  }
  int sync() override {
    flush();
    return next_->pubsync();
  }

 private:
  // Writes what is complete: all but a trailing 0xc2, which may start a C1 control.
  void flush_complete() {
    const size_t keep = !pending_.empty() && static_cast<unsigned char>(pending_.back()) == 0xc2;
    const std::string text =
        escape(std::string_view(pending_).substr(0, pending_.size() - keep), true);
    next_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
    pending_.erase(0, pending_.size() - keep);
  }
  void flush() {
    const std::string text = escape(pending_, true);
    next_->sputn(text.data(), static_cast<std::streamsize>(text.size()));
    pending_.clear();
  }
  std::streambuf* next_;
  std::string pending_;
};

}  // namespace

std::string printable(std::string_view value) { return escape(value, false); }

TerminalGuard::TerminalGuard()
    : out_(std::make_unique<EscapingBuf>(std::cout.rdbuf())),
      err_(std::make_unique<EscapingBuf>(std::cerr.rdbuf())),
      old_out_(std::cout.rdbuf(out_.get())),
      old_err_(std::cerr.rdbuf(err_.get())) {}

TerminalGuard::~TerminalGuard() {
  std::cout.flush();
  std::cerr.flush();
  std::cout.rdbuf(old_out_);
  std::cerr.rdbuf(old_err_);
}

std::string fit(const std::string& raw, int width, bool right) {
  const std::string value = printable(raw);
  if (width <= 0) return value;
  const size_t w = static_cast<size_t>(width);
  if (value.size() >= w) return value.substr(0, w);
  std::string pad(w - value.size(), ' ');
  return right ? pad + value : value + pad;
}

std::string render_table(const std::vector<FormatField>& fields, size_t rows,
                         const std::function<std::string(char, size_t)>& value,
                         const std::function<std::string(char)>& header, bool with_header) {
  // Resolve dynamic widths first.
  std::vector<int> widths;
  for (const auto& f : fields) {
    int w = f.width;
    if (f.dynamic && f.code) {
      w = static_cast<int>(header(f.code).size());
      for (size_t r = 0; r < rows; ++r) w = std::max(w, static_cast<int>(value(f.code, r).size()));
    }
    widths.push_back(w);
  }
  std::string out;
  auto line = [&](const std::function<std::string(char)>& cell) {
    std::string s;
    for (size_t i = 0; i < fields.size(); ++i) {
      s += fields[i].literal;
      if (fields[i].code) s += fit(cell(fields[i].code), widths[i], fields[i].right);
    }
    out += s;
    out += '\n';
  };
  if (with_header) line(header);
  for (size_t r = 0; r < rows; ++r) line([&](char c) { return value(c, r); });
  return out;
}

std::string date_line(int64_t now) {
  const std::time_t t = now;
  char buf[64];
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%a %b %d %H:%M:%S %Y", &tm);
  return buf;
}

std::string user_name(uint32_t uid) {
  // (uid_t)-1 is no user's: the controller's Kubernetes operator acts as it.
  if (uid == 0xffffffffu) return "drover-operator";
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return std::to_string(uid);
}

}  // namespace drover::cli
