#include "proto/data_parser/envelope.hpp"

namespace drover::proto::data_parser {

json envelope(const Meta& meta) {
  return {{"meta",
           {{"plugin",
             {{"type", meta.plugin_type},
              {"name", meta.plugin_name},
              {"data_parser", std::string("data_parser/") + kVersion},
              {"accounting_storage", "accounting_storage/drover"}}},
            {"client", {{"source", meta.source}, {"user", meta.user}, {"group", meta.group}}},
            {"command", meta.command},
            {"slurm",
             {{"version", {{"major", "25"}, {"minor", "11"}, {"micro", "0"}}},
              {"release", kSlurmRelease},
              {"cluster", meta.cluster}}}}},
          {"errors", json::array()},
          {"warnings", json::array()}};
}

json error_entry(int number, const std::string& description, const std::string& source) {
  return {{"description", description},
          {"error_number", number},
          {"error", error_text(number)},
          {"source", source}};
}

json warning_entry(const std::string& description, const std::string& source) {
  return {{"description", description}, {"source", source}};
}

std::string error_text(int number) {
  using namespace errnum;
  switch (number) {
    case kInvalidPartitionName:
      return "Invalid partition name specified";
    case kAccessDenied:
      return "Access/permission denied";
    case kJobScriptMissing:
      return "Job script not specified";
    case kUserIdMissing:
      return "Invalid user id";
    case kInvalidJobId:
      return "Invalid job id specified";
    case kInvalidNodeName:
      return "Invalid node name specified";
    case kAlreadyDone:
      return "Job/step already completing or completed";
    case kJobPending:
      return "Job is pending execution";
    case kReservationInvalid:
      return "Requested reservation is invalid";
    case kEnvironmentMissing:
      return "Environment is missing in job";
    case kAuthCredInvalid:
      return "Invalid authentication credential";
    case kDbConnection:
      return "Unable to connect to database";
    case kRestInvalidQuery:
      return "Query empty or not RFC7320 compliant";
    case kRestFailParsing:
      return "Failure during parsing";
    case kRestEmptyResult:
      return "Nothing found with query";
    case kRestAuthFail:
      return "Authentication failure";
    case kRestUnknownUrlMethod:
      return "Requested HTTP query method is not supported at URL endpoint";
    case kUrlInvalidPath:
      return "Invalid or unknown URL path";
    default:
      return "Unspecified error";
  }
}

}  // namespace drover::proto::data_parser
