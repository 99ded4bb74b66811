#pragma once
// The captures of real Slurm's sacctmgr and sreport in tests/compat/golden/accounting
// (capture_accounting.sh) and of sacct in tests/compat/golden/sacct (capture_sacct.sh): read in
// the order they were taken, with the command line split as the shell split it.
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace drover::cli::testing {

inline std::string golden_dir() { return DROVER_GOLDEN_ACCOUNTING_DIR; }

inline std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Capture {
  std::string name, cmd, user = "root", stdin_text, out, err;
  int rc = 0;
  int64_t now = 0;
  std::string dir = golden_dir();
  bool has(const std::string& file) const {
    return std::ifstream(dir + "/" + name + "/" + file).good();
  }
};

inline Capture capture(const std::string& name, const std::string& dir = golden_dir()) {
  const std::string d = dir + "/" + name + "/";
  Capture c;
  c.name = name;
  c.dir = dir;
  c.cmd = read_file(d + "cmd");
  while (!c.cmd.empty() && c.cmd.back() == '\n') c.cmd.pop_back();
  if (c.has("user")) {
    c.user = read_file(d + "user");
    c.user.pop_back();
  }
  if (c.has("stdin")) c.stdin_text = read_file(d + "stdin");
  c.out = read_file(d + "stdout");
  c.err = read_file(d + "stderr");
  c.rc = std::stoi(read_file(d + "rc"));
  c.now = std::stoll(read_file(d + "now"));
  return c;
}

// Every capture, in INDEX.txt's order.
inline std::vector<Capture> all_captures(const std::string& dir = golden_dir()) {
  std::vector<Capture> out;
  std::istringstream index(read_file(dir + "/INDEX.txt"));
  std::string line;
  while (std::getline(index, line)) {
    if (line.size() < 4 || !isdigit(static_cast<unsigned char>(line[0]))) continue;
    std::istringstream words(line);
    std::string number, name;
    words >> number >> name;
    out.push_back(capture(name, dir));
  }
  return out;
}

// The words of a simple command line as the shell makes them: quotes taken away, "&&" and ";"
// kept as words of their own.
inline std::vector<std::string> shell_words(const std::string& line) {
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  char quote = 0;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quote) {
      if (c == quote)
        quote = 0;
      else
        cur += c;
      continue;
    }
    if (c == '\'' || c == '"') {
      quote = c;
      in_word = true;
    } else if (c == ' ') {
      if (in_word) out.push_back(cur);
      cur.clear();
      in_word = false;
    } else if (c == ';') {
      if (in_word) out.push_back(cur);
      out.push_back(";");
      cur.clear();
      in_word = false;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(cur);
  return out;
}

}  // namespace drover::cli::testing
