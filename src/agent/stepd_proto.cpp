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

#include "net/auth.hpp"
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

std::string from_hex(const std::string& hex) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    throw proto::BadMessage("key is not hex");
  };
  if (hex.size() % 2 != 0) throw proto::BadMessage("key is not hex");
  std::string raw;
  for (size_t i = 0; i < hex.size(); i += 2)
    raw += static_cast<char>(nibble(hex[i]) * 16 + nibble(hex[i + 1]));
  return raw;
}

}  // namespace

std::string encode(const Message& m) {
  json j = std::visit(
      Overload{
          [](const Launch& l) {
            const LaunchSpec& s = l.spec;
            json j{{"type", "launch"},    {"job_id", s.job_id},  {"uid", s.uid},
                   {"gid", s.gid},        {"user", s.user},      {"script", s.script_path},
                   {"argv", s.argv},      {"env", s.env},        {"workdir", s.workdir},
                   {"stdout", s.std_out}, {"stderr", s.std_err}, {"stdin", s.std_in},
                   {"append", s.append},  {"run", l.run},        {"mem_mb", l.mem_mb},
                   {"node", l.node}};
            if (l.confine) j["confine"] = l.confine->to_json();
            return j;
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
          [](const StepLaunch& l) {
            return json{{"type", "step_launch"},
                        {"job_id", l.job_id},
                        {"step_id", l.step_id},
                        {"node", l.node},
                        {"cred", l.cred},
                        {"launch", l.launch},
                        {"peer", l.peer},
                        {"key", net::to_hex(l.key)},
                        {"send_dir", std::string(1, l.send_dir)},
                        {"recv_dir", std::string(1, l.recv_dir)},
                        {"send_seq", l.send_seq},
                        {"recv_seq", l.recv_seq}};
          },
          [](const StepSignal& s) {
            return json{{"type", "step_signal"},    {"signal", s.sig},
                        {"terminate", s.terminate}, {"kill_wait", s.kill_wait_s},
                        {"notice", s.notice},       {"graceful", s.graceful}};
          },
          [](const StepStatus& s) {
            return json{{"type", "step_status"}, {"job_id", s.job_id}, {"step_id", s.step_id}};
          },
          [](const StepExited& e) {
            return json{{"type", "step_exited"},
                        {"job_id", e.job_id},
                        {"step_id", e.step_id},
                        {"status", e.status}};
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
    s.uid = static_cast<uid_t>(proto::get_uint32(j, "uid"));
    s.gid = static_cast<gid_t>(proto::get_uint32(j, "gid"));
    s.user = proto::get_string(j, "user");
    s.script_path = proto::get_string(j, "script");
    if (s.script_path.empty()) throw proto::BadMessage("launch without a script");
    s.argv = proto::get_strings(j, "argv");
    s.env = proto::get_string_map(j, "env");
    s.workdir = proto::get_string(j, "workdir", "/");
    s.std_out = proto::get_string(j, "stdout", "/dev/null");
    s.std_err = proto::get_string(j, "stderr", s.std_out);
    s.std_in = proto::get_string(j, "stdin", "/dev/null");
    s.append = proto::get_bool(j, "append");
    l.run = proto::get_uint32(j, "run");
    l.mem_mb = proto::get_int(j, "mem_mb");
    l.node = proto::get_string(j, "node");
    if (proto::has(j, "confine")) l.confine = proto::Confine::from_json(j.at("confine"));
    return l;
  }
  if (type == "signal") {
    const int sig = proto::get_int32(j, "signal");
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
    return Status{proto::need_uint(j, "job_id"), proto::get_uint32(j, "run"),
                  proto::get_int32(j, "pid")};
  if (type == "started") return Started{proto::get_int32(j, "pid")};
  if (type == "exited") {
    Exited e;
    e.job_id = proto::need_uint(j, "job_id");
    e.record.status = proto::get_int32(j, "status");
    e.record.run = proto::get_uint32(j, "run");
    e.record.usage.oom_kills = proto::get_int(j, "oom_kills");
    e.record.usage.max_rss_bytes = proto::get_int(j, "max_rss", -1);
    return e;
  }
  if (type == "step_launch") {
    StepLaunch l;
    l.job_id = proto::need_uint(j, "job_id");
    l.step_id = proto::get_uint32(j, "step_id");
    l.node = proto::get_string(j, "node");
    l.cred = proto::get_string(j, "cred");
    l.launch = proto::get_string(j, "launch");
    l.peer = proto::get_string(j, "peer");
    l.key = from_hex(proto::get_string(j, "key"));
    const std::string sd = proto::get_string(j, "send_dir"), rd = proto::get_string(j, "recv_dir");
    if (sd.size() != 1 || rd.size() != 1) throw proto::BadMessage("bad direction");
    l.send_dir = sd[0];
    l.recv_dir = rd[0];
    l.send_seq = proto::get_uint(j, "send_seq");
    l.recv_seq = proto::get_uint(j, "recv_seq");
    return l;
  }
  if (type == "step_signal") {
    const int sig = proto::get_int32(j, "signal");
    if (sig < 0 || sig >= NSIG) throw proto::BadMessage("no such signal");
    const int64_t wait = proto::get_int(j, "kill_wait", 30);
    if (wait < 0) throw proto::BadMessage("kill_wait is negative");
    return StepSignal{sig, proto::get_bool(j, "terminate"), wait, proto::get_string(j, "notice"),
                      proto::get_bool(j, "graceful")};
  }
  if (type == "step_status")
    return StepStatus{proto::need_uint(j, "job_id"), proto::get_uint32(j, "step_id")};
  if (type == "step_exited")
    return StepExited{proto::need_uint(j, "job_id"), proto::get_uint32(j, "step_id"),
                      proto::get_int32(j, "status")};
  throw proto::BadMessage("unknown message type '" + type + "'");
}

std::string socket_dir(const std::string& spool_dir) { return spool_dir + "/stepd"; }

std::string socket_path(const std::string& spool_dir, uint64_t job_id) {
  return socket_dir(spool_dir) + "/job" + std::to_string(job_id) + ".sock";
}

std::string step_socket_path(const std::string& spool_dir, uint64_t job_id, uint32_t step_id) {
  return socket_dir(spool_dir) + "/step" + std::to_string(job_id) + "." + std::to_string(step_id) +
         ".sock";
}

std::vector<std::pair<uint64_t, uint32_t>> listed_steps(const std::string& dir) {
  std::vector<std::pair<uint64_t, uint32_t>> steps;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() < 11 || name.rfind("step", 0) != 0 ||
        name.compare(name.size() - 5, 5, ".sock") != 0)
      continue;
    const std::string ids = name.substr(4, name.size() - 9);
    const auto dot = ids.find('.');
    if (dot == std::string::npos) continue;
    const std::string job = ids.substr(0, dot), step = ids.substr(dot + 1);
    auto digits = [](const std::string& d, size_t max) {
      return !d.empty() && d.size() <= max &&
             d.find_first_not_of("0123456789") == std::string::npos;
    };
    if (!digits(job, 19) || !digits(step, 9)) continue;
    steps.emplace_back(std::stoull(job), static_cast<uint32_t>(std::stoul(step)));
  }
  std::sort(steps.begin(), steps.end());
  return steps;
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

int adopt_step(const std::string& spool_dir, uint64_t job_id, uint32_t step_id,
               std::chrono::milliseconds timeout) {
  const std::string path = step_socket_path(spool_dir, job_id, step_id);
  int fd = -1;
  try {
    fd = connect_socket(path);
  } catch (const std::exception&) {
    return -1;
  }
  if (fd < 0) {
    if (fd == -ECONNREFUSED) ::unlink(path.c_str());
    return -1;
  }
  try {
    write_frame(fd, encode(StatusRequest{}));
    if (auto reply = read_frame(fd, timeout)) {
      const Message m = decode(*reply);
      if (const auto* s = std::get_if<StepStatus>(&m);
          s && s->job_id == job_id && s->step_id == step_id)
        return fd;
    }
  } catch (const std::exception&) {
  }
  ::close(fd);
  return -1;
}

int terminate_all(const std::string& spool_dir, int64_t kill_wait_s,
                  std::chrono::milliseconds wait) {
  const std::string dir = socket_dir(spool_dir);
  std::vector<std::string> paths;
  for (uint64_t id : listed_jobs(dir)) paths.push_back(socket_path(spool_dir, id));
  for (const auto& [job, step] : listed_steps(dir))
    paths.push_back(step_socket_path(spool_dir, job, step));
  std::vector<std::pair<std::string, int>> links;
  for (const std::string& path : paths) {
    const int fd = connect_socket(path);
    if (fd < 0) continue;
    try {
      write_frame(fd, encode(Terminate{kill_wait_s, ""}));
      links.emplace_back(path, fd);
    } catch (const std::exception&) {
      ::close(fd);
    }
  }
  // Each supervisor says Exited (or closes its link) once it has recorded the exit and removed
  // its socket.
  const auto deadline = std::chrono::steady_clock::now() + wait;
  int left = 0;
  for (const auto& [path, fd] : links) {
    while (true) {
      const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      std::optional<std::string> f;
      try {
        if (ms.count() > 0) f = read_frame(fd, ms);
        if (f) {
          const Message m = decode(*f);
          if (std::holds_alternative<Exited>(m) || std::holds_alternative<StepExited>(m))
            break;  // ended, about to go
        }
      } catch (const std::exception&) {
        break;
      }
      if (!f) break;  // closed, or out of time
    }
    ::close(fd);
    std::error_code ec;
    if (fs::exists(path, ec)) ++left;
  }
  return left;
}

}  // namespace drover::agent::stepd
