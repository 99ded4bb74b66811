#pragma once
#include <set>
#include <string>
#include <vector>

namespace drover::cli {

// Walks a command's arguments the way getopt does for the forms Slurm's commands accept:
// "-x VALUE", "-xVALUE", "--long VALUE" and "--long=VALUE". A missing value is reported
// with getopt's wording and exit status 1.
class ArgReader {
 public:
  ArgReader(std::string program, const std::vector<std::string>& args)
      : program_(std::move(program)), args_(args) {}
  bool next();  // advances to the next argument
  const std::string& arg() const { return current_; }
  bool is(const char* short_form, const char* long_form) const;
  // True when the current argument is this option; its value is then in value().
  bool take(const char* short_form, const char* long_form);
  const std::string& value() const { return value_; }

 private:
  std::string program_;
  const std::vector<std::string>& args_;
  size_t index_ = 0;
  std::string current_, value_;
};

// A comma-separated option value ("-p a,b") as a set, empty items dropped.
std::set<std::string> split_set(const std::string& s);

}  // namespace drover::cli
