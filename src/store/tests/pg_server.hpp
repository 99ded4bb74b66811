#pragma once
// A throwaway PostgreSQL server for tests: its own data directory under /tmp, run by an
// unprivileged user when the tests run as root, listening on loopback on a free port (its Unix
// socket in the same directory), password login over TCP. Stopped and deleted when destroyed.
#include <memory>
#include <string>
#include <vector>

#include "store/accounting.hpp"

namespace drover::store::testing {

class PgServer {
 public:
  // The one server of this test process, started on first use; null when PostgreSQL's
  // binaries are not installed (`why` says so; tests skip then).
  static PgServer* shared(std::string* why);

  ~PgServer();
  PgServer(const PgServer&) = delete;
  PgServer& operator=(const PgServer&) = delete;

  // A new empty database, and where a store finds it (the password in a file).
  std::string create_database();
  PgsqlLocation location(const std::string& database) const;

  // Runs SQL as the superuser (tests that set up old schemas or look underneath).
  void exec(const std::string& database, const std::string& sql);
  std::vector<std::vector<std::string>> query(const std::string& database, const std::string& sql);
  // Ends every other session on `database` (as a dropped connection would).
  void kill_sessions(const std::string& database);

  void stop();
  void start();

 private:
  PgServer(std::string bin, std::string dir);
  void initdb();
  void run(const std::string& command) const;  // as the server's user; throws on failure
  std::string bin_, dir_, run_as_;
  int port_ = 0;
  int databases_ = 0;
  bool running_ = false;
};

}  // namespace drover::store::testing
