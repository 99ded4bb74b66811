#pragma once
// The envelope of every data_parser v0.0.44 document: "meta" (plugin, client, command, Slurm
// version and cluster), "errors" and "warnings". slurmrestd fills meta.plugin with its openapi
// plugin and meta.client with the peer; Slurm's commands leave the plugin type and name empty,
// give the terminal as the source and their argv as the command.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// Slurm's error numbers (slurm_errno.h) for the errors drover reports in documents.
namespace errnum {
inline constexpr int kError = -1;  // SLURM_ERROR
inline constexpr int kInvalidPartitionName = 2000;
inline constexpr int kAccessDenied = 2002;
inline constexpr int kJobScriptMissing = 2009;
inline constexpr int kUserIdMissing = 2010;
inline constexpr int kInvalidJobId = 2017;
inline constexpr int kInvalidNodeName = 2018;
inline constexpr int kAlreadyDone = 2021;
inline constexpr int kJobPending = 2024;
inline constexpr int kReservationInvalid = 2053;
inline constexpr int kEnvironmentMissing = 2127;
inline constexpr int kAuthCredInvalid = 6000;
inline constexpr int kDbConnection = 7000;  // ESLURM_DB_CONNECTION
inline constexpr int kRestInvalidQuery = 9000;
inline constexpr int kRestFailParsing = 9001;
inline constexpr int kRestEmptyResult = 9003;
inline constexpr int kRestUnknownUrlMethod = 9007;
inline constexpr int kRestAuthFail = 9008;
inline constexpr int kUrlInvalidPath = 11008;
}  // namespace errnum

// Slurm's short text for those numbers ("Invalid job id specified").
std::string error_text(int number);

}  // namespace drover::proto::data_parser
