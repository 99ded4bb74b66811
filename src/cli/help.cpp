#include "cli/help.hpp"

#include <cctype>
#include <optional>
#include <set>
#include <sstream>

#include "core/version.hpp"

namespace drover::cli {

std::string version_text() { return "slurm " + std::string(core::kSlurmVersion) + "\n"; }

std::string try_help(const std::string& program) {
  return "Try \"" + program + " --help\" for more information\n";
}

std::string cluster_unreachable(const std::string& program, const std::string& cluster) {
  return program + ": error: Problem talking to database\n" + program + ": error: '" + cluster +
         "' can't be reached now, or it is an invalid entry for --cluster.  Use 'sacctmgr list "
         "clusters' to see available clusters.\n";
}

namespace {

// A word of an option column: "-p,", "--partition=name", "-B", "<time_format>:", or "or" in
// the "-a or --all:" form some commands use.
bool option_word(std::string_view w) {
  if (w == "or") return true;
  if (!w.empty() && (w[0] == '<' || w[0] == '[')) return true;
  return w.size() >= 2 && w[0] == '-' &&
         (std::isalnum(static_cast<unsigned char>(w[1])) || w[1] == '-');
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    lines.push_back(text.substr(0, nl));
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return lines;
}

// One help line with tabs expanded and trailing blanks dropped.
std::string expand(std::string_view line) {
  std::string out;
  for (char c : line) {
    if (c == '\t')
      out.append(8 - out.size() % 8, ' ');
    else
      out += c;
  }
  while (!out.empty() && out.back() == ' ') out.pop_back();
  return out;
}

// Column where the option lines' option words start at most; deeper lines continue the
// description above them.
constexpr std::size_t kOptionIndent = 16;

struct OptionLine {
  std::string spec;  // the option words, "-p, --partition=name"
  std::string desc;  // the rest of the line
};

// The option words at the start of an option line, or nullopt for other lines.
std::optional<OptionLine> option_line(const std::string& line) {
  const std::size_t indent = line.find_first_not_of(' ');
  if (indent == std::string::npos || indent >= kOptionIndent || line[indent] != '-')
    return std::nullopt;
  OptionLine out;
  std::size_t at = indent;
  while (at < line.size()) {
    const std::size_t end = std::min(line.find(' ', at), line.size());
    const std::string_view word = std::string_view(line).substr(at, end - at);
    if (!option_word(word)) break;
    out.spec += (out.spec.empty() ? "" : " ") + std::string(word);
    at = line.find_first_not_of(' ', end);
    if (at == std::string::npos) at = line.size();
  }
  if (out.spec.find('-') == std::string::npos || out.spec == "-") return std::nullopt;
  if (out.spec.back() == ':') out.spec.pop_back();  // "-a or --all_clusters: ..."
  out.desc = line.substr(at);
  return out;
}

// roff text: backslashes and hyphens escaped, a leading control character defused.
std::string roff(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\')
      out += "\\e";
    else if (c == '-')
      out += "\\-";
    else
      out += c;
  }
  if (!out.empty() && (out[0] == '.' || out[0] == '\'')) out.insert(0, "\\&");
  return out;
}

std::string upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const std::vector<const CommandHelp*>& all_command_help() {
  static const std::vector<const CommandHelp*> all = {
      &kSacctHelp, &kSacctmgrHelp, &kSallocHelp, &kSbatchHelp,  &kScancelHelp, &kScontrolHelp,
      &kSinfoHelp, &kSprioHelp,    &kSqueueHelp, &kSreportHelp, &kSrunHelp,    &kSshareHelp,
  };
  return all;
}

std::vector<std::string> listed_long_options(std::string_view help) {
  std::set<std::string> names;
  for (std::string_view raw : split_lines(help)) {
    const auto opt = option_line(expand(raw));
    if (!opt) continue;
    const std::string& s = opt->spec;
    for (std::size_t at = s.find("--"); at != std::string::npos; at = s.find("--", at + 2)) {
      std::size_t end = at + 2;
      while (end < s.size() &&
             (std::isalnum(static_cast<unsigned char>(s[end])) || s[end] == '-' || s[end] == '_'))
        ++end;
      if (end > at + 2) names.insert(s.substr(at + 2, end - at - 2));
      at = end - 2;
    }
  }
  return {names.begin(), names.end()};
}

std::string man_page(const CommandHelp& h) {
  std::ostringstream out;
  out << ".TH " << upper(h.name) << " 1 \"\" \"drover\" \"Slurm-compatible commands\"\n"
      << ".nh\n.ad l\n"
      << ".SH NAME\n"
      << h.name << " \\- " << roff(h.summary) << "\n"
      << ".SH SYNOPSIS\n.nf\n";
  for (std::string_view line : split_lines(h.usage)) out << roff(expand(line)) << "\n";
  out << ".fi\n"
      << ".SH DESCRIPTION\n"
      << ".B " << h.name << "\n"
      << "is drover's " << h.name << ", compatible with Slurm 22.05's: it " << roff(h.summary)
      << ".\nThe options below are those its \\-\\-help lists; \\-V prints the Slurm release "
         "drover is compatible with.\n"
      << ".SH OPTIONS\n";
  enum class Mode { None, Item, Pre } mode = Mode::None;
  bool first = true;
  for (std::string_view raw : split_lines(h.help)) {
    const std::string line = expand(raw);
    // The help's own "Usage:" line, or its first synopsis line, is the SYNOPSIS above.
    if (first && (line.rfind("Usage:", 0) == 0 ||
                  (!h.usage.empty() && line == expand(split_lines(h.usage).front()))))
      continue;
    first = false;
    const std::size_t indent = line.find_first_not_of(' ');
    auto leave_pre = [&] {
      if (mode == Mode::Pre) out << ".fi\n";
      mode = Mode::None;
    };
    if (indent == std::string::npos) {
      leave_pre();
      continue;
    }
    if (auto opt = option_line(line)) {
      leave_pre();
      out << ".TP\n.B " << roff(opt->spec) << "\n";
      if (!opt->desc.empty()) out << roff(opt->desc) << "\n";
      mode = Mode::Item;
      continue;
    }
    if (mode == Mode::Item && indent >= kOptionIndent) {
      out << roff(line.substr(indent)) << "\n";
      continue;
    }
    if (indent == 0 && (line.back() == ':' || line.find("options:") != std::string::npos)) {
      leave_pre();
      out << ".SS " << roff(line) << "\n";
      continue;
    }
    if (mode != Mode::Pre) out << ".PP\n.nf\n";
    mode = Mode::Pre;
    out << roff(line) << "\n";
  }
  if (mode == Mode::Pre) out << ".fi\n";
  out << ".SH DROVER NOTES\n";
  std::string para;
  auto flush = [&] {
    if (!para.empty()) out << ".PP\n" << roff(para) << "\n";
    para.clear();
  };
  for (std::string_view line : split_lines(h.notes)) {
    if (line.find_first_not_of(' ') == std::string_view::npos) {
      flush();
      continue;
    }
    para += (para.empty() ? "" : " ") + std::string(line);
  }
  flush();
  out << ".SH SEE ALSO\n";
  const auto& all = all_command_help();
  bool comma = false;
  for (const CommandHelp* other : all) {
    if (other->name == h.name) continue;
    if (comma) out << ",\n";
    out << ".BR " << other->name << " (1)";
    comma = true;
  }
  out << "\n";
  return out.str();
}

}  // namespace drover::cli
