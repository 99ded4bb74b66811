#pragma once
// How the controller's SQLite files are opened: created if missing, write-ahead log, every
// commit on disk before it returns (synchronous=FULL), waiting up to 5 s for a lock.
#include <sqlite3.h>

#include <stdexcept>
#include <string>

namespace drover::store {

// Opens `path`; on failure throws std::runtime_error "<who>: open <path>: <sqlite's message>".
// `page_size` (bytes, a power of two), when not 0, is the page size of a file created here; a
// file that exists keeps its own.
inline sqlite3* open_durable_sqlite(const std::string& path, const std::string& who,
                                    int page_size = 0) {
  sqlite3* db = nullptr;
  auto fail = [&](const std::string& what) {
    const std::string msg = who + ": " + what + ": " + (db ? sqlite3_errmsg(db) : "no database");
    sqlite3_close(db);
    throw std::runtime_error(msg);
  };
  if (sqlite3_open_v2(path.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX,
                      nullptr) != SQLITE_OK)
    fail("open " + path);
  sqlite3_busy_timeout(db, 5000);
  // Before WAL mode: a database in WAL mode keeps the page size it has.
  if (page_size != 0) {
    const std::string pragma = "PRAGMA page_size=" + std::to_string(page_size);
    if (sqlite3_exec(db, pragma.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) fail(pragma);
  }
  for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=FULL"})
    if (sqlite3_exec(db, pragma, nullptr, nullptr, nullptr) != SQLITE_OK) fail(pragma);
  return db;
}

}  // namespace drover::store
