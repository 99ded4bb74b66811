#include "proto/error.hpp"

#include <utility>

namespace drover::proto {
using nlohmann::json;

namespace {
// Slurm 22.05's wording of each number (what slurm_strerror says).
constexpr std::pair<Errno, std::string_view> kTexts[] = {
    {Errno::kError, "Unspecified error"},
    {Errno::kProtocolVersion, "Incompatible versions of client and server code"},
    {Errno::kAuthentication, "Protocol authentication error"},
    {Errno::kControllerUnreachable, "Unable to contact slurm controller (connect failure)"},
    {Errno::kInvalidPartitionName, "Invalid partition name specified"},
    {Errno::kDefaultPartitionNotSet, "No partition specified or system default partition"},
    {Errno::kAccessDenied, "Access/permission denied"},
    {Errno::kTooManyRequestedCpus, "More processors requested than permitted"},
    {Errno::kInvalidNodeCount, "Node count specification invalid"},
    {Errno::kJobScriptMissing, "Job script not specified"},
    {Errno::kUserIdMissing, "Invalid user id"},
    {Errno::kPathnameTooLong, "Pathname of a file, directory or other parameter too long"},
    {Errno::kRequestedNodeConfigUnavailable, "Requested node configuration is not available"},
    {Errno::kRequestedPartConfigUnavailable, "Requested partition configuration not available now"},
    {Errno::kNodesBusy, "Requested nodes are busy"},
    {Errno::kInvalidJobId, "Invalid job id specified"},
    {Errno::kInvalidNodeName, "Invalid node name specified"},
    {Errno::kAlreadyDone, "Job/step already completing or completed"},
    {Errno::kJobPending, "Job is pending execution"},
    {Errno::kInvalidNodeState, "Invalid node state specified"},
    {Errno::kInvalidFeature, "Invalid feature specification"},
    {Errno::kActiveFeatureNotSubset, "Active features not subset of available features"},
    {Errno::kNotSupported, "Requested operation not supported on this system"},
    {Errno::kDisabled, "Requested operation is presently disabled"},
    {Errno::kDependency, "Job dependency problem"},
    {Errno::kJobHeld, "Job is in held state, pending scheduler release"},
    {Errno::kInvalidTaskMemory, "Memory required by task is not available"},
    {Errno::kInvalidAccount, "Invalid account or account/partition combination specified"},
    {Errno::kInvalidLicenses, "Invalid license specification"},
    {Errno::kAccountingPolicy,
     "Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"},
    {Errno::kInvalidTimeLimit, "Requested time limit is invalid (missing or exceeds some limit)"},
    {Errno::kReservationAccess, "Access denied to requested reservation"},
    {Errno::kReservationInvalid, "Requested reservation is invalid"},
    {Errno::kInvalidTimeValue, "Invalid time specified"},
    {Errno::kReservationBusy, "Requested reservation is in use"},
    {Errno::kReservationOverlap, "Requested reservation overlaps with another reservation"},
    {Errno::kInvalidQos, "Invalid qos specification"},
    {Errno::kPartitionNotAvail, "Required partition not available (inactive or drain)"},
    {Errno::kInvalidGres, "Invalid generic resource (gres) specification"},
    {Errno::kJobNotPending, "Job is no longer pending execution"},
    {Errno::kInvalidArray, "Invalid job array specification"},
    {Errno::kReservationNameDup, "Duplicate reservation name"},
    {Errno::kJobFinished, "Job has already finished"},
    {Errno::kJobNotRunning, "Job is not running"},
    {Errno::kJobNotPendingNorRunning, "Job is not pending nor running"},
    {Errno::kInternal, "Slurm internal error, contact system administrator"},
    {Errno::kInvalidNice, "Invalid --nice value"},
    {Errno::kEnvironmentMissing, "Environment is missing in job"},
    {Errno::kAuthCredInvalid, "Invalid authentication credential"},
    {Errno::kDbConnection, "Unable to connect to database"},
    {Errno::kRestInvalidQuery, "Query empty or not RFC7320 compliant"},
    {Errno::kRestFailParsing, "Failure during parsing"},
    {Errno::kRestEmptyResult, "Nothing found with query"},
    {Errno::kRestUnknownUrlMethod, "Requested HTTP query method is not supported at URL endpoint"},
    {Errno::kRestAuthFail, "Authentication failure"},
    {Errno::kUrlInvalidPath, "Invalid or unknown URL path"},
};
}  // namespace

std::string_view errno_text(Errno code) {
  for (const auto& [c, text] : kTexts)
    if (c == code) return text;
  return "Unspecified error";
}

Errno errno_for(std::string_view message) {
  for (const auto& [c, text] : kTexts)
    if (text == message) return c;
  return Errno::kError;
}

Error Error::from_message(std::string message) {
  const Errno code = errno_for(message);
  return Error(code, std::move(message));
}

json Error::reply() const {
  return {{"ok", false}, {"error", message}, {"errno", static_cast<int>(code)}};
}

Error Error::from_entry(const json& entry) {
  std::string message;
  if (auto it = entry.find("error"); it != entry.end() && it->is_string()) message = *it;
  if (auto it = entry.find("errno"); it != entry.end() && it->is_number_integer()) {
    const auto code = static_cast<Errno>(it->get<int>());
    return Error(code, message.empty() ? std::string(errno_text(code)) : std::move(message));
  }
  if (message.empty()) return Error(Errno::kError);
  return from_message(std::move(message));
}

std::optional<Error> Error::from_reply(const json& reply) {
  if (!reply.is_object()) return Error(Errno::kError, "malformed reply");
  if (auto ok = reply.find("ok"); ok != reply.end() && ok->is_boolean() && ok->get<bool>())
    return std::nullopt;
  return from_entry(reply);
}

}  // namespace drover::proto
