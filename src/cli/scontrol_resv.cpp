// scontrol create|update|delete|show reservation.
#include "cli/scontrol_resv.hpp"

#include <ctime>
#include <iostream>

#include "cli/client.hpp"
#include "cli/format.hpp"
#include "core/duration.hpp"
#include "core/reservation.hpp"
#include "core/text.hpp"
#include "proto/request.hpp"

namespace drover::cli {
namespace {

std::string or_null(const std::string& s) { return s.empty() ? "(null)" : s; }

// One reservation in scontrol's layout ("Key=Value" items, continuation lines indented by
// three spaces, a blank line after each; -o: one line).
std::string format_reservation(const json& r, bool one_liner) {
  const int64_t start = r.value("start", int64_t{0}), end = r.value("end", int64_t{0});
  const std::vector<std::string> lines = {
      "ReservationName=" + r.value("name", "") + " StartTime=" + core::format_timestamp(start) +
          " EndTime=" + core::format_timestamp(end) + " Duration=" + core::format_hms(end - start),
      "Nodes=" + or_null(r.value("nodes", "")) +
          " NodeCnt=" + std::to_string(r.value("node_cnt", 0)) +
          " CoreCnt=" + std::to_string(r.value("core_cnt", 0)) + " Features=(null) PartitionName=" +
          or_null(r.value("partition", "")) + " Flags=" + r.value("flags", ""),
      "TRES=cpu=" + std::to_string(r.value("cpus", 0)),
      "Users=" + or_null(r.value("users", "")) +
          " Groups=(null) Accounts=" + or_null(r.value("accounts", "")) +
          " Licenses=(null) State=" + r.value("state", "") + " BurstBuffer=(null) Watts=n/a",
      "MaxStartDelay=(null)"};
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string line = printable(lines[i]);  // a name's newline must not start a line
    if (one_liner)
      out += (i == 0 ? "" : " ") + line;
    else
      out += (i == 0 ? "" : "   ") + line + "\n";
  }
  return out + "\n";
}

}  // namespace

int reservation_show(const std::string& name, bool one_liner) {
  json r = call_controller(proto::QueryRequest{.what = "reservations"});
  const auto& list = r.at("reservations");
  if (list.empty()) {
    std::cout << "No reservations in the system\n";
    return 0;
  }
  bool found = false;
  for (const auto& resv : list) {
    if (!name.empty() && resv.value("name", "") != name) continue;
    found = true;
    std::cout << format_reservation(resv, one_liner);
  }
  if (!found) {
    std::cout << "Reservation " << name << " not found\n";
    return 1;
  }
  return 0;
}

int reservation_create_or_update(bool create, const std::vector<std::string>& words) {
  const char* verb = create ? "created" : "updated";
  core::ResvRequest req;
  try {
    req = core::parse_resv_words(words, std::time(nullptr));
  } catch (const core::ParseError& e) {
    std::cerr << "scontrol: error: " << e.what() << "  No reservation " << verb << ".\n";
    return 1;
  }
  if (create) {
    // What scontrol itself insists on before asking the controller.
    std::string missing;
    if (!req.start)
      missing = "A start time must be given.";
    else if (!req.end && !req.duration_min)
      missing = "An end time or duration must be given.";
    else if (!req.users && !req.accounts && req.users_add.empty() && req.accounts_add.empty())
      missing = "Either Users/Groups and/or Accounts must be specified.";
    else if (!req.nodes && !req.node_cnt)
      missing = "Nodes, NodeCnt, CoreCnt, Licenses, BurstBuffer or Watts must be specified.";
    if (!missing.empty()) {
      std::cerr << "scontrol: error: " << missing << "  No reservation created.\n";
      return 1;
    }
  } else if (req.name.empty()) {
    std::cerr << "scontrol: error: Reservation must be given.  No reservation update.\n";
    return 1;
  }
  const auto r =
      ask(proto::ReservationRequest{.action = create ? "create" : "update", .request = req});
  if (const proto::ErrorReply* refused = r.refusal()) {
    const proto::Error& error = refused->error;
    const std::string& err = error.message;
    if (create) {
      std::cerr << "Error creating the reservation: " << err << '\n';
      if (error.code == proto::Errno::kNodesBusy)
        std::cerr << "Note, unless nodes are directly requested a reservation must exist in a "
                     "single partition.\nIf no partition is requested the default partition is "
                     "assumed.\n";
    } else {
      std::cerr << "Error updating the reservation: " << err << '\n'
                << "slurm_update error: " << err << '\n';
    }
    return 1;
  }
  if (create)
    std::cout << "Reservation created: " << r->name.value_or("") << '\n';
  else
    std::cout << "Reservation updated.\n";
  return 0;
}

int reservation_delete(const std::string& tag, const std::string& name) {
  const auto r = ask(proto::ReservationRequest{.action = "delete", .name = name});
  if (const proto::ErrorReply* refused = r.refusal()) {
    // Slurm names the word the reservation was given by, as typed.
    std::cerr << "delete_reservation " << tag << ": " << refused->error.message << '\n';
    return 1;
  }
  return 0;
}

}  // namespace drover::cli
