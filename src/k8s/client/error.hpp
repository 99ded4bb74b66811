#pragma once
// One error type for every failed Kubernetes API call, and the predicates callers branch on.

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <string>

namespace drover::k8s {

// A failed API call. status() is the HTTP status, or 0 when no response came back (the
// connection failed or timed out: a transport error). reason() and message() come from the
// Kubernetes `Status` object the server sent (reason e.g. "NotFound", "Conflict", "Expired");
// what() is "<status> <reason>: <message>" for logs.
class ApiError : public std::runtime_error {
 public:
  ApiError(long status, std::string reason, std::string message,
           std::optional<std::chrono::seconds> retry_after = std::nullopt);

  // From an HTTP response: the body is a Status object when the server produced it, else
  // (a proxy, a crash) any text, which becomes the message.
  static ApiError from_response(long status, const std::string& body,
                                std::optional<std::chrono::seconds> retry_after = std::nullopt);
  // From a Status object alone (the object of a watch ERROR event).
  static ApiError from_status(const nlohmann::json& status);
  // No response: connection refused, TLS failure, timeout.
  static ApiError transport(const std::string& what);

  long status() const { return status_; }
  const std::string& reason() const { return reason_; }
  const std::string& message() const { return message_; }
  // The server's Retry-After (429, some 5xx), when it sent one.
  std::optional<std::chrono::seconds> retry_after() const { return retry_after_; }

 private:
  long status_;
  std::string reason_;
  std::string message_;
  std::optional<std::chrono::seconds> retry_after_;
};

// Bad configuration (kubeconfig, in-cluster files): what() is user-facing text.
struct ConfigError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

bool is_not_found(const ApiError& e);
// 409 from an optimistic-concurrency failure (stale resourceVersion, failed precondition, or
// a server-side apply field conflict); not AlreadyExists, which is also a 409.
bool is_conflict(const ApiError& e);
bool is_already_exists(const ApiError& e);
// 410: the resourceVersion asked for is older than what the server still holds.
bool is_gone(const ApiError& e);
bool is_too_many_requests(const ApiError& e);
bool is_unauthorized(const ApiError& e);
// Worth repeating unchanged: transport errors, 429, 500, 502, 503, 504.
bool retriable(const ApiError& e);

// Retry-After as the API server sends it (whole seconds); nullopt for anything else (an HTTP
// date is not used by the API server and is ignored).
std::optional<std::chrono::seconds> parse_retry_after(const std::string& value);

}  // namespace drover::k8s
