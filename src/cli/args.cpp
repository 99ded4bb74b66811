#include "cli/args.hpp"

#include <cstdlib>
#include <iostream>

#include "core/text.hpp"

namespace drover::cli {

bool ArgReader::next() {
  if (index_ >= args_.size()) return false;
  current_ = args_[index_++];
  return true;
}

bool ArgReader::is(const char* short_form, const char* long_form) const {
  return current_ == short_form || current_ == long_form;
}

bool ArgReader::take(const char* short_form, const char* long_form) {
  const std::string s = short_form, l = long_form;
  if (current_ == s || current_ == l) {
    if (index_ >= args_.size()) {
      std::cerr << program_ << ": option '" << current_ << "' requires an argument\n"
                << "Try \"" << program_ << " --help\" for more information\n";
      std::exit(1);
    }
    value_ = args_[index_++];
    return true;
  }
  if (current_.rfind(l + "=", 0) == 0) {
    value_ = current_.substr(l.size() + 1);
    return true;
  }
  if (!s.empty() && current_.size() > 2 && current_.rfind(s, 0) == 0 && current_[1] != '-') {
    value_ = current_.substr(2);
    return true;
  }
  return false;
}

std::set<std::string> split_set(const std::string& s) {
  const auto items = core::split_list(s, ',');
  return {items.begin(), items.end()};
}

}  // namespace drover::cli
