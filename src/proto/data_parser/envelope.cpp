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

std::string error_text(int number) { return std::string(errno_text(static_cast<Errno>(number))); }

}  // namespace drover::proto::data_parser
