#pragma once
// Sets TZ for as long as it lives and then puts back what was there: for tests whose
// expectations were observed in one time zone (as a fixture member, it spans SetUp to
// TearDown).
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

namespace drover::core {

class ScopedTz {
 public:
  explicit ScopedTz(const char* zone) {
    if (const char* tz = std::getenv("TZ")) saved_ = tz;
    setenv("TZ", zone, 1);
    tzset();
  }
  ~ScopedTz() {
    if (saved_)
      setenv("TZ", saved_->c_str(), 1);
    else
      unsetenv("TZ");
    tzset();
  }
  ScopedTz(const ScopedTz&) = delete;
  ScopedTz& operator=(const ScopedTz&) = delete;

 private:
  std::optional<std::string> saved_;
};

}  // namespace drover::core
