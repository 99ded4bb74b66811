#include "cli/print_fields.hpp"

#include <cstdlib>

#include "cli/format.hpp"
#include "core/text.hpp"

namespace drover::cli {
namespace {

std::string pad(std::string s, int width) {
  const size_t w = static_cast<size_t>(std::abs(width));
  if (s.size() >= w) return s;
  const std::string fill(w - s.size(), ' ');
  return width < 0 ? s + fill : fill + s;
}

}  // namespace

std::string FieldPrinter::header() const {
  if (options_.no_header) return "";
  std::string out;
  const bool parsable = options_.parsable || options_.parsable2;
  for (size_t i = 0; i < columns_.size(); ++i) {
    const PrintColumn& c = columns_[i];
    if (parsable) {
      out += c.header;
      if (!(options_.parsable2 && i + 1 == columns_.size())) out += '|';
    } else {
      out += pad(c.header.substr(0, static_cast<size_t>(std::abs(c.width))), c.width) + " ";
    }
  }
  out += "\n";
  if (!parsable) {
    for (const PrintColumn& c : columns_)
      out += std::string(static_cast<size_t>(std::abs(c.width)), '-') + " ";
    out += "\n";
  }
  return out;
}

std::string FieldPrinter::row(const std::vector<PrintCell>& cells) const {
  std::string out;
  const bool parsable = options_.parsable || options_.parsable2;
  for (size_t i = 0; i < columns_.size(); ++i) {
    const PrintColumn& c = columns_[i];
    const PrintCell empty;
    const PrintCell& cell = i < cells.size() ? cells[i] : empty;
    // A '|' in a value stays (as in Slurm); a newline or tab is escaped, not a row break.
    const std::string text = printable(cell.text);
    if (parsable) {
      out += text;
      if (!(options_.parsable2 && i + 1 == columns_.size())) out += '|';
      continue;
    }
    std::string s = text;
    const size_t w = static_cast<size_t>(std::abs(c.width));
    if (!cell.number && s.size() > w) {
      s.resize(w);
      if (w > 0) s.back() = '+';
    }
    out += pad(std::move(s), c.width) + " ";
  }
  return out + "\n";
}

std::vector<FormatItem> parse_format_list(const std::string& list) {
  std::vector<FormatItem> out;
  for (const std::string& item : core::split_list(list, ',')) {
    FormatItem f;
    const auto pct = item.find('%');
    f.name = item.substr(0, pct);
    if (pct != std::string::npos) {
      f.has_width = true;
      f.width = parse_width(std::string_view(item).substr(pct + 1));
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace drover::cli
