#!/usr/bin/env bash
# CI entry point for drover's Kubernetes test environment.
#
#   bash tests/k8s/ci.sh deps    install missing Debian packages (needs root)
#   bash tests/k8s/ci.sh build   deps + build/cache etcd, kube-apiserver,
#                                kube-controller-manager, kubelet and the fakelet, then helm and
#                                kubectl (tools/build; each timed)
#   bash tests/k8s/ci.sh test    build + configure tests/k8s on its own (in a
#                                temp dir) and run `ctest -L k8s` there; for
#                                use before/without the top-level CMake project
#   bash tests/k8s/ci.sh images [BUILD_DIR]
#                                install mmdebstrap and umoci, then `ctest -L images` in
#                                drover's build dir (default build): the controller and agent
#                                images built twice from Debian's packages and compared (timed)
#
# Afterwards the top-level build runs the smoke test with `ctest -L k8s`.
# Env: DROVER_K8S_CACHE (build cache, default ~/.cache/drover-k8s), and see env/build.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
log() { printf 'k8s ci: %s\n' "$*" >&2; }
die() { printf 'k8s ci: error: %s\n' "$*" >&2; exit 1; }

deps() {
  local pkgs=(openssl curl ca-certificates libcurl4-openssl-dev nlohmann-json3-dev libgtest-dev cmake g++)
  # The real kubelet's nodes (env/up with DROVER_K8S_KUBELET=real; ctest k8s_kubelet) and the
  # agent image they run (deploy/images/build).
  pkgs+=(containerd runc containernetworking-plugins iproute2 mmdebstrap)
  local missing=() p
  for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if ((${#missing[@]})); then
    command -v apt-get >/dev/null 2>&1 || die "missing packages ${missing[*]} and no apt-get"
    local sudo=()
    [[ $(id -u) -eq 0 ]] || sudo=(sudo)
    log "installing ${missing[*]}"
    "${sudo[@]}" apt-get update -qq || die "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" \
      || die "apt-get install ${missing[*]} failed"
  fi
  command -v go >/dev/null 2>&1 || die "Go is not installed; Kubernetes v1.36 needs Go >= 1.26 (Debian's golang-go is too old: install from go.dev/dl)"
  local gv
  gv="$(go env GOVERSION)"  # e.g. go1.26.8
  local minor="${gv#go1.}"; minor="${minor%%.*}"; minor="${minor%%[!0-9]*}"
  [[ "$gv" == go1.* && "${minor:-0}" -ge 26 ]] || die "$gv is too old; Kubernetes v1.36 needs Go >= 1.26"
}

build() {
  deps
  local t0=$SECONDS bindir
  # With the kubelet and the pause image of the real-kubelet mode, and kube-scheduler.
  bindir="$(DROVER_K8S_KUBELET=real DROVER_K8S_SCHEDULER=1 "$here/env/build")" || die "building the Kubernetes test environment failed"
  local dt=$((SECONDS - t0))
  log "environment binaries in $bindir"
  log "k8s env build took ${dt}s (cold builds take several minutes; cached ones a second)"
  echo "k8s env build: ${dt}s"
  t0=$SECONDS
  bindir="$("$here/tools/build")" || die "building helm and kubectl failed"
  dt=$((SECONDS - t0))
  log "helm and kubectl in $bindir"
  echo "k8s tools build: ${dt}s"
}

standalone_test() {
  build
  local work
  work="$(mktemp -d "${TMPDIR:-/tmp}/drover-k8s-ci.XXXXXX")"
  trap 'rm -rf "$work"' RETURN
  cat >"$work/CMakeLists.txt" <<EOF
cmake_minimum_required(VERSION 3.20)
project(drover_k8s_standalone CXX)
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
enable_testing()
add_subdirectory("$here" k8s)
EOF
  cmake -S "$work" -B "$work/build" -DCMAKE_BUILD_TYPE=Debug >/dev/null || die "cmake configure failed"
  cmake --build "$work/build" -j 2 || die "building the smoke test failed"
  (cd "$work/build" && ctest -L k8s --output-on-failure) || die "ctest -L k8s failed"
}

images() {
  local build_dir="${1:-$here/../../build}" t0=$SECONDS
  DROVER_WITH_IMAGES=1 "$here/../../scripts/install-deps" >&2 || die "installing mmdebstrap and umoci failed"
  ctest --test-dir "$build_dir" --output-on-failure -L images || die "ctest -L images failed"
  echo "k8s images: $((SECONDS - t0))s"
}

case "${1:-build}" in
  deps) deps ;;
  build) build ;;
  test) standalone_test ;;
  images) images "${2:-}" ;;
  *) die "usage: $0 deps|build|test|images [BUILD_DIR]" ;;
esac
