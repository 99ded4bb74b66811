// AccountingStorageType and its keys: which accounting backend, where, and the errors.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "core/error.hpp"
#include "ctld/config.hpp"

using drover::core::ParseError;
using drover::ctld::load_config_text;
using Type = drover::store::AccountingStorage::Type;

namespace {
const std::string kBase = "ClusterName=c\nNodeName=n1 CPUs=2\nPartitionName=p Nodes=n1\n";

// The message of the ParseError the text raises ("" when it loads).
std::string error_of(const std::string& text) {
  try {
    load_config_text(kBase + text, "/etc/slurm.conf");
  } catch (const ParseError& e) {
    return e.what();
  }
  return "";
}

struct PassFile {
  std::string path = std::filesystem::temp_directory_path() /
                     ("drover-pass-" + std::to_string(getpid()) + "-" + std::to_string(rand()));
  explicit PassFile(mode_t mode) {
    std::ofstream(path) << "secret\n";
    chmod(path.c_str(), mode);
  }
  ~PassFile() { std::filesystem::remove(path); }
};
}  // namespace

TEST(AccountingStorage, SqliteIsTheDefault) {
  for (const std::string type : {"", "accounting_storage/sqlite", "accounting_storage/none",
                                 "accounting_storage/slurmdbd"}) {
    auto c = load_config_text(kBase + (type.empty() ? "" : "AccountingStorageType=" + type + "\n"),
                              "slurm.conf");
    EXPECT_EQ(c.accounting_storage.type, Type::Sqlite) << type;
    EXPECT_EQ(c.accounting_storage.sqlite_path, "") << type;  // the state directory's
  }
  auto c = load_config_text(kBase + "AccountingStorageLoc=/var/lib/drover/acct.db\n", "x");
  EXPECT_EQ(c.accounting_storage.sqlite_path, "/var/lib/drover/acct.db");
}

TEST(AccountingStorage, Pgsql) {
  PassFile pass(0600);
  auto c = load_config_text(kBase +
                                "AccountingStorageType=accounting_storage/pgsql\n"
                                "AccountingStorageHost=db.example\nAccountingStoragePort=6543\n"
                                "AccountingStorageUser=slurm\nAccountingStorageLoc=acct\n"
                                "AccountingStoragePassFile=" +
                                pass.path + "\n",
                            "slurm.conf");
  const auto& s = c.accounting_storage;
  EXPECT_EQ(s.type, Type::Pgsql);
  EXPECT_EQ(s.pgsql.host, "db.example");
  EXPECT_EQ(s.pgsql.port, 6543);
  EXPECT_EQ(s.pgsql.user, "slurm");
  EXPECT_EQ(s.pgsql.database, "acct");
  EXPECT_EQ(s.pgsql.password_file, pass.path);
  EXPECT_EQ(s.describe(), "PostgreSQL slurm@db.example:6543/acct");
  // Defaults: localhost:5432, database drover, libpq's user, no password.
  c = load_config_text(kBase + "AccountingStorageType=accounting_storage/pgsql\n", "slurm.conf");
  EXPECT_EQ(c.accounting_storage.pgsql, drover::store::PgsqlLocation{});
  EXPECT_EQ(c.accounting_storage.describe(), "PostgreSQL localhost:5432/drover");
}

TEST(AccountingStorage, Errors) {
  const std::string pg = "AccountingStorageType=accounting_storage/pgsql\n";
  EXPECT_EQ(error_of("AccountingStorageType=accounting_storage/mysql\n"),
            "/etc/slurm.conf: AccountingStorageType=accounting_storage/mysql is not supported "
            "(accounting_storage/sqlite, the default, or accounting_storage/pgsql)");
  EXPECT_EQ(error_of("AccountingStorageLoc=acct.db\n"),
            "/etc/slurm.conf: AccountingStorageLoc=acct.db: the SQLite file must be an absolute "
            "path");
  EXPECT_EQ(error_of(pg + "AccountingStoragePort=70000\n"),
            "/etc/slurm.conf: AccountingStoragePort=70000 is not a port (1-65535)");
  EXPECT_NE(error_of(pg + "AccountingStoragePort=x\n").find("AccountingStoragePort=x"),
            std::string::npos);
  EXPECT_NE(error_of(pg + "AccountingStoragePass=hunter2\n").find("AccountingStoragePassFile="),
            std::string::npos);
  EXPECT_EQ(error_of(pg + "AccountingStoragePassFile=pw\n"),
            "/etc/slurm.conf: AccountingStoragePassFile=pw must be an absolute path");
  EXPECT_EQ(error_of(pg + "AccountingStoragePassFile=/nonexistent/pw\n"),
            "/etc/slurm.conf: AccountingStoragePassFile=/nonexistent/pw: No such file or "
            "directory");
  PassFile open_to_all(0644);
  EXPECT_EQ(error_of(pg + "AccountingStoragePassFile=" + open_to_all.path + "\n"),
            "/etc/slurm.conf: AccountingStoragePassFile=" + open_to_all.path +
                " must not be accessible by group or others (chmod 600)");
}
