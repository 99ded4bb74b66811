#pragma once
#include "core/error.hpp"
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace drover::core {

// A --constraint expression: features joined by '&' (and) and '|' (or), with the bracket form
// "[a|b]" (all nodes must share one of the alternatives) and counts "a*2" as Slurm allows.
class Constraint {
 public:
  static Constraint parse(std::string_view text);  // throws ParseError("Invalid feature specification")
  bool empty() const { return text_.empty(); }
  // Whether one node with these features satisfies the expression on its own (counts and the
  // "same alternative on every node" rule of brackets are treated as plain and/or here).
  bool matches(const std::set<std::string>& node_features) const;
  // Every feature name the expression mentions (to check them against the cluster's nodes).
  std::vector<std::string> features() const;
  const std::string& text() const { return text_; }

 private:
  std::string text_;
  struct Term;  // implementation detail
  std::vector<std::vector<std::string>> or_of_ands_;  // disjunctive normal form
};

}  // namespace drover::core
