#pragma once
#include <sqlite3.h>

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "core/job.hpp"

namespace drover::store {

// The controller's durable state: one row per live job (its latest JSON form) and the
// job-id counter, in SQLite with WAL and synchronous=FULL. The state thread groups all
// changes of one loop iteration into one transaction (group commit) and answers clients
// only after commit() returns, so an acknowledged job survives a crash.
class Journal {
 public:
  explicit Journal(const std::string& path);
  ~Journal();
  Journal(const Journal&) = delete;
  Journal& operator=(const Journal&) = delete;

  struct Loaded {
    uint64_t next_job_id = 1;
    std::vector<core::Job> jobs;
    // Other durable objects by kind ("reservation", ...), each a JSON document by name.
    std::map<std::string, std::map<std::string, nlohmann::json>> records;
    std::map<std::string, int64_t> counters;  // named counters other than next_job_id
  };
  Loaded load();

  void begin();
  void put_job(const core::Job& job);
  void erase_job(uint64_t id);
  void set_next_job_id(uint64_t id);
  void put_record(const std::string& kind, const std::string& name, const nlohmann::json& data);
  void erase_record(const std::string& kind, const std::string& name);
  void set_counter(const std::string& key, int64_t value);
  // Jobs' scripts and environments, by payload id: written once at submission, read at each
  // launch, never loaded as a whole (they are most of a queued job's bytes).
  void put_payload(uint64_t id, const nlohmann::json& data);
  std::optional<nlohmann::json> get_payload(uint64_t id);
  void erase_payload(uint64_t id);
  void commit();  // durable on return
  void rollback();
  bool in_transaction() const { return in_txn_; }

  // The page size of a journal created here (one made before keeps its own).
  static constexpr int kPageSize = 1024;

 private:
  void exec(const char* sql);
  sqlite3* db_ = nullptr;
  sqlite3_stmt* put_ = nullptr;
  sqlite3_stmt* erase_ = nullptr;
  sqlite3_stmt* meta_ = nullptr;
  sqlite3_stmt* put_record_ = nullptr;
  sqlite3_stmt* erase_record_ = nullptr;
  sqlite3_stmt* counter_ = nullptr;
  sqlite3_stmt* put_payload_ = nullptr;
  sqlite3_stmt* get_payload_ = nullptr;
  sqlite3_stmt* erase_payload_ = nullptr;
  bool in_txn_ = false;
};

}  // namespace drover::store
