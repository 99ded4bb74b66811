#include "agent/exit_store.hpp"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "net/fd_io.hpp"
#include "proto/decode.hpp"

namespace drover::agent {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
constexpr size_t kMaxRecord = 4096;  // a record is a few dozen bytes

bool parse_id(const std::string& name, uint64_t& id) {
  if (name.empty() || name.size() > 20) return false;
  for (char c : name)
    if (c < '0' || c > '9') return false;
  errno = 0;
  char* end = nullptr;
  unsigned long long v = std::strtoull(name.c_str(), &end, 10);
  if (errno != 0 || *end != '\0') return false;
  id = v;
  return true;
}

}  // namespace

json exit_record_json(uint64_t job_id, const ExitRecord& e) {
  json j = {{"job_id", job_id}, {"status", e.status}, {"run", e.run}};
  if (e.usage.oom_kills > 0) j["oom_kills"] = e.usage.oom_kills;
  if (e.usage.max_rss_bytes >= 0) j["max_rss"] = e.usage.max_rss_bytes;
  return j;
}

void ExitStore::open() const {
  fs::create_directories(dir_);
  fs::permissions(dir_, fs::perms::owner_all);
}

bool ExitStore::save(uint64_t job_id, const ExitRecord& e) const {
  const json j = exit_record_json(job_id, e);
  const std::string name = std::to_string(job_id);
  const std::string tmp = dir_ + "/." + name + ".tmp";
  const std::string path = dir_ + "/" + name;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) {
    spdlog::error("job {}: cannot record its exit in {}: {}", job_id, dir_, std::strerror(errno));
    return false;
  }
  bool ok = net::write_fully(fd, j.dump() + "\n");
  int err = errno;
  ok = ::close(fd) == 0 && ok;
  if (ok && ::rename(tmp.c_str(), path.c_str()) != 0) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    spdlog::error("job {}: cannot record its exit in {}: {}", job_id, dir_, std::strerror(err));
    ::unlink(tmp.c_str());
  }
  return ok;
}

void ExitStore::remove(uint64_t job_id) const {
  const std::string path = dir_ + "/" + std::to_string(job_id);
  if (::unlink(path.c_str()) != 0 && errno != ENOENT)
    spdlog::warn("job {}: cannot remove its exit record: {}", job_id, std::strerror(errno));
}

std::map<uint64_t, ExitRecord> ExitStore::load() const {
  std::map<uint64_t, ExitRecord> out;
  std::error_code ec;
  fs::directory_iterator it(dir_, ec), end;
  if (ec) {
    if (ec != std::errc::no_such_file_or_directory)
      spdlog::error("cannot read the exit records in {}: {}", dir_, ec.message());
    return out;
  }
  for (; it != end; it.increment(ec)) {
    if (ec) {
      spdlog::error("cannot read the exit records in {}: {}", dir_, ec.message());
      break;
    }
    const std::string name = it->path().filename().string();
    const std::string path = it->path().string();
    if (name.rfind('.', 0) == 0) {  // a record its agent died writing: never sent, so unknown
      ::unlink(path.c_str());
      continue;
    }
    uint64_t id = 0;
    if (!parse_id(name, id)) {
      spdlog::warn("exit records: ignoring {}", path);
      continue;
    }
    try {
      int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
      if (fd < 0) throw std::runtime_error(std::strerror(errno));
      struct stat st {};
      std::string text;
      if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode)) {
        char buf[kMaxRecord + 1];
        ssize_t n;
        while ((n = ::read(fd, buf, sizeof buf)) > 0 && text.size() <= kMaxRecord)
          text.append(buf, static_cast<size_t>(n));
        if (n < 0) {
          int err = errno;
          ::close(fd);
          throw std::runtime_error(std::strerror(err));
        }
      }
      ::close(fd);
      if (text.size() > kMaxRecord) throw std::runtime_error("too large");
      const json j = proto::decode_object(text);
      if (proto::need_uint(j, "job_id") != id) throw std::runtime_error("not this job's record");
      if (!j.contains("status")) throw std::runtime_error("no status");
      ExitRecord e{static_cast<int>(proto::get_int(j, "status")),
                   static_cast<uint32_t>(proto::need_uint(j, "run")),
                   {}};
      e.usage.oom_kills = proto::get_int(j, "oom_kills");
      e.usage.max_rss_bytes = proto::get_int(j, "max_rss", -1);
      out[id] = e;
    } catch (const std::exception& e) {
      spdlog::error("exit record {} unreadable, skipped: {}", path, e.what());
    }
  }
  return out;
}

}  // namespace drover::agent
