#pragma once
// The one error type of drover's replies: Slurm's error number and its message. A reply that
// fails is {"ok": false, "error": message, "errno": number}; the commands print the message
// (Slurm's wording where Slurm has one) and decide on the number (scancel's benign errors,
// its exit status), so they never compare texts.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace drover::proto {

// The error numbers drover answers with, as Slurm 22.05 numbers them (slurm_errno); the text
// of each is errno_text's, Slurm's wording. kError is SLURM_ERROR: a failure Slurm has no
// number for (drover's own checks, a configuration file's line). The REST API's numbers
// (9000 on, 11008) are slurmrestd 25.11's, whose data_parser v0.0.44 it serves.
enum class Errno : int {
  kError = -1,
  kProtocolVersion = 1005,
  kAuthentication = 1007,
  kControllerUnreachable = 1800,
  kInvalidPartitionName = 2000,
  kDefaultPartitionNotSet = 2001,
  kAccessDenied = 2002,
  kTooManyRequestedCpus = 2005,
  kInvalidNodeCount = 2006,
  kJobScriptMissing = 2009,
  kUserIdMissing = 2010,
  kPathnameTooLong = 2012,
  kRequestedNodeConfigUnavailable = 2014,
  kRequestedPartConfigUnavailable = 2015,
  kNodesBusy = 2016,
  kInvalidJobId = 2017,
  kInvalidNodeName = 2018,
  kAlreadyDone = 2021,
  kJobPending = 2024,
  kInvalidNodeState = 2028,
  kInvalidFeature = 2029,
  kActiveFeatureNotSubset = 2031,
  kNotSupported = 2036,
  kDisabled = 2037,
  kDependency = 2038,
  kJobHeld = 2042,
  kInvalidTaskMemory = 2044,
  kInvalidAccount = 2045,
  kInvalidLicenses = 2048,
  kAccountingPolicy = 2050,
  kInvalidTimeLimit = 2051,
  kReservationAccess = 2052,
  kReservationInvalid = 2053,
  kInvalidTimeValue = 2054,
  kReservationBusy = 2055,
  kReservationOverlap = 2058,
  kInvalidQos = 2066,
  kPartitionNotAvail = 2070,
  kInvalidGres = 2072,
  kJobNotPending = 2073,
  kInvalidArray = 2081,
  kReservationNameDup = 2082,
  kJobFinished = 2084,
  kJobNotRunning = 2085,
  kJobNotPendingNorRunning = 2086,
  kInternal = 2090,
  kInvalidNice = 2123,
  kEnvironmentMissing = 2127,
  kAuthCredInvalid = 6000,
  kDbConnection = 7000,
  kRestInvalidQuery = 9000,
  kRestFailParsing = 9001,
  kRestEmptyResult = 9003,
  kRestUnknownUrlMethod = 9007,
  kRestAuthFail = 9008,
  kUrlInvalidPath = 11008,
};

// Slurm's text for `code` ("Unspecified error" for kError).
std::string_view errno_text(Errno code);
// The number whose Slurm text `message` is; kError when it is none of them. For messages
// built elsewhere (a parser's, a layout's) that may be one of Slurm's.
Errno errno_for(std::string_view message);

struct Error {
  Errno code = Errno::kError;
  std::string message;

  Error() = default;
  // Slurm's own text.
  explicit Error(Errno c) : code(c), message(errno_text(c)) {}
  Error(Errno c, std::string m) : code(c), message(std::move(m)) {}
  // A message alone: its number when it is one of Slurm's texts, else kError.
  static Error from_message(std::string message);

  // {"ok": false, "error": message, "errno": number}
  nlohmann::json reply() const;
  // The error of a failed reply; nothing when it succeeded (ok). A controller that sent no
  // "errno" (an older one) is read by its message.
  static std::optional<Error> from_reply(const nlohmann::json& reply);
  // An entry of a reply's per-job "errors" list ({"job", "error", "errno"}).
  static Error from_entry(const nlohmann::json& entry);
};

}  // namespace drover::proto
