#pragma once
// Advance reservations: nodes set aside for some users or accounts over a time window
// (scontrol create|update|delete reservation, sbatch --reservation).
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"

namespace drover::core {

// Reservation flags drover honours, as bits; names and display order are Slurm's.
enum ResvFlag : uint32_t {
  kResvMaint = 1u << 0,       // maintenance: nodes show MAINT
  kResvFlex = 1u << 1,        // members may also run outside its nodes and window
  kResvOverlap = 1u << 2,     // may share nodes and time with other reservations
  kResvIgnoreJobs = 1u << 3,  // may be created over nodes whose jobs run into it
  kResvDaily = 1u << 4,       // repeats every day
  kResvWeekly = 1u << 5,      // repeats every week
  kResvSpecNodes = 1u << 6,   // nodes were named (set by the controller)
  kResvAllNodes = 1u << 7,    // Nodes=ALL (set by the controller)
};

// "MAINT,FLEX,OVERLAP,IGNORE_JOBS,WEEKLY,SPEC_NODES" in Slurm's order; "" for none.
std::string format_resv_flags(uint32_t flags);
// Parses a user-given Flags= list (MAINT, FLEX, OVERLAP, IGNORE_JOBS, DAILY, WEEKLY, any
// case). Throws ParseError("Error parsing flags <text>.") on an unknown name.
uint32_t parse_resv_flags(std::string_view text);

struct Reservation {
  std::string name;
  int64_t start = 0, end = 0;  // Unix seconds, [start, end)
  std::vector<std::string> nodes;
  std::string partition;  // where NodeCnt= picked its nodes ("" when nodes were named)
  // Who may use it: Users= (all negated with '-' when `users_denied`) and Accounts=.
  std::vector<std::string> users, accounts;
  bool users_denied = false;
  uint32_t flags = 0;

  bool active(int64_t now) const { return start <= now && now < end; }
  // The period of a repeating reservation (0: none).
  int64_t period() const;
  // Whether a job of `user` charged to `account` may use it.
  bool admits(const std::string& user, const std::string& account) const;
  // Whether its window meets [from, to).
  bool overlaps(int64_t from, int64_t to) const { return start < to && from < end; }
};

void to_json(nlohmann::json& j, const Reservation& r);
void from_json(const nlohmann::json& j, Reservation& r);

// A create or update request as scontrol sends it: every field optional. Times are
// absolute (scontrol resolves "now+1hour" against its own clock).
struct ResvRequest {
  std::string name;
  std::optional<int64_t> start, end;
  std::optional<int64_t> duration_min;  // -1: UNLIMITED (365 days, as Slurm)
  std::optional<std::string> nodes;     // hostlist or "ALL"
  std::optional<int> node_cnt;
  std::optional<std::string> partition;
  // Users=/Accounts= replace the list; Users+=/-= add or take away names.
  std::optional<std::string> users, accounts;
  std::vector<std::string> users_add, users_remove, accounts_add, accounts_remove;
  std::optional<uint32_t> flags;  // Flags= replaces the user-settable flags
  uint32_t flags_add = 0, flags_remove = 0;
};

void to_json(nlohmann::json& j, const ResvRequest& r);
void from_json(const nlohmann::json& j, ResvRequest& r);

// Parses scontrol's "Key=Value" words after "create reservation" / "update reservation".
// Keys are Slurm's, any case: ReservationName (or Reservation), StartTime, EndTime,
// Duration, Nodes, NodeCnt, PartitionName (or Partition), Users, Accounts, Flags.
// Throws ParseError with scontrol's wording for a value it cannot read, e.g.
// "Invalid duration duration=bogus." or "Error parsing flags bogus.".
ResvRequest parse_resv_words(const std::vector<std::string>& words, int64_t now);

}  // namespace drover::core
