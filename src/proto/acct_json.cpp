#include "proto/acct_json.hpp"

namespace drover::core {

using nlohmann::json;

void to_json(json& j, const AcctData& d) {
  json accounts = json::array(), users = json::array(), assocs = json::array(), qos = json::array();
  for (const auto& a : d.accounts)
    accounts.push_back(
        {{"name", a.name}, {"description", a.description}, {"organization", a.organization}});
  for (const auto& u : d.users)
    users.push_back({{"name", u.name},
                     {"default_account", u.default_account},
                     {"admin_level", u.admin_level},
                     {"default_wckey", u.default_wckey},
                     {"coordinators", u.coordinators},
                     {"wckeys", u.wckeys}});
  for (const auto& a : d.assocs)
    assocs.push_back({{"id", a.id},
                      {"account", a.account},
                      {"user", a.user},
                      {"partition", a.partition},
                      {"parent", a.parent},
                      {"settings", format_assoc_options(a.settings)}});
  for (const auto& q : d.qos)
    qos.push_back({{"id", q.id}, {"name", q.name}, {"settings", format_qos_options(q)}});
  j = {{"cluster", d.cluster},
       {"classification", d.classification},
       {"accounts", std::move(accounts)},
       {"users", std::move(users)},
       {"assocs", std::move(assocs)},
       {"qos", std::move(qos)},
       {"next_assoc_id", d.next_assoc_id},
       {"next_qos_id", d.next_qos_id}};
}

void from_json(const json& j, AcctData& d) {
  d = AcctData{};
  d.cluster = j.at("cluster").get<std::string>();
  d.classification = j.value("classification", "");
  for (const auto& a : j.at("accounts"))
    d.accounts.push_back({a.at("name"), a.value("description", ""), a.value("organization", "")});
  for (const auto& u : j.at("users")) {
    AcctUser rec;
    rec.name = u.at("name");
    rec.default_account = u.value("default_account", "");
    rec.admin_level = u.value("admin_level", "None");
    rec.default_wckey = u.value("default_wckey", "");
    rec.coordinators = u.value("coordinators", std::vector<std::string>{});
    rec.wckeys = u.value("wckeys", std::vector<std::string>{});
    d.users.push_back(std::move(rec));
  }
  for (const auto& a : j.at("assocs")) {
    AcctAssoc rec;
    rec.id = a.at("id");
    rec.account = a.at("account");
    rec.user = a.value("user", "");
    rec.partition = a.value("partition", "");
    rec.parent = a.value("parent", "");
    parse_assoc_options(a.value("settings", ""), rec.settings,
                        "association " + std::to_string(rec.id));
    d.assocs.push_back(std::move(rec));
  }
  for (const auto& q : j.at("qos")) {
    QosLine rec;
    rec.id = q.at("id");
    rec.name = q.at("name");
    parse_qos_options(q.value("settings", ""), rec, "QOS " + rec.name);
    d.qos.push_back(std::move(rec));
  }
  d.next_assoc_id = j.at("next_assoc_id");
  d.next_qos_id = j.at("next_qos_id");
}

namespace {
const char* action_name(AcctRequest::Action a) {
  switch (a) {
    case AcctRequest::Action::Add:
      return "add";
    case AcctRequest::Action::Modify:
      return "modify";
    case AcctRequest::Action::Delete:
      return "delete";
  }
  return "";
}
const char* entity_name(AcctRequest::Entity e) {
  switch (e) {
    case AcctRequest::Entity::Account:
      return "account";
    case AcctRequest::Entity::User:
      return "user";
    case AcctRequest::Entity::Qos:
      return "qos";
  }
  return "";
}
}  // namespace

void to_json(json& j, const AcctRequest& r) {
  json fields = json::array();
  for (const auto& [k, v] : r.fields) fields.push_back({k, v});
  j = {{"action", action_name(r.action)},
       {"entity", entity_name(r.entity)},
       {"names", r.names},
       {"accounts", r.accounts},
       {"partitions", r.partitions},
       {"clusters", r.clusters},
       {"parents", r.parents},
       {"fields", std::move(fields)},
       {"settings", r.settings},
       {"qos_op", r.qos_op == 0 ? std::string() : std::string(1, r.qos_op)},
       {"qos", r.qos}};
}

void from_json(const json& j, AcctRequest& r) {
  r = AcctRequest{};
  const std::string action = j.at("action"), entity = j.at("entity");
  if (action == "add")
    r.action = AcctRequest::Action::Add;
  else if (action == "modify")
    r.action = AcctRequest::Action::Modify;
  else if (action == "delete")
    r.action = AcctRequest::Action::Delete;
  else
    throw std::invalid_argument("unknown action '" + action + "'");
  if (entity == "account")
    r.entity = AcctRequest::Entity::Account;
  else if (entity == "user")
    r.entity = AcctRequest::Entity::User;
  else if (entity == "qos")
    r.entity = AcctRequest::Entity::Qos;
  else
    throw std::invalid_argument("unknown entity '" + entity + "'");
  auto list = [&](const char* key) { return j.value(key, std::vector<std::string>{}); };
  r.names = list("names");
  r.accounts = list("accounts");
  r.partitions = list("partitions");
  r.clusters = list("clusters");
  r.parents = list("parents");
  for (const auto& f : j.value("fields", json::array()))
    r.fields.emplace_back(f.at(0).get<std::string>(), f.at(1).get<std::string>());
  r.settings = j.value("settings", "");
  const std::string op = j.value("qos_op", "");
  if (op.size() == 1 && (op[0] == '=' || op[0] == '+' || op[0] == '-')) r.qos_op = op[0];
  r.qos = list("qos");
}

void to_json(json& j, const UsageReport& r) {
  json assocs = json::array();
  for (const auto& a : r.assocs)
    assocs.push_back({{"account", a.account}, {"user", a.user}, {"used", a.used}});
  const UsageTotals& c = r.cluster;
  j = {{"allocated", c.allocated}, {"down", c.down},       {"planned_down", c.planned_down},
       {"idle", c.idle},           {"planned", c.planned}, {"over_committed", c.over_committed},
       {"reported", c.reported},   {"count", c.count},     {"assocs", std::move(assocs)}};
}

void from_json(const json& j, UsageReport& r) {
  r = UsageReport{};
  UsageTotals& c = r.cluster;
  j.at("allocated").get_to(c.allocated);
  j.at("down").get_to(c.down);
  j.at("planned_down").get_to(c.planned_down);
  j.at("idle").get_to(c.idle);
  j.at("planned").get_to(c.planned);
  j.at("over_committed").get_to(c.over_committed);
  j.at("reported").get_to(c.reported);
  j.at("count").get_to(c.count);
  for (const auto& a : j.at("assocs"))
    r.assocs.push_back(
        {a.at("account"), a.at("user"), a.at("used").get<std::map<std::string, int64_t>>()});
}

}  // namespace drover::core
