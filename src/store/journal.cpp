#include "store/journal.hpp"

#include <stdexcept>

#include "proto/json.hpp"
#include "store/sqlite_file.hpp"

namespace drover::store {
namespace {
[[noreturn]] void fail(sqlite3* db, const std::string& what) {
  throw std::runtime_error("journal: " + what + ": " + (db ? sqlite3_errmsg(db) : "no database"));
}

// A job's record without the fields that hold their default value: load() reads each record
// into a default job, so they come back as they were, and most of a pending job's fields are
// defaults (no allocation, steps, times, limits). The spec is a struct read the same way.
std::string compact_job_text(const core::Job& job) {
  static const nlohmann::json defaults = core::Job{};
  nlohmann::json j = job;
  auto drop = [](nlohmann::json& obj, const nlohmann::json& base) {
    for (auto it = obj.begin(); it != obj.end();) {
      const auto d = base.find(it.key());
      if (d != base.end() && *d == *it)
        it = obj.erase(it);
      else
        ++it;
    }
  };
  if (auto spec = j.find("spec"); spec != j.end() && spec->is_object())
    drop(*spec, defaults["spec"]);
  drop(j, defaults);
  return j.dump();
}
}  // namespace

Journal::Journal(const std::string& path) {
  // Small pages: every commit writes each page it touched, whole, to the WAL, and a
  // submission's commit touches a few pages (its job, payload and request id rows, the
  // counter) with a few hundred bytes each.
  db_ = open_durable_sqlite(path, "journal", kPageSize);
  exec("CREATE TABLE IF NOT EXISTS jobs (id INTEGER PRIMARY KEY, data TEXT NOT NULL)");
  exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL)");
  exec(
      "CREATE TABLE IF NOT EXISTS records (kind TEXT NOT NULL, name TEXT NOT NULL, "
      "data TEXT NOT NULL, PRIMARY KEY (kind, name)) WITHOUT ROWID");
  exec("CREATE TABLE IF NOT EXISTS payloads (id INTEGER PRIMARY KEY, data TEXT NOT NULL)");
  if (sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO jobs (id, data) VALUES (?, ?)", -1, &put_,
                         nullptr) ||
      sqlite3_prepare_v2(db_, "DELETE FROM jobs WHERE id = ?", -1, &erase_, nullptr) ||
      sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO meta (key, value) VALUES ('next_job_id', ?)",
                         -1, &meta_, nullptr) ||
      sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO records (kind, name, data) VALUES (?, ?, ?)",
                         -1, &put_record_, nullptr) ||
      sqlite3_prepare_v2(db_, "DELETE FROM records WHERE kind = ? AND name = ?", -1, &erase_record_,
                         nullptr) ||
      sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", -1,
                         &counter_, nullptr) ||
      sqlite3_prepare_v2(db_, "INSERT OR REPLACE INTO payloads (id, data) VALUES (?, ?)", -1,
                         &put_payload_, nullptr) ||
      sqlite3_prepare_v2(db_, "SELECT data FROM payloads WHERE id = ?", -1, &get_payload_,
                         nullptr) ||
      sqlite3_prepare_v2(db_, "DELETE FROM payloads WHERE id = ?", -1, &erase_payload_, nullptr))
    fail(db_, "prepare");
}

Journal::~Journal() {
  if (in_txn_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_finalize(put_);
  sqlite3_finalize(erase_);
  sqlite3_finalize(meta_);
  sqlite3_finalize(put_record_);
  sqlite3_finalize(erase_record_);
  sqlite3_finalize(counter_);
  sqlite3_finalize(put_payload_);
  sqlite3_finalize(get_payload_);
  sqlite3_finalize(erase_payload_);
  sqlite3_close(db_);
}

void Journal::exec(const char* sql) {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    std::string msg = err ? err : "unknown error";
    sqlite3_free(err);
    throw std::runtime_error(std::string("journal: ") + sql + ": " + msg);
  }
}

Journal::Loaded Journal::load() {
  Loaded out;
  sqlite3_stmt* st = nullptr;
  if (sqlite3_prepare_v2(db_, "SELECT value FROM meta WHERE key = 'next_job_id'", -1, &st, nullptr))
    fail(db_, "prepare");
  if (sqlite3_step(st) == SQLITE_ROW)
    out.next_job_id = static_cast<uint64_t>(sqlite3_column_int64(st, 0));
  sqlite3_finalize(st);
  if (sqlite3_prepare_v2(db_, "SELECT data FROM jobs ORDER BY id", -1, &st, nullptr))
    fail(db_, "prepare");
  while (sqlite3_step(st) == SQLITE_ROW) {
    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
    out.jobs.push_back(nlohmann::json::parse(text).get<core::Job>());
  }
  sqlite3_finalize(st);
  if (sqlite3_prepare_v2(db_, "SELECT kind, name, data FROM records", -1, &st, nullptr))
    fail(db_, "prepare");
  while (sqlite3_step(st) == SQLITE_ROW) {
    auto text = [st](int col) {
      return reinterpret_cast<const char*>(sqlite3_column_text(st, col));
    };
    out.records[text(0)][text(1)] = nlohmann::json::parse(text(2));
  }
  sqlite3_finalize(st);
  if (sqlite3_prepare_v2(db_, "SELECT key, value FROM meta WHERE key != 'next_job_id'", -1, &st,
                         nullptr))
    fail(db_, "prepare");
  while (sqlite3_step(st) == SQLITE_ROW)
    out.counters[reinterpret_cast<const char*>(sqlite3_column_text(st, 0))] =
        sqlite3_column_int64(st, 1);
  sqlite3_finalize(st);
  // Never hand out an id at or below one already used, even if the counter row was lost.
  for (const auto& j : out.jobs)
    if (j.id >= out.next_job_id) out.next_job_id = j.id + 1;
  return out;
}

void Journal::begin() {
  if (in_txn_) return;
  exec("BEGIN IMMEDIATE");
  in_txn_ = true;
}

void Journal::put_job(const core::Job& job) {
  begin();
  const std::string data = compact_job_text(job);
  sqlite3_reset(put_);
  sqlite3_bind_int64(put_, 1, static_cast<sqlite3_int64>(job.id));
  sqlite3_bind_text(put_, 2, data.data(), static_cast<int>(data.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(put_) != SQLITE_DONE) fail(db_, "write job");
}

void Journal::erase_job(uint64_t id) {
  begin();
  sqlite3_reset(erase_);
  sqlite3_bind_int64(erase_, 1, static_cast<sqlite3_int64>(id));
  if (sqlite3_step(erase_) != SQLITE_DONE) fail(db_, "erase job");
}

void Journal::set_next_job_id(uint64_t id) {
  begin();
  sqlite3_reset(meta_);
  sqlite3_bind_int64(meta_, 1, static_cast<sqlite3_int64>(id));
  if (sqlite3_step(meta_) != SQLITE_DONE) fail(db_, "write counter");
}

void Journal::put_record(const std::string& kind, const std::string& name,
                         const nlohmann::json& data) {
  begin();
  const std::string text = data.dump();
  sqlite3_reset(put_record_);
  sqlite3_bind_text(put_record_, 1, kind.data(), static_cast<int>(kind.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(put_record_, 2, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(put_record_, 3, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(put_record_) != SQLITE_DONE) fail(db_, "write " + kind);
}

void Journal::erase_record(const std::string& kind, const std::string& name) {
  begin();
  sqlite3_reset(erase_record_);
  sqlite3_bind_text(erase_record_, 1, kind.data(), static_cast<int>(kind.size()), SQLITE_TRANSIENT);
  sqlite3_bind_text(erase_record_, 2, name.data(), static_cast<int>(name.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(erase_record_) != SQLITE_DONE) fail(db_, "erase " + kind);
}

void Journal::set_counter(const std::string& key, int64_t value) {
  begin();
  sqlite3_reset(counter_);
  sqlite3_bind_text(counter_, 1, key.data(), static_cast<int>(key.size()), SQLITE_TRANSIENT);
  sqlite3_bind_int64(counter_, 2, value);
  if (sqlite3_step(counter_) != SQLITE_DONE) fail(db_, "write counter " + key);
}

void Journal::put_payload(uint64_t id, const nlohmann::json& data) {
  begin();
  const std::string text = data.dump();
  sqlite3_reset(put_payload_);
  sqlite3_bind_int64(put_payload_, 1, static_cast<sqlite3_int64>(id));
  sqlite3_bind_text(put_payload_, 2, text.data(), static_cast<int>(text.size()), SQLITE_TRANSIENT);
  if (sqlite3_step(put_payload_) != SQLITE_DONE) fail(db_, "write payload");
}

std::optional<nlohmann::json> Journal::get_payload(uint64_t id) {
  sqlite3_reset(get_payload_);
  sqlite3_bind_int64(get_payload_, 1, static_cast<sqlite3_int64>(id));
  const int rc = sqlite3_step(get_payload_);
  if (rc == SQLITE_DONE) return std::nullopt;
  if (rc != SQLITE_ROW) fail(db_, "read payload");
  const char* text = reinterpret_cast<const char*>(sqlite3_column_text(get_payload_, 0));
  nlohmann::json out = nlohmann::json::parse(text);
  sqlite3_reset(get_payload_);
  return out;
}

void Journal::erase_payload(uint64_t id) {
  begin();
  sqlite3_reset(erase_payload_);
  sqlite3_bind_int64(erase_payload_, 1, static_cast<sqlite3_int64>(id));
  if (sqlite3_step(erase_payload_) != SQLITE_DONE) fail(db_, "erase payload");
}

void Journal::commit() {
  if (!in_txn_) return;
  in_txn_ = false;
  exec("COMMIT");
}

void Journal::rollback() {
  if (!in_txn_) return;
  in_txn_ = false;
  exec("ROLLBACK");
}

}  // namespace drover::store
