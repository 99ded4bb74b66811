#pragma once
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace drover::core {

// A --constraint expression as Slurm 22.05 accepts it (checked against it, see
// constraint_test.cpp): features joined by '&' (and), '|' (or) or ',' (and; text() shows it as
// '&', as scontrol does), evaluated strictly left to right without precedence ("a|b&c" is
// "(a|b)&c", as Slurm places jobs); a count "a*2" on a feature outside parentheses; one level of
// parentheses "(a|b)&c" without counts inside; at most one bracket group, either alternatives
// "[a|b|c]" (all nodes must share one of them) or counted ands "[a*1&b*2]"; a single trailing
// operator is tolerated ("a&"). Feature names are any characters but white space and
// "&|,*()[]"; whether they exist is the caller's business (Slurm then answers "Invalid feature
// specification" as well).
class Constraint {
 public:
  // throws ParseError("Invalid feature specification"); "" gives an empty constraint
  static Constraint parse(std::string_view text);
  bool empty() const { return text_.empty(); }
  // Whether one node with these features satisfies the expression on its own (counts and the
  // "same alternative on every node" rule of brackets are treated as plain and/or here).
  bool matches(const std::set<std::string>& node_features) const;
  // Every feature name the expression mentions, once each, in order of appearance (to check
  // them against the cluster's nodes).
  std::vector<std::string> features() const;
  const std::string& text() const { return text_; }

 private:
  // One operand of a left-to-right chain: a feature, or a parenthesised/bracketed group whose
  // terms are chained the same way. `op` joins it to what precedes ('&' or '|'; ignored for the
  // first of a chain).
  struct Term {
    char op = '&';
    std::string feature;  // empty for a group
    std::vector<Term> group;
  };
  static bool eval(const std::vector<Term>& chain, const std::set<std::string>& have);

  std::string text_;
  std::vector<Term> terms_;
};

}  // namespace drover::core
