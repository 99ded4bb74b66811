#pragma once
// --json for squeue, sinfo, sacct and scontrol show: one data_parser v0.0.44 document (the
// envelope and the command's list), each entry mapped by proto/data_parser exactly as the REST
// API maps it. The documents are pure functions of the controller's answers; the meta comes
// from the process (its terminal, user, group and argv), as Slurm's commands fill it.
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "cli/report_cmds.hpp"
#include "proto/data_parser/envelope.hpp"

namespace drover::cli {

using nlohmann::json;

// What --json[=PARSER] / --yaml[=PARSER] asked for.
struct JsonRequest {
  bool json = false;  // --json given
  bool yaml = false;  // --yaml given
  std::optional<std::string> parser;
};

// Takes "--json", "--json=PARSER", "--yaml" or "--yaml=PARSER" (getopt's optional argument:
// never the next word) into `req`; false for any other argument.
bool take_json_option(const std::string& arg, JsonRequest& req);

// What the command prints and exits with when the request ends it before any work: an error
// (exit 1) for a data_parser other than v0.0.44 or for --yaml, which drover does not write;
// Slurm's list of data_parser plugins for --json=list. Nothing: go on.
std::optional<CommandResult> json_preamble(const std::string& program, const JsonRequest& req);

// meta for a command: no plugin type or name, the terminal on stdin/stdout/stderr as the
// source, the calling user's and group's names, argv (program and arguments), the cluster.
proto::data_parser::Meta command_meta(const std::string& program,
                                      const std::vector<std::string>& args,
                                      const std::string& cluster);

// The text a command prints: the document indented by 2, then a newline.
std::string json_text(const json& doc);

// {"jobs": [job_info...], "last_backfill", "last_update"} from a `query jobs` answer (with
// detail) and the job views that passed the command's filters.
json jobs_document(const proto::data_parser::Meta& meta, const json& reply,
                   const std::vector<json>& jobs);
// {"nodes": [node...], "last_update"} from a `query nodes` answer and the nodes to show.
json nodes_document(const proto::data_parser::Meta& meta, const json& reply,
                    const std::vector<json>& nodes);
// {"partitions": [partition_info...], "last_update"} likewise.
json partitions_document(const proto::data_parser::Meta& meta, const json& reply,
                         const std::vector<json>& partitions);
// {"reservations": [reservation_info...], "last_update"} likewise.
json reservations_document(const proto::data_parser::Meta& meta, const json& reply,
                           const std::vector<json>& reservations);
// {"jobs": [slurmdb job...]} from sacct's records (acct_record_json form, steps as sacct
// selected them).
json acct_jobs_document(const proto::data_parser::Meta& meta, const std::vector<json>& records,
                        const std::string& cluster);

}  // namespace drover::cli
