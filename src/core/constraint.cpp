#include "core/constraint.hpp"

#include <algorithm>
#include <cstring>

namespace drover::core {

namespace {

constexpr const char* kInvalid = "Invalid feature specification";

bool is_name_char(char c) { return c != '\0' && std::strchr(" \t\n\v\f\r&|,*()[]", c) == nullptr; }

class ConstraintParser {
 public:
  explicit ConstraintParser(std::string_view s) : s_(s) {}

  template <class Term>
  std::vector<Term> top() {
    std::vector<Term> out;
    char op = '&';
    for (;;) {
      Term t = peek() == '('   ? paren<Term>()
               : peek() == '[' ? bracket<Term>()
                               : feature<Term>(true);
      t.op = op;
      out.push_back(std::move(t));
      if (at_end()) return out;
      op = take_op();
      if (at_end()) return out;  // a single trailing operator: "a&", "a|", "a,"
    }
  }

 private:
  [[noreturn]] static void fail() { throw ParseError(kInvalid); }
  bool at_end() const { return p_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[p_]; }
  char take_op() {
    char c = peek();
    if (c == ',') c = '&';
    if (c != '&' && c != '|') fail();
    ++p_;
    return c;
  }

  // name[*count]; counts only where allowed, each >= 1.
  template <class Term>
  Term feature(bool count_allowed, bool* counted = nullptr) {
    size_t start = p_;
    while (!at_end() && is_name_char(s_[p_])) ++p_;
    if (p_ == start) fail();
    Term t;
    t.feature = std::string(s_.substr(start, p_ - start));
    if (peek() == '*') {
      if (!count_allowed) fail();
      ++p_;
      size_t digits = p_;
      bool nonzero = false;
      for (; !at_end() && s_[p_] >= '0' && s_[p_] <= '9'; ++p_) nonzero = nonzero || s_[p_] != '0';
      if (p_ == digits || !nonzero) fail();
      if (counted) *counted = true;
    }
    return t;
  }

  // "(a|b&c)": features (no counts, no nesting) or the one bracket group.
  template <class Term>
  Term paren() {
    ++p_;
    Term g;
    char op = '&';
    for (;;) {
      Term e = peek() == '['   ? bracket<Term>()
               : peek() == '(' ? (fail(), Term{})
                               : feature<Term>(false);
      e.op = op;
      g.group.push_back(std::move(e));
      if (peek() == ')') {
        ++p_;
        return g;
      }
      if (at_end()) fail();
      op = take_op();
    }
  }

  // "[a|b|c]" or "[a*1&b*2]"; at most one per expression.
  template <class Term>
  Term bracket() {
    if (bracket_seen_) fail();
    bracket_seen_ = true;
    ++p_;
    Term g;
    char op = '&';
    bool any_or = false, any_and = false;
    size_t counted = 0;
    for (;;) {
      bool c = false;
      Term e = peek() == '(' ? paren<Term>() : feature<Term>(true, &c);
      counted += c ? 1 : 0;
      e.op = op;
      g.group.push_back(std::move(e));
      if (peek() == ']') {
        ++p_;
        break;
      }
      if (at_end()) fail();
      op = take_op();
      (op == '|' ? any_or : any_and) = true;
    }
    if (any_or && any_and) fail();                     // "[a&b|d]"
    if (any_or && counted > 0) fail();                 // "[a*1|b*1]"
    if (any_and && counted != g.group.size()) fail();  // "[a&b]", "[a*1&b]"
    return g;
  }

  std::string_view s_;
  size_t p_ = 0;
  bool bracket_seen_ = false;
};

}  // namespace

Constraint Constraint::parse(std::string_view text) {
  Constraint c;
  if (text.empty()) return c;
  c.terms_ = ConstraintParser(text).top<Term>();
  c.text_ = std::string(text);
  std::replace(c.text_.begin(), c.text_.end(), ',', '&');  // scontrol shows "a,b" as "a&b"
  return c;
}

bool Constraint::eval(const std::vector<Term>& chain, const std::set<std::string>& have) {
  bool value = true;
  bool first = true;
  for (const auto& t : chain) {
    bool v = t.feature.empty() ? eval(t.group, have) : have.count(t.feature) > 0;
    value = first ? v : t.op == '|' ? (value || v) : (value && v);
    first = false;
  }
  return value;
}

bool Constraint::matches(const std::set<std::string>& node_features) const {
  return terms_.empty() || eval(terms_, node_features);
}

std::vector<std::string> Constraint::features() const {
  std::vector<std::string> out;
  auto walk = [&](const auto& self, const std::vector<Term>& chain) -> void {
    for (const auto& t : chain) {
      if (t.feature.empty())
        self(self, t.group);
      else if (std::find(out.begin(), out.end(), t.feature) == out.end())
        out.push_back(t.feature);
    }
  };
  walk(walk, terms_);
  return out;
}

}  // namespace drover::core
