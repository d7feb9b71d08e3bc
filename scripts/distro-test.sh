#!/usr/bin/env bash
# Builds and tests evalrun on another Debian release, in a chroot made with debootstrap from
# Debian's own mirror: the same scripts/test.sh a user runs, on that release's compilers and
# packages (Debian 13: GCC 14, Catch2 3, libgit2 1.9, yaml-cpp 0.8).
#
#   scripts/distro-test.sh [RELEASE] [ARGS...]   RELEASE: trixie (default) or bookworm; ARGS go to
#                                                scripts/test.sh, e.g. -DEVALRUN_WERROR=ON
#
# The chroot is cached outside the checkout, in $EVALRUN_CHROOT_CACHE (default
# /var/cache/evalrun/chroots/RELEASE), so a later run only copies the sources in and rebuilds what
# changed (ccache inside it); a machine without it makes it first (about 1 minute, plus the
# packages). The chroot is entered through a private mount namespace whose root is the chroot
# (pivot_root), not with chroot(8): the kernel refuses user namespaces to a chrooted process, and
# bubblewrap (the sandbox the tests exercise) needs them. Every mount ends with the namespace.
# Needs root and the network to $EVALRUN_DEBIAN_MIRROR (default http://deb.debian.org/debian).
set -euo pipefail
cd "$(dirname "$0")/.."
release=trixie
if [ $# -gt 0 ] && [[ "$1" != -* ]]; then release=$1; shift; fi
case "$release" in
  trixie|bookworm) ;;
  *) echo "distro-test: unknown release '$release' (trixie or bookworm)" >&2; exit 2 ;;
esac
[ "$(id -u)" -eq 0 ] || { echo "distro-test: needs root (debootstrap, mount namespaces)" >&2; exit 2; }
mirror=${EVALRUN_DEBIAN_MIRROR:-http://deb.debian.org/debian}
root=${EVALRUN_CHROOT_CACHE:-/var/cache/evalrun/chroots}/$release

if [ ! -x "$root/usr/bin/apt-get" ]; then
  command -v debootstrap >/dev/null 2>&1 || {
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq && apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  }
  echo "distro-test: making a $release chroot in $root"
  rm -rf "$root.partial"
  mkdir -p "$(dirname "$root")"
  debootstrap --variant=minbase "$release" "$root.partial" "$mirror" >"$root.log" 2>&1 || {
    tail -20 "$root.log" >&2; echo "distro-test: debootstrap failed (log: $root.log)" >&2; exit 1; }
  rm -rf "$root"
  mv "$root.partial" "$root"
fi
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true

# The sources: what git tracks plus untracked files it does not ignore (a developer's work in
# progress), into /src; /src/build and the chroot's ccache stay, so the build is incremental.
# Extracted with the time of the copy (-m), not the files' own: an object built in an earlier
# run after a file was edited here would otherwise look newer than the edited file and be kept
# stale (seen: a struct changed in core/metrics.h, one object still of the old layout). ccache
# makes the recompilation cheap.
mkdir -p "$root/src" "$root/.oldroot"
find "$root/src" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
git ls-files -z --cached --others --exclude-standard | tar --null -T - -cf - | tar -xmf - -C "$root/src"

echo "distro-test: $release: scripts/test.sh $*"
args=$(printf ' %q' "$@")
unshare --mount --propagation private bash -c "
set -e
mount --bind '$root' '$root'
mount -t proc proc '$root/proc'
mount --rbind /dev '$root/dev'
mount --rbind /sys '$root/sys'
mount -t tmpfs tmpfs '$root/tmp'
cd '$root'
pivot_root . .oldroot
umount -l /.oldroot
cd /src
exec /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  HOME=/root LANG=C.UTF-8 CI=\"\${CI:-}\" TERM=dumb bash scripts/test.sh$args
"
