#include "core/task_prolog.hpp"

namespace drover::core {
namespace {

std::string_view skip_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  return s;
}

// `line` without `word` and the blanks after it, if it starts with the word and a blank.
bool take_word(std::string_view& line, std::string_view word) {
  if (line.size() <= word.size() || line.substr(0, word.size()) != word) return false;
  if (line[word.size()] != ' ' && line[word.size()] != '\t') return false;
  line = skip_blanks(line.substr(word.size()));
  return true;
}

}  // namespace

std::string apply_task_prolog_output(std::string_view out,
                                     std::map<std::string, std::string>& env) {
  std::string printed;
  while (!out.empty()) {
    const size_t nl = out.find('\n');
    std::string_view line = out.substr(0, nl);
    out = nl == std::string_view::npos ? std::string_view() : out.substr(nl + 1);
    if (take_word(line, "export")) {
      const size_t eq = line.find('=');
      if (eq == std::string_view::npos || eq == 0) continue;
      env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    } else if (take_word(line, "unset")) {
      const size_t end = line.find_first_of(" \t");
      if (!line.empty()) env.erase(std::string(line.substr(0, end)));
    } else if (take_word(line, "print")) {
      printed += std::string(line) + "\n";
    }
  }
  return printed;
}

}  // namespace drover::core
