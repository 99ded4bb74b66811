#include "store/tests/pg_server.hpp"

#include <libpq-fe.h>
#include <netinet/in.h>
#include <pwd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace drover::store::testing {
namespace {
namespace fs = std::filesystem;

constexpr const char* kSuperuser = "drover";
constexpr const char* kPassword = "s3cret-test-pw";

// The newest /usr/lib/postgresql/<version>/bin with initdb and pg_ctl (DROVER_PG_BIN first).
std::string find_bin() {
  if (const char* env = std::getenv("DROVER_PG_BIN"))
    if (fs::exists(fs::path(env) / "initdb")) return env;
  std::string best;
  int best_version = -1;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator("/usr/lib/postgresql", ec)) {
    const fs::path bin = e.path() / "bin";
    if (!fs::exists(bin / "initdb") || !fs::exists(bin / "pg_ctl")) continue;
    const int version = std::atoi(e.path().filename().c_str());
    if (version > best_version) best_version = version, best = bin.string();
  }
  return best;
}

// A port nothing listens on now (the kernel's pick).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    close(fd);
    throw std::runtime_error("pg test server: no free port");
  }
  close(fd);
  return ntohs(a.sin_port);
}

void write_file(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text << "\n";
  fs::permissions(p, fs::perms::owner_read | fs::perms::owner_write);
}

struct Conn {
  PGconn* c;
  explicit Conn(const std::string& conninfo) : c(PQconnectdb(conninfo.c_str())) {
    if (PQstatus(c) != CONNECTION_OK) {
      const std::string msg = PQerrorMessage(c);
      PQfinish(c);
      throw std::runtime_error("pg test server: connect: " + msg);
    }
    PQsetNoticeProcessor(
        c, [](void*, const char*) {}, nullptr);
  }
  ~Conn() { PQfinish(c); }
  PGresult* exec(const std::string& sql) {
    PGresult* r = PQexec(c, sql.c_str());
    const auto st = PQresultStatus(r);
    if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
      const std::string msg = PQresultErrorMessage(r);
      PQclear(r);
      throw std::runtime_error("pg test server: " + sql + ": " + msg);
    }
    return r;
  }
};
}  // namespace

PgServer* PgServer::shared(std::string* why) {
  static std::unique_ptr<PgServer> server;
  static std::string failure;
  if (!server && failure.empty()) {
    const std::string bin = find_bin();
    if (bin.empty()) {
      failure =
          "PostgreSQL server binaries not found under /usr/lib/postgresql/*/bin (apt-get install "
          "postgresql): PostgreSQL tests skipped";
    } else {
      char tmpl[] = "/tmp/drover-pg-XXXXXX";
      if (!mkdtemp(tmpl)) throw std::runtime_error("pg test server: mkdtemp failed");
      server.reset(new PgServer(bin, tmpl));
      server->initdb();
      server->start();
    }
  }
  if (!server && why) *why = failure;
  return server.get();
}

PgServer::PgServer(std::string bin, std::string dir) : bin_(std::move(bin)), dir_(std::move(dir)) {
  // PostgreSQL refuses to run as root: the postgres system user when there is one, else nobody.
  if (geteuid() == 0) run_as_ = getpwnam("postgres") ? "postgres" : "nobody";
}

PgServer::~PgServer() {
  try {
    stop();
  } catch (...) {
  }
  std::error_code ec;
  fs::remove_all(dir_, ec);
}

void PgServer::run(const std::string& command) const {
  // From the server's directory: its user may not be able to enter ours.
  const std::string line = "cd " + dir_ + " && " +
                           (run_as_.empty() ? "" : "runuser -u " + run_as_ + " -- ") + command +
                           " >>" + dir_ + "/commands.log 2>&1";
  if (std::system(line.c_str()) != 0)
    throw std::runtime_error("pg test server: failed: " + command + " (see " + dir_ +
                             "/commands.log and " + dir_ + "/server.log)");
}

void PgServer::initdb() {
  const fs::path dir(dir_);
  write_file(dir / "initdb-password", kPassword);
  write_file(dir / "password", kPassword);  // the store's, owned by the tests' user
  if (!run_as_.empty()) {
    const passwd* pw = getpwnam(run_as_.c_str());
    if (!pw || chown(dir_.c_str(), pw->pw_uid, pw->pw_gid) != 0 ||
        chown((dir / "initdb-password").c_str(), pw->pw_uid, pw->pw_gid) != 0)
      throw std::runtime_error("pg test server: cannot hand " + dir_ + " to " + run_as_);
  }
  run(bin_ + "/initdb -D " + dir_ + "/data -U " + kSuperuser + " --pwfile=" + dir_ +
      "/initdb-password --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --no-sync");
  port_ = free_port();
}

void PgServer::start() {
  if (running_) return;
  // fsync off: nothing here needs to survive a machine crash.
  run(bin_ + "/pg_ctl -D " + dir_ + "/data -l " + dir_ + "/server.log -w -t 60 -o \"-c " +
      "listen_addresses=127.0.0.1 -p " + std::to_string(port_) + " -k " + dir_ +
      " -c fsync=off\" start");
  running_ = true;
}

void PgServer::stop() {
  if (!running_) return;
  running_ = false;
  run(bin_ + "/pg_ctl -D " + dir_ + "/data -m fast -w stop");
}

PgsqlLocation PgServer::location(const std::string& database) const {
  PgsqlLocation l;
  l.host = "127.0.0.1";
  l.port = port_;
  l.user = kSuperuser;
  l.database = database;
  l.password_file = dir_ + "/password";
  return l;
}

static std::string conninfo(int port, const std::string& db) {
  return "host=127.0.0.1 port=" + std::to_string(port) + " user=" + kSuperuser +
         " password=" + kPassword + " dbname=" + db;
}

std::string PgServer::create_database() {
  const std::string name = "acct_test_" + std::to_string(++databases_);
  Conn c(conninfo(port_, "postgres"));
  PQclear(c.exec("CREATE DATABASE " + name));
  return name;
}

void PgServer::exec(const std::string& database, const std::string& sql) {
  Conn c(conninfo(port_, database));
  PQclear(c.exec(sql));
}

std::vector<std::vector<std::string>> PgServer::query(const std::string& database,
                                                      const std::string& sql) {
  Conn c(conninfo(port_, database));
  PGresult* r = c.exec(sql);
  std::vector<std::vector<std::string>> rows;
  for (int i = 0; i < PQntuples(r); ++i) {
    auto& row = rows.emplace_back();
    for (int k = 0; k < PQnfields(r); ++k) row.emplace_back(PQgetvalue(r, i, k));
  }
  PQclear(r);
  return rows;
}

void PgServer::kill_sessions(const std::string& database) {
  exec("postgres", "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" +
                       database + "' AND pid <> pg_backend_pid()");
}

}  // namespace drover::store::testing
