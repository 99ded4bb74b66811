#include "cli/json_output.hpp"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <climits>

#include "proto/data_parser/cluster.hpp"
#include "proto/data_parser/job_info.hpp"
#include "proto/data_parser/slurmdb_job.hpp"
#include "proto/data_parser/values.hpp"

namespace drover::cli {

namespace dp = proto::data_parser;

namespace {

// The terminal a command runs on, as Slurm names it (the path of stdin, else stdout, else
// stderr, when one is a terminal); "" when none is.
std::string terminal() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (!::isatty(fd)) continue;
    char path[PATH_MAX];
    const std::string link = "/proc/self/fd/" + std::to_string(fd);
    const ssize_t n = ::readlink(link.c_str(), path, sizeof path - 1);
    if (n > 0) return std::string(path, static_cast<size_t>(n));
  }
  return "";
}

json with_list(const dp::Meta& meta, const char* key, json list) {
  json doc = dp::envelope(meta);
  doc[key] = std::move(list);
  return doc;
}

}  // namespace

bool take_json_option(const std::string& arg, JsonRequest& req) {
  for (const char* flag : {"--json", "--yaml"}) {
    const std::string f = flag;
    if (arg != f && arg.rfind(f + "=", 0) != 0) continue;
    (f == "--json" ? req.json : req.yaml) = true;
    if (arg.size() > f.size()) req.parser = arg.substr(f.size() + 1);
    return true;
  }
  return false;
}

namespace {

std::string json_request_error(const std::string& program, const JsonRequest& req) {
  const std::string flag = req.yaml ? "--yaml" : "--json";
  if (req.yaml)
    return program + ": error: " + flag + " is not supported by drover: it writes data_parser/" +
           dp::kVersion + " documents as JSON only (use --json)\n";
  if (!req.parser || req.parser->empty() || *req.parser == "list") return "";
  const std::string& p = *req.parser;
  if (p == dp::kVersion || p == std::string("data_parser/") + dp::kVersion) return "";
  return program + ": error: " + flag + "=" + p + ": data_parser plugin not found (drover has " +
         "data_parser/" + dp::kVersion + " only; --json=list lists it)\n";
}

bool json_lists_parsers(const JsonRequest& req) {
  return (req.json || req.yaml) && req.parser && *req.parser == "list";
}

}  // namespace

std::optional<CommandResult> json_preamble(const std::string& program, const JsonRequest& req) {
  CommandResult r;
  if (std::string err = json_request_error(program, req); !err.empty()) {
    r.err = std::move(err);
    r.rc = 1;
    return r;
  }
  if (!json_lists_parsers(req)) return std::nullopt;
  r.err = "Possible data_parser plugins:\n";
  r.out = std::string("data_parser/") + dp::kVersion + "\n";
  return r;
}

dp::Meta command_meta(const std::string& program, const std::vector<std::string>& args,
                      const std::string& cluster) {
  dp::Meta m;
  m.source = terminal();
  if (const passwd* pw = ::getpwuid(::getuid())) m.user = pw->pw_name;
  if (const group* gr = ::getgrgid(::getgid())) m.group = gr->gr_name;
  m.command.push_back(program);
  m.command.insert(m.command.end(), args.begin(), args.end());
  m.cluster = cluster;
  return m;
}

std::string json_text(const json& doc) { return doc.dump(2) + "\n"; }

json jobs_document(const dp::Meta& meta, const json& reply, const std::vector<json>& jobs) {
  const std::string cluster = reply.value("cluster_name", std::string());
  json list = json::array();
  for (const auto& job : jobs) list.push_back(dp::job_info(job, cluster));
  json doc = with_list(meta, "jobs", std::move(list));
  doc["last_backfill"] = dp::time_value(dp::num(reply, "last_backfill"));
  doc["last_update"] = dp::time_value(dp::num(reply, "last_update"));
  return doc;
}

json nodes_document(const dp::Meta& meta, const json& reply, const std::vector<json>& nodes) {
  json list = json::array();
  for (const auto& n : nodes) list.push_back(dp::node_info(n));
  json doc = with_list(meta, "nodes", std::move(list));
  doc["last_update"] = dp::time_value(dp::num(reply, "now"));
  return doc;
}

json partitions_document(const dp::Meta& meta, const json& reply,
                         const std::vector<json>& partitions) {
  const std::string cluster = reply.value("cluster_name", std::string());
  json list = json::array();
  for (const auto& p : partitions) list.push_back(dp::partition_info(p, cluster));
  json doc = with_list(meta, "partitions", std::move(list));
  doc["last_update"] = dp::time_value(dp::num(reply, "now"));
  return doc;
}

json reservations_document(const dp::Meta& meta, const json& reply,
                           const std::vector<json>& reservations) {
  json list = json::array();
  for (const auto& r : reservations) list.push_back(dp::reservation_info(r));
  json doc = with_list(meta, "reservations", std::move(list));
  doc["last_update"] = dp::time_value(dp::num(reply, "now"));
  return doc;
}

json acct_jobs_document(const dp::Meta& meta, const std::vector<json>& records,
                        const std::string& cluster) {
  json list = json::array();
  for (const auto& r : records) list.push_back(dp::db_job(r, cluster));
  return with_list(meta, "jobs", std::move(list));
}

}  // namespace drover::cli
