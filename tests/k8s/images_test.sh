#!/usr/bin/env bash
# CTest k8s_images (label images): deploy/images/build makes the controller and agent images
# twice from scratch (two mmdebstrap runs) and the two OCI layouts must be the same bytes; then
# each image is unpacked with umoci (an independent OCI implementation) and its binaries run
# inside the unpacked root file system (chroot), so every library they need is in the image.
# Usage: tests/k8s/images_test.sh BUILD_DIR
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build_dir="$(cd "${1:?usage: $0 BUILD_DIR}" && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
for tool in mmdebstrap umoci; do
  command -v "$tool" >/dev/null || fail "$tool is not installed (DROVER_WITH_IMAGES=1 scripts/install-deps)"
done
work="$(mktemp -d "${TMPDIR:-/tmp}/drover-images.XXXXXX")"
trap 'rm -rf "$work"' EXIT
export SOURCE_DATE_EPOCH="$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 1700000000)"
# The chart's tag, so that k8s_kubelet can load the layout this test leaves in BUILD_DIR/images.
tag="$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$repo/deploy/helm/drover/Chart.yaml")"
[[ -n "$tag" ]] || fail "no appVersion in deploy/helm/drover/Chart.yaml"

t0=$SECONDS
"$repo/deploy/images/build" --build-dir "$build_dir" --out "$work/a" --tag "$tag" >"$work/a.txt"
t1=$SECONDS
"$repo/deploy/images/build" --build-dir "$build_dir" --out "$work/b" --tag "$tag" >"$work/b.txt"
t2=$SECONDS
echo "first build $((t1 - t0))s, second build $((t2 - t1))s"
cat "$work/a.txt"
cmp "$work/a/oci/index.json" "$work/b/oci/index.json" \
  || fail "the two builds differ: $(cat "$work/a.txt") vs $(cat "$work/b.txt")"
diff <(cd "$work/a/oci" && find . -type f | sort) <(cd "$work/b/oci" && find . -type f | sort) \
  || fail "the two layouts hold different blobs"
echo "reproducible: both builds gave the same manifests and blobs"

for image in controller agent; do
  bundle="$work/bundle-$image"
  umoci unpack --image "$work/a/oci:$image-$tag" "$bundle" >/dev/null \
    || fail "umoci cannot unpack $image-$tag"
  rootfs="$bundle/rootfs"
  user="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["process"]["user"]["uid"])' "$bundle/config.json")"
  case "$image" in
    controller) bin=droverctld; want_uid=10001 ;;
    agent) bin=droverd; want_uid=0 ;;
  esac
  [[ "$user" == "$want_uid" ]] || fail "$image runs as uid $user, not $want_uid"
  [[ -x "$rootfs/usr/bin/$bin" ]] || fail "$image has no /usr/bin/$bin"
  # Without arguments each daemon prints its usage and exits 2: it loaded, so every library
  # it links is in the image.
  set +e
  out="$(chroot "$rootfs" "/usr/bin/$bin" 2>&1)"
  rc=$?
  set -e
  [[ $rc -eq 2 && "$out" == usage:* ]] || fail "$bin in the $image image: exit $rc: $out"
  chroot "$rootfs" /usr/bin/sinfo --help >/dev/null || fail "sinfo in the $image image does not run"
  grep -q '^drover:x:10001:' "$rootfs/etc/passwd" || fail "$image has no drover user"
  echo "$image: /usr/bin/$bin and the Slurm commands run inside the image (uid $user)"
done

# The controller image with the chart's configuration, as its pod would run it (but in a chroot,
# on loopback): the init container's copy of the secrets, then droverctld as uid 10001 with the
# slurm.conf the chart renders, and scontrol as that user on the controller's socket.
tools="$("$here/tools/build")"
rootfs="$work/bundle-controller/rootfs"
port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
http_port="$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
"$tools/helm" template drover "$repo/deploy/helm/drover" -n hpc --show-only templates/configmap.yaml \
  --set service.ports.slurmctld="$port" --set service.ports.http="$http_port" \
  --set slurmConf.settings.SlurmctldAddr=127.0.0.1 --set slurmConf.settings.DroverHttpAddress=127.0.0.1 \
  2>/dev/null | python3 -c 'import sys, yaml; print(yaml.safe_load(sys.stdin)["data"]["slurm.conf"], end="")' \
  >"$work/slurm.conf"
mkdir -p "$rootfs/etc/drover" "$rootfs/run/drover/secrets"
cp "$work/slurm.conf" "$rootfs/etc/drover/slurm.conf"
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$rootfs/run/drover/secrets/cluster.key"
head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$rootfs/run/drover/secrets/metrics-token"
chown -R 0:10001 "$rootfs/run/drover/secrets" && chmod 0440 "$rootfs"/run/drover/secrets/*
as_drover=(chroot --userspec=10001:10001 "$rootfs" env -i PATH=/usr/bin:/bin)
"${as_drover[@]}" install -m 0600 -t /var/lib/drover /run/drover/secrets/cluster.key /run/drover/secrets/metrics-token \
  || fail "the init container's command fails in the controller image"
"${as_drover[@]}" droverctld --conf /etc/drover/slurm.conf --state-dir /var/lib/drover >"$work/ctld.log" 2>&1 &
ctld=$!
trap 'kill $ctld 2>/dev/null || true; wait $ctld 2>/dev/null || true; rm -rf "$work"' EXIT
ok=0
for _ in $(seq 1 100); do
  # SlurmUser=drover resolves to the image's user 10001: the controller knows its own user.
  if out="$("${as_drover[@]}" DROVER_SOCKET=/var/lib/drover/ctld.sock SLURM_CONF=/etc/drover/slurm.conf scontrol show config 2>&1)" \
     && grep -Eq '^SlurmUser += drover\(10001\)$' <<<"$out"; then ok=1; break; fi
  kill -0 $ctld 2>/dev/null || break
  sleep 0.2
done
((ok)) || fail "droverctld in the controller image with the chart's slurm.conf: scontrol said '${out:-}'; log: $(tail -5 "$work/ctld.log")"
kill $ctld; wait $ctld 2>/dev/null || true
echo "controller image: droverctld runs as drover on the chart's slurm.conf; scontrol answers"
# The checked layout becomes BUILD_DIR/images (deploy/images/build's default output), which
# k8s_kubelet loads instead of building the images again.
rm -rf "$build_dir/images.new" && cp -a "$work/a" "$build_dir/images.new"
rm -rf "$build_dir/images" && mv "$build_dir/images.new" "$build_dir/images"
echo "3 passed, 0 failed"
