// Choosing the accounting backend from configuration (AccountingStorageType).
#include "store/accounting.hpp"

namespace drover::store {

std::string AccountingStorage::describe() const {
  if (type == Type::Sqlite) return "SQLite " + sqlite_path;
  return "PostgreSQL " + (pgsql.user.empty() ? "" : pgsql.user + "@") + pgsql.host + ":" +
         std::to_string(pgsql.port) + "/" + pgsql.database;
}

std::unique_ptr<AccountingStore> open_accounting(const AccountingStorage& storage) {
  if (storage.type == AccountingStorage::Type::Pgsql) return open_pgsql_accounting(storage.pgsql);
  return open_sqlite_accounting(storage.sqlite_path);
}

}  // namespace drover::store
