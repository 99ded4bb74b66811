// Where job accounting goes: AccountingStorageType and the keys that say where the database is,
// in slurm.conf as Slurm names them. SQLite in the state directory is the default; PostgreSQL is
// drover's accounting_storage/pgsql. Passwords live in a file of their own, never in slurm.conf
// (which every user may read) or on a command line.
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "core/error.hpp"
#include "ctld/config.hpp"

namespace drover::ctld {

store::AccountingStorage parse_accounting_storage(const core::SlurmConf& s,
                                                  const std::string& source_name) {
  auto fail = [&](const std::string& what) { throw core::ParseError(source_name + ": " + what); };
  store::AccountingStorage out;
  const std::string type = s.get("AccountingStorageType", "accounting_storage/sqlite");
  // none and slurmdbd: drover records jobs itself either way (sacct keeps working).
  if (type == "accounting_storage/sqlite" || type == "accounting_storage/none" ||
      type == "accounting_storage/slurmdbd")
    out.type = store::AccountingStorage::Type::Sqlite;
  else if (type == "accounting_storage/pgsql")
    out.type = store::AccountingStorage::Type::Pgsql;
  else
    fail("AccountingStorageType=" + type +
         " is not supported (accounting_storage/sqlite, the default, or accounting_storage/pgsql)");

  const std::string loc = s.get("AccountingStorageLoc", "");
  if (out.type == store::AccountingStorage::Type::Sqlite) {
    if (!loc.empty() && loc.front() != '/')
      fail("AccountingStorageLoc=" + loc + ": the SQLite file must be an absolute path");
    out.sqlite_path = loc;  // empty: <state dir>/accounting.db
    return out;
  }

  store::PgsqlLocation& pg = out.pgsql;
  pg.host = s.get("AccountingStorageHost", "localhost");
  if (pg.host.empty()) fail("AccountingStorageHost is empty");
  const int64_t port = s.get_int("AccountingStoragePort", 5432);
  if (port < 1 || port > 65535)
    fail("AccountingStoragePort=" + std::to_string(port) + " is not a port (1-65535)");
  pg.port = static_cast<int>(port);
  pg.user = s.get("AccountingStorageUser", "");
  pg.database = loc.empty() ? "drover" : loc;
  if (!s.get("AccountingStoragePass", "").empty())
    fail(
        "AccountingStoragePass is not used with accounting_storage/pgsql: put the password in a "
        "file only the controller's user can read and name it with AccountingStoragePassFile=");
  pg.password_file = s.get("AccountingStoragePassFile", "");
  if (!pg.password_file.empty()) {
    if (pg.password_file.front() != '/')
      fail("AccountingStoragePassFile=" + pg.password_file + " must be an absolute path");
    struct stat st {};
    if (::stat(pg.password_file.c_str(), &st) != 0)
      fail("AccountingStoragePassFile=" + pg.password_file + ": " + std::strerror(errno));
    if (!S_ISREG(st.st_mode))
      fail("AccountingStoragePassFile=" + pg.password_file + " is not a regular file");
    if (st.st_mode & (S_IRWXG | S_IRWXO))
      fail("AccountingStoragePassFile=" + pg.password_file +
           " must not be accessible by group or others (chmod 600)");
  }
  return out;
}

}  // namespace drover::ctld
