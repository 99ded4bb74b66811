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

t0=$SECONDS
"$repo/deploy/images/build" --build-dir "$build_dir" --out "$work/a" --tag test >"$work/a.txt"
t1=$SECONDS
"$repo/deploy/images/build" --build-dir "$build_dir" --out "$work/b" --tag test >"$work/b.txt"
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
  umoci unpack --image "$work/a/oci:$image-test" "$bundle" >/dev/null \
    || fail "umoci cannot unpack $image-test"
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
echo "2 passed, 0 failed"
