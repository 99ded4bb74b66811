// The association tables both accounting backends keep: schema, rows <-> AcctData, row diffs.
#include "store/assoc_sql.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/error.hpp"
#include "core/text.hpp"

namespace drover::store::assoc_sql {
namespace {

constexpr const char* kSchema[] = {
    "CREATE TABLE IF NOT EXISTS acct_accounts (name TEXT PRIMARY KEY,"
    " description TEXT NOT NULL, organization TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acct_users (name TEXT PRIMARY KEY,"
    " default_account TEXT NOT NULL, admin_level TEXT NOT NULL, default_wckey TEXT NOT NULL,"
    " coordinators TEXT NOT NULL, wckeys TEXT NOT NULL)",
    // settings: Fairshare, DefaultQOS, QOS and limits as accounts.cfg options.
    "CREATE TABLE IF NOT EXISTS acct_assocs (id BIGINT PRIMARY KEY, account TEXT NOT NULL,"
    " user_name TEXT NOT NULL, partition_name TEXT NOT NULL, parent_account TEXT NOT NULL,"
    " settings TEXT NOT NULL)",
    "CREATE TABLE IF NOT EXISTS acct_qos (id BIGINT PRIMARY KEY, name TEXT NOT NULL,"
    " settings TEXT NOT NULL)",
    // cluster, classification, next_assoc_id, next_qos_id, seeded_from
    "CREATE TABLE IF NOT EXISTS acct_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)",
};

bool same(const Row& a, const Row& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i].is_text != b[i].is_text || a[i].number != b[i].number || a[i].text != b[i].text)
      return false;
  return true;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : ",") + s;
  return out;
}

const std::string& text_at(const Row& r, size_t i) { return r.at(i).text; }
int64_t number_at(const Row& r, size_t i) { return r.at(i).number; }

}  // namespace

std::span<const char* const> schema() { return kSchema; }

std::string key_text(const acct_sql::Value& v) {
  return v.is_text ? v.text : std::to_string(v.number);
}

const std::vector<Table>& tables() {
  static const std::vector<Table> kTables = {
      {"acct_accounts", {"name", "description", "organization"}, {true, true, true}},
      {"acct_users",
       {"name", "default_account", "admin_level", "default_wckey", "coordinators", "wckeys"},
       {true, true, true, true, true, true}},
      {"acct_assocs",
       {"id", "account", "user_name", "partition_name", "parent_account", "settings"},
       {false, true, true, true, true, true}},
      {"acct_qos", {"id", "name", "settings"}, {false, true, true}},
      {"acct_meta", {"name", "value"}, {true, true}},
  };
  return kTables;
}

Rows rows_of(const StoredAssocData& stored) {
  const core::AcctData& d = stored.data;
  Rows out;
  auto put = [&](const char* t, Row row) {
    const std::string key = key_text(row.front());
    out[t][key] = std::move(row);
  };
  for (const auto& a : d.accounts) put("acct_accounts", {a.name, a.description, a.organization});
  for (const auto& u : d.users)
    put("acct_users", {u.name, u.default_account, u.admin_level, u.default_wckey,
                       joined(u.coordinators), joined(u.wckeys)});
  for (const auto& a : d.assocs)
    put("acct_assocs", {int64_t{a.id}, a.account, a.user, a.partition, a.parent,
                        core::format_assoc_options(a.settings)});
  for (const auto& q : d.qos) put("acct_qos", {int64_t{q.id}, q.name, core::format_qos_options(q)});
  const std::pair<const char*, std::string> meta[] = {
      {"cluster", d.cluster},
      {"classification", d.classification},
      {"next_assoc_id", std::to_string(d.next_assoc_id)},
      {"next_qos_id", std::to_string(d.next_qos_id)},
      {"seeded_from", stored.seeded_from},
  };
  for (const auto& [name, value] : meta) put("acct_meta", {std::string(name), value});
  // Tables without rows are there too, so a diff clears them.
  for (const auto& t : tables()) out[t.name];
  return out;
}

std::optional<StoredAssocData> data_of(const Rows& rows) {
  auto table_rows = [&](const char* name) -> const std::map<std::string, Row>& {
    static const std::map<std::string, Row> kNone;
    auto it = rows.find(name);
    return it == rows.end() ? kNone : it->second;
  };
  const auto& meta = table_rows("acct_meta");
  auto meta_value = [&](const char* name) -> std::string {
    auto it = meta.find(name);
    return it == meta.end() ? std::string() : text_at(it->second, 1);
  };
  if (!meta.count("cluster")) return std::nullopt;
  StoredAssocData out;
  core::AcctData& d = out.data;
  d.cluster = meta_value("cluster");
  d.classification = meta_value("classification");
  out.seeded_from = meta_value("seeded_from");
  try {
    d.next_assoc_id = static_cast<uint32_t>(std::stoul(meta_value("next_assoc_id")));
    d.next_qos_id = static_cast<uint32_t>(std::stoul(meta_value("next_qos_id")));
  } catch (const std::exception&) {
    throw std::runtime_error("accounting: acct_meta holds no valid next ids");
  }
  for (const auto& [key, r] : table_rows("acct_accounts"))
    d.accounts.push_back({text_at(r, 0), text_at(r, 1), text_at(r, 2)});
  for (const auto& [key, r] : table_rows("acct_users")) {
    core::AcctUser u;
    u.name = text_at(r, 0);
    u.default_account = text_at(r, 1);
    u.admin_level = text_at(r, 2);
    u.default_wckey = text_at(r, 3);
    u.coordinators = core::split_list(text_at(r, 4), ',');
    u.wckeys = core::split_list(text_at(r, 5), ',');
    d.users.push_back(std::move(u));
  }
  try {
    for (const auto& [key, r] : table_rows("acct_assocs")) {
      core::AcctAssoc a;
      a.id = static_cast<uint32_t>(number_at(r, 0));
      a.account = text_at(r, 1);
      a.user = text_at(r, 2);
      a.partition = text_at(r, 3);
      a.parent = text_at(r, 4);
      core::parse_assoc_options(text_at(r, 5), a.settings,
                                "acct_assocs id " + std::to_string(a.id));
      d.assocs.push_back(std::move(a));
    }
    for (const auto& [key, r] : table_rows("acct_qos")) {
      core::QosLine q;
      q.id = static_cast<uint32_t>(number_at(r, 0));
      q.name = text_at(r, 1);
      core::parse_qos_options(text_at(r, 2), q, "acct_qos " + q.name);
      d.qos.push_back(std::move(q));
    }
  } catch (const core::ParseError& e) {
    throw std::runtime_error(std::string("accounting: ") + e.what());
  }
  // Rows come by key text; the data keeps accounts and users by name, the rest by id.
  auto by_id = [](const auto& x, const auto& y) { return x.id < y.id; };
  std::sort(d.assocs.begin(), d.assocs.end(), by_id);
  std::sort(d.qos.begin(), d.qos.end(), by_id);
  return out;
}

Diff diff(const Rows& before, const Rows& after) {
  Diff out;
  for (const auto& t : tables()) {
    static const std::map<std::string, Row> kNone;
    auto b = before.find(t.name);
    auto a = after.find(t.name);
    const auto& old_rows = b == before.end() ? kNone : b->second;
    const auto& new_rows = a == after.end() ? kNone : a->second;
    for (const auto& [key, row] : old_rows)
      if (!new_rows.count(key)) out.deletes.emplace_back(&t, row.front());
    for (const auto& [key, row] : new_rows) {
      auto it = old_rows.find(key);
      if (it == old_rows.end() || !same(it->second, row)) out.upserts.emplace_back(&t, row);
    }
  }
  return out;
}

std::string upsert_sql(const Table& t, const std::function<std::string(size_t)>& placeholder) {
  std::string cols, values, updates;
  for (size_t i = 0; i < t.columns.size(); ++i) {
    cols += (i ? ", " : "") + std::string(t.columns[i]);
    values += (i ? ", " : "") + placeholder(i + 1);
    if (i > 0)
      updates += (i > 1 ? ", " : "") + std::string(t.columns[i]) + " = excluded." + t.columns[i];
  }
  return std::string("INSERT INTO ") + t.name + " (" + cols + ") VALUES (" + values +
         ") ON CONFLICT (" + t.columns.front() + ") DO UPDATE SET " + updates;
}

std::string delete_sql(const Table& t, const std::function<std::string(size_t)>& placeholder) {
  return std::string("DELETE FROM ") + t.name + " WHERE " + t.columns.front() + " = " +
         placeholder(1);
}

std::string select_sql(const Table& t) {
  std::string cols;
  for (size_t i = 0; i < t.columns.size(); ++i) cols += (i ? ", " : "") + std::string(t.columns[i]);
  return "SELECT " + cols + " FROM " + t.name;
}

}  // namespace drover::store::assoc_sql
