#pragma once
// The envelope of every data_parser v0.0.44 document: "meta" (plugin, client, command, Slurm
// version and cluster), "errors" and "warnings". slurmrestd fills meta.plugin with its openapi
// plugin and meta.client with the peer; Slurm's commands leave the plugin type and name empty,
// give the terminal as the source and their argv as the command.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "proto/error.hpp"

namespace drover::proto::data_parser {

using nlohmann::json;

inline constexpr const char* kVersion = "v0.0.44";
// The Slurm release data_parser v0.0.44 belongs to (25.11): what its clients check.
inline constexpr const char* kSlurmRelease = "25.11.0";

struct Meta {
  std::string plugin_type;           // "openapi/slurmctld", "openapi/slurmdbd"; "" for a command
  std::string plugin_name;           // "Slurm OpenAPI slurmctld"; "" for a command
  std::string source;                // the client: the peer's address, or a command's terminal
  std::string user, group;           // the caller's names
  std::vector<std::string> command;  // a command's argv; empty for the REST API
  std::string cluster;
};

// {"meta": ..., "errors": [], "warnings": []}; the answer's own keys are added to it.
json envelope(const Meta& meta);

// One entry of "errors": Slurm's error number, its short text and the description.
json error_entry(int number, const std::string& description, const std::string& source);
// One entry of "warnings".
json warning_entry(const std::string& description, const std::string& source);

// Slurm's error numbers for the errors drover reports in documents: proto::Errno's, as the
// documents' integers.
namespace errnum {
inline constexpr int kError = static_cast<int>(Errno::kError);
inline constexpr int kInvalidPartitionName = static_cast<int>(Errno::kInvalidPartitionName);
inline constexpr int kAccessDenied = static_cast<int>(Errno::kAccessDenied);
inline constexpr int kJobScriptMissing = static_cast<int>(Errno::kJobScriptMissing);
inline constexpr int kUserIdMissing = static_cast<int>(Errno::kUserIdMissing);
inline constexpr int kInvalidJobId = static_cast<int>(Errno::kInvalidJobId);
inline constexpr int kInvalidNodeName = static_cast<int>(Errno::kInvalidNodeName);
inline constexpr int kAlreadyDone = static_cast<int>(Errno::kAlreadyDone);
inline constexpr int kJobPending = static_cast<int>(Errno::kJobPending);
inline constexpr int kReservationInvalid = static_cast<int>(Errno::kReservationInvalid);
inline constexpr int kEnvironmentMissing = static_cast<int>(Errno::kEnvironmentMissing);
inline constexpr int kAuthCredInvalid = static_cast<int>(Errno::kAuthCredInvalid);
inline constexpr int kDbConnection = static_cast<int>(Errno::kDbConnection);
inline constexpr int kRestInvalidQuery = static_cast<int>(Errno::kRestInvalidQuery);
inline constexpr int kRestFailParsing = static_cast<int>(Errno::kRestFailParsing);
inline constexpr int kRestEmptyResult = static_cast<int>(Errno::kRestEmptyResult);
inline constexpr int kRestUnknownUrlMethod = static_cast<int>(Errno::kRestUnknownUrlMethod);
inline constexpr int kRestAuthFail = static_cast<int>(Errno::kRestAuthFail);
inline constexpr int kUrlInvalidPath = static_cast<int>(Errno::kUrlInvalidPath);
}  // namespace errnum

// Slurm's short text for those numbers ("Invalid job id specified").
std::string error_text(int number);

}  // namespace drover::proto::data_parser
