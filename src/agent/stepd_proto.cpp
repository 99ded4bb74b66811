#include "agent/stepd_proto.hpp"

#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

#include "proto/decode.hpp"
#include "proto/frame.hpp"

namespace drover::agent::stepd {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {
// A launch carries the job's script path and environment; more than this is not one of ours.
constexpr uint32_t kMaxFrame = 16u << 20;

template <class... F>
struct Overload : F... {
  using F::operator()...;
};
template <class... F>
Overload(F...) -> Overload<F...>;

std::vector<std::string> get_strings(const json& msg, const char* key) {
  std::vector<std::string> out;
  if (!msg.contains(key)) return out;
  const json& a = msg.at(key);
  if (!a.is_array()) throw proto::BadMessage(std::string(key) + " is not an array");
  for (const auto& s : a) {
    if (!s.is_string()) throw proto::BadMessage(std::string(key) + " holds a non-string");
    out.push_back(s.get<std::string>());
  }
  return out;
}

std::map<std::string, std::string> get_env(const json& msg, const char* key) {
  std::map<std::string, std::string> out;
  if (!msg.contains(key)) return out;
  const json& o = msg.at(key);
  if (!o.is_object()) throw proto::BadMessage(std::string(key) + " is not an object");
  for (const auto& [k, v] : o.items()) {
    if (!v.is_string()) throw proto::BadMessage(std::string(key) + "." + k + " is not a string");
    out[k] = v.get<std::string>();
  }
  return out;
}

int32_t get_int32(const json& msg, const char* key, int64_t fallback = 0) {
  const int64_t v = proto::get_int(msg, key, fallback);
  if (v < INT32_MIN || v > INT32_MAX) throw proto::BadMessage(std::string(key) + " out of range");
  return static_cast<int32_t>(v);
}

uint32_t get_uint32(const json& msg, const char* key) {
  const uint64_t v = proto::get_uint(msg, key);
  if (v > UINT32_MAX) throw proto::BadMessage(std::string(key) + " out of range");
  return static_cast<uint32_t>(v);
}
}  // namespace

std::string encode(const Message& m) {
  json j = std::visit(
      Overload{
          [](const Launch& l) {
            const LaunchSpec& s = l.spec;
            return json{{"type", "launch"},    {"job_id", s.job_id},  {"uid", s.uid},
                        {"gid", s.gid},        {"user", s.user},      {"script", s.script_path},
                        {"argv", s.argv},      {"env", s.env},        {"workdir", s.workdir},
                        {"stdout", s.std_out}, {"stderr", s.std_err}, {"stdin", s.std_in},
                        {"append", s.append},  {"run", l.run},        {"mem_mb", l.mem_mb},
                        {"node", l.node}};
          },
          [](const Signal& s) {
            return json{{"type", "signal"}, {"signal", s.sig}, {"batch_only", s.batch_only}};
          },
          [](const Terminate& t) {
            return json{{"type", "terminate"}, {"kill_wait", t.kill_wait_s}, {"notice", t.notice}};
          },
          [](const StatusRequest&) {
            return json{{"type", "status?"}};
          },
          [](const Status& s) {
            return json{{"type", "status"}, {"job_id", s.job_id}, {"run", s.run}, {"pid", s.pid}};
          },
          [](const Started& s) {
            return json{{"type", "started"}, {"pid", s.pid}};
          },
          [](const Exited& e) {
            json r = exit_record_json(e.job_id, e.record);
            r["type"] = "exited";
            return r;
          },
      },
      m);
  return proto::dump(j);
}

Message decode(const std::string& payload) {
  const json j = proto::decode_object(payload);
  const std::string type = proto::get_string(j, "type");
  if (type == "launch") {
    Launch l;
    LaunchSpec& s = l.spec;
    s.job_id = proto::need_uint(j, "job_id");
    s.uid = static_cast<uid_t>(get_uint32(j, "uid"));
    s.gid = static_cast<gid_t>(get_uint32(j, "gid"));
    s.user = proto::get_string(j, "user");
    s.script_path = proto::get_string(j, "script");
    if (s.script_path.empty()) throw proto::BadMessage("launch without a script");
    s.argv = get_strings(j, "argv");
    s.env = get_env(j, "env");
    s.workdir = proto::get_string(j, "workdir", "/");
    s.std_out = proto::get_string(j, "stdout", "/dev/null");
    s.std_err = proto::get_string(j, "stderr", s.std_out);
    s.std_in = proto::get_string(j, "stdin", "/dev/null");
    s.append = proto::get_bool(j, "append");
    l.run = get_uint32(j, "run");
    l.mem_mb = proto::get_int(j, "mem_mb");
    l.node = proto::get_string(j, "node");
    return l;
  }
  if (type == "signal") {
    const int sig = get_int32(j, "signal");
    if (sig < 0 || sig >= NSIG) throw proto::BadMessage("no such signal");
    return Signal{sig, proto::get_bool(j, "batch_only")};
  }
  if (type == "terminate") {
    const int64_t wait = proto::get_int(j, "kill_wait", 30);
    if (wait < 0) throw proto::BadMessage("kill_wait is negative");
    return Terminate{wait, proto::get_string(j, "notice")};
  }
  if (type == "status?") return StatusRequest{};
  if (type == "status")
    return Status{proto::need_uint(j, "job_id"), get_uint32(j, "run"), get_int32(j, "pid")};
  if (type == "started") return Started{get_int32(j, "pid")};
  if (type == "exited") {
    Exited e;
    e.job_id = proto::need_uint(j, "job_id");
    e.record.status = get_int32(j, "status");
    e.record.run = get_uint32(j, "run");
    e.record.usage.oom_kills = proto::get_int(j, "oom_kills");
    e.record.usage.max_rss_bytes = proto::get_int(j, "max_rss", -1);
    return e;
  }
  throw proto::BadMessage("unknown message type '" + type + "'");
}

std::string socket_dir(const std::string& spool_dir) { return spool_dir + "/stepd"; }

std::string socket_path(const std::string& spool_dir, uint64_t job_id) {
  return socket_dir(spool_dir) + "/job" + std::to_string(job_id) + ".sock";
}

std::vector<uint64_t> listed_jobs(const std::string& dir) {
  std::vector<uint64_t> ids;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 9 || name.rfind("job", 0) != 0 ||
        name.compare(name.size() - 5, 5, ".sock") != 0)
      continue;
    const std::string digits = name.substr(3, name.size() - 8);
    if (digits.empty() || digits.size() > 19 ||
        digits.find_first_not_of("0123456789") != std::string::npos)
      continue;
    ids.push_back(std::stoull(digits));
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

int connect_socket(const std::string& path) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path)
    throw std::runtime_error("socket path too long: " + path);
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error(std::string("socket: ") + std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    const int err = errno;
    ::close(fd);
    return -err;
  }
  return fd;
}

void write_frame(int fd, const std::string& payload) {
  const std::string frame = proto::encode_length(static_cast<uint32_t>(payload.size())) + payload;
  size_t off = 0;
  while (off < frame.size()) {
    ssize_t n = ::send(fd, frame.data() + off, frame.size() - off, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw std::runtime_error(std::string("write: ") + std::strerror(errno));
    off += static_cast<size_t>(n);
  }
}

std::optional<std::string> read_frame(int fd, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  auto read_exact = [&](char* p, size_t n) -> bool {
    while (n > 0) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                            deadline - std::chrono::steady_clock::now())
                            .count();
      if (left <= 0) return false;
      pollfd pfd{fd, POLLIN, 0};
      const int ready = ::poll(&pfd, 1, static_cast<int>(left));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
      if (ready == 0) return false;
      const ssize_t r = ::read(fd, p, n);
      if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      if (r < 0 && errno == ECONNRESET) return false;
      if (r < 0) throw std::runtime_error(std::string("read: ") + std::strerror(errno));
      if (r == 0) return false;
      p += r;
      n -= static_cast<size_t>(r);
    }
    return true;
  };
  unsigned char h[4];
  if (!read_exact(reinterpret_cast<char*>(h), 4)) return std::nullopt;
  const uint32_t len = proto::decode_length(h);
  if (len > kMaxFrame) throw std::runtime_error("frame too large");
  std::string body(len, '\0');
  if (!read_exact(body.data(), len)) return std::nullopt;
  return body;
}

std::optional<Adopted> adopt(const std::string& spool_dir, uint64_t job_id,
                             std::chrono::milliseconds timeout) {
  const std::string path = socket_path(spool_dir, job_id);
  int fd = -1;
  try {
    fd = connect_socket(path);
  } catch (const std::exception&) {
    return std::nullopt;  // a path too long to connect to: never a supervisor's
  }
  if (fd < 0) {
    // Nobody listens: the supervisor died (its job's leftovers are the caller's to clean up).
    if (fd == -ECONNREFUSED) ::unlink(path.c_str());
    return std::nullopt;
  }
  try {
    write_frame(fd, encode(StatusRequest{}));
    if (auto reply = read_frame(fd, timeout)) {
      const Message m = decode(*reply);
      if (const auto* s = std::get_if<Status>(&m); s && s->job_id == job_id) return Adopted{*s, fd};
    }
  } catch (const std::exception&) {
    // A supervisor ending as it was asked (EPIPE, a reset): its exit is in the store.
  }
  ::close(fd);
  return std::nullopt;
}

int terminate_all(const std::string& spool_dir, int64_t kill_wait_s,
                  std::chrono::milliseconds wait) {
  const std::string dir = socket_dir(spool_dir);
  std::vector<std::pair<uint64_t, int>> links;
  for (uint64_t id : listed_jobs(dir)) {
    const int fd = connect_socket(socket_path(spool_dir, id));
    if (fd < 0) continue;
    try {
      write_frame(fd, encode(Terminate{kill_wait_s, ""}));
      links.emplace_back(id, fd);
    } catch (const std::exception&) {
      ::close(fd);
    }
  }
  // Each supervisor says Exited (or closes its link) once it has recorded the exit and removed
  // its socket.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  int left = 0;
  for (auto [id, fd] : links) {
    while (true) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      std::optional<std::string> f;
      try {
        if (ms.count() > 0) f = read_frame(fd, ms);
        if (f && std::holds_alternative<Exited>(decode(*f))) break;  // recorded, about to go
      } catch (const std::exception&) {
        break;
      }
      if (!f) break;  // closed, or out of time
    }
    ::close(fd);
    std::error_code ec;
    if (fs::exists(socket_path(spool_dir, id), ec)) ++left;
  }
  return left;
}

}  // namespace drover::agent::stepd
