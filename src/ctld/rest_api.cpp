#include "ctld/rest_api.hpp"

#include <functional>

#include "ctld/rest_handlers.hpp"

namespace drover::ctld {

using nlohmann::json;

namespace {

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string url_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '+') {
      out += ' ';
    } else if (s[i] == '%' && i + 2 < s.size() && hex_digit(s[i + 1]) >= 0 &&
               hex_digit(s[i + 2]) >= 0) {
      out += static_cast<char>(hex_digit(s[i + 1]) * 16 + hex_digit(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// The path after the API prefix, split at '/' without empty parts: "job/12/" -> {job, 12}.
std::vector<std::string> segments(std::string_view rest) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= rest.size()) {
    auto slash = rest.find('/', start);
    if (slash == std::string_view::npos) slash = rest.size();
    if (slash > start) out.push_back(url_decode(rest.substr(start, slash - start)));
    start = slash + 1;
  }
  return out;
}

}  // namespace

namespace rest {
namespace {

// Runs the handler for `method`; a known path asked with another method gets 405.
bool dispatch(Call& call,
              std::initializer_list<std::pair<const char*, std::function<void()>>> by_method) {
  for (const auto& [method, handler] : by_method)
    if (call.req.method == method) {
      handler();
      return true;
    }
  call.error(405, rest_errno::kRestUnknownUrlMethod,
             "Method " + call.req.method + " is not supported at " + call.req.path, "router");
  return true;
}

}  // namespace

bool route_slurm(const std::vector<std::string>& p, Call& call) {
  const std::string first = p.empty() ? "" : p[0];
  const std::string second = p.size() > 1 ? p[1] : "";
  if (p.size() > 2) return false;
  if (p.size() == 1) {
    if (first == "ping") return dispatch(call, {{"GET", [&] { get_ping(call); }}});
    if (first == "diag") return dispatch(call, {{"GET", [&] { get_diag(call); }}});
    if (first == "jobs") return dispatch(call, {{"GET", [&] { get_jobs(call); }}});
    if (first == "nodes") return dispatch(call, {{"GET", [&] { get_nodes(call, ""); }}});
    if (first == "partitions") return dispatch(call, {{"GET", [&] { get_partitions(call, ""); }}});
    if (first == "reservations")
      return dispatch(call, {{"GET", [&] { get_reservations(call, ""); }}});
    if (first == "shares") return dispatch(call, {{"GET", [&] { get_shares(call); }}});
    return false;
  }
  if (p.size() != 2) return false;
  if (first == "job" && second == "submit")
    return dispatch(call, {{"POST", [&] { submit_job(call); }}});
  if (first == "job")
    return dispatch(call, {{"GET", [&] { get_job(call, second); }},
                           {"DELETE", [&] { delete_job(call, second); }}});
  if (first == "node") return dispatch(call, {{"GET", [&] { get_nodes(call, second); }}});
  if (first == "partition") return dispatch(call, {{"GET", [&] { get_partitions(call, second); }}});
  if (first == "reservation")
    return dispatch(call, {{"GET", [&] { get_reservations(call, second); }}});
  return false;
}

bool route_slurmdb(const std::vector<std::string>& p, Call& call) {
  if (p.size() == 1) {
    const std::string& first = p[0];
    if (first == "jobs") return dispatch(call, {{"GET", [&] { get_db_jobs(call, ""); }}});
    if (first == "accounts") return dispatch(call, {{"GET", [&] { get_db_accounts(call); }}});
    if (first == "users") return dispatch(call, {{"GET", [&] { get_db_users(call); }}});
    if (first == "associations")
      return dispatch(call, {{"GET", [&] { get_db_associations(call); }}});
    if (first == "qos") return dispatch(call, {{"GET", [&] { get_db_qos(call); }}});
    return false;
  }
  if (p.size() == 2 && p[0] == "job")
    return dispatch(call, {{"GET", [&] { get_db_jobs(call, p[1]); }}});
  return false;
}

}  // namespace rest

bool rest_reads_accounting(const RestRequest& req) {
  const std::string slurmdb = std::string("/slurmdb/") + kRestVersion + "/";
  if (req.method != "GET" || req.path.rfind(slurmdb, 0) != 0) return false;
  const auto parts = segments(std::string_view(req.path).substr(slurmdb.size()));
  return (parts.size() == 1 && parts[0] == "jobs") || (parts.size() == 2 && parts[0] == "job");
}

std::map<std::string, std::string> parse_query_string(const std::string& text) {
  std::map<std::string, std::string> out;
  std::size_t start = 0;
  while (start < text.size()) {
    auto amp = text.find('&', start);
    if (amp == std::string::npos) amp = text.size();
    const std::string_view pair(text.data() + start, amp - start);
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      out[url_decode(pair.substr(0, eq))] =
          eq == std::string_view::npos ? "" : url_decode(pair.substr(eq + 1));
    }
    start = amp + 1;
  }
  return out;
}

json rest_envelope(const Config& config, const Caller& who, const std::string& client,
                   bool slurmdb) {
  proto::data_parser::Meta meta;
  meta.plugin_type = slurmdb ? "openapi/slurmdbd" : "openapi/slurmctld";
  meta.plugin_name = slurmdb ? "Slurm OpenAPI slurmdbd" : "Slurm OpenAPI slurmctld";
  meta.source = client;
  meta.user = who.user;
  meta.group = who.group;
  meta.cluster = config.cluster_name;
  return proto::data_parser::envelope(meta);
}

RestResponse rest_failure(int status, int number, const std::string& description,
                          const std::string& source, const Config& config, const Caller& who,
                          const std::string& client, bool slurmdb) {
  RestResponse r{status, rest_envelope(config, who, client, slurmdb)};
  r.body["errors"].push_back(rest_error(number, description, source));
  return r;
}

RestResponse rest_handle(const RestRequest& req, RestContext& ctx) {
  const std::string slurm = std::string("/slurm/") + kRestVersion + "/";
  const std::string slurmdb = std::string("/slurmdb/") + kRestVersion + "/";
  const bool db = req.path.rfind(slurmdb, 0) == 0;
  const bool ctl = req.path.rfind(slurm, 0) == 0;
  auto fail = [&](int status, int number, const std::string& description) {
    return rest_failure(status, number, description, req.method + " " + req.path, ctx.config,
                        ctx.who, req.client, db);
  };
  if (!db && !ctl)
    return fail(404, rest_errno::kUrlInvalidPath,
                "Unknown path (this API speaks data_parser " + std::string(kRestVersion) + ")");
  const auto parts =
      segments(std::string_view(req.path).substr(db ? slurmdb.size() : slurm.size()));
  rest::Call call{req, ctx, rest_envelope(ctx.config, ctx.who, req.client, db), 200};
  const bool known = db ? rest::route_slurmdb(parts, call) : rest::route_slurm(parts, call);
  if (!known) return fail(404, rest_errno::kUrlInvalidPath, "Unknown path " + req.path);
  return {call.status, std::move(call.body)};
}

}  // namespace drover::ctld
