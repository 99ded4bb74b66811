#pragma once
// The association tables (accounts, users, associations, QOS: core/acct_data.hpp) as both
// accounting backends keep them: the schema, the rows an AcctData becomes and back, and the
// difference between two sets of rows, so a change writes only the rows it touches. An
// association's settings and a QOS's fields are kept as the ':'-separated options of their
// accounts.cfg lines (core/acct_dump.hpp), readable and the same text the file takes.
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/acct_data.hpp"
#include "store/accounting.hpp"
#include "store/accounting_sql.hpp"

namespace drover::store::assoc_sql {

// CREATE TABLE ... IF NOT EXISTS for acct_accounts, acct_users, acct_assocs, acct_qos and
// acct_meta.
std::span<const char* const> schema();

struct Table {
  const char* name;
  std::vector<const char*> columns;  // the first is the primary key
  std::vector<bool> is_text;         // per column
};
const std::vector<Table>& tables();

using Row = std::vector<acct_sql::Value>;
// Every table's rows by the text of their key.
using Rows = std::map<std::string, std::map<std::string, Row>>;
std::string key_text(const acct_sql::Value& key);

Rows rows_of(const StoredAssocData& data);
// Throws std::runtime_error ("accounting: ...") for rows that do not make an AcctData (a
// setting the parser refuses). nullopt when nothing is stored (no meta row for the cluster).
std::optional<StoredAssocData> data_of(const Rows& rows);

struct Diff {
  std::vector<std::pair<const Table*, Row>> upserts;              // new or changed rows
  std::vector<std::pair<const Table*, acct_sql::Value>> deletes;  // keys of rows gone
  bool empty() const { return upserts.empty() && deletes.empty(); }
};
Diff diff(const Rows& before, const Rows& after);

// "INSERT INTO t (c1, c2) VALUES (<p1>, <p2>) ON CONFLICT (c1) DO UPDATE SET c2 = excluded.c2"
// and "DELETE FROM t WHERE c1 = <p1>", with `placeholder(n)` spelling the n-th parameter.
std::string upsert_sql(const Table& t, const std::function<std::string(size_t)>& placeholder);
std::string delete_sql(const Table& t, const std::function<std::string(size_t)>& placeholder);
std::string select_sql(const Table& t);

}  // namespace drover::store::assoc_sql
