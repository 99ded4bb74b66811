#include "cli/format.hpp"

#include <pwd.h>

#include <algorithm>
#include <cctype>
#include <ctime>

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

std::string fit(const std::string& value, int width, bool right) {
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
  if (const passwd* pw = ::getpwuid(uid)) return pw->pw_name;
  return std::to_string(uid);
}

}  // namespace drover::cli
