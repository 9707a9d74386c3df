#!/usr/bin/env bash
# The package, as a user gets it: `scripts/make-deb` on this build, `dpkg -i` into a scratch root
# (its own dpkg database; the host's libraries satisfy Depends), then the installed binary runs,
# its man page and completion are where man and bash look, and its unit passes systemd-analyze.
# Env: SLUICE_BUILD_DIR (the build tree), SLUICE_SOURCE_DIR.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "package test: $*" >&2; exit 1; }

# The man page is built by default builds; a build of only the tests' targets lacks it.
cmake --build "$SLUICE_BUILD_DIR" --target sluice_man >/dev/null
# Uncompressed: a sanitizer build's binary is large, and xz would spend minutes on it.
deb=$(SLUICE_DEB_COMPRESSION=none "$SLUICE_SOURCE_DIR/scripts/make-deb" "$SLUICE_BUILD_DIR" "$work/out")
[[ -f $deb ]] || fail "make-deb wrote no .deb"
info=$(dpkg-deb --info "$deb")
grep -q '^ Package: sluice$' <<<"$info" || fail "no Package field: $info"
grep -Eq '^ Depends: .*libc6 \(>= ' <<<"$info" || fail "Depends lacks libc6: $info"
grep -Eq '^ Depends: .*libssl3' <<<"$info" || fail "Depends lacks libssl3: $info"

root="$work/root"
mkdir -p "$root/var/lib/dpkg/info" "$root/var/lib/dpkg/updates"
touch "$root/var/lib/dpkg/status" "$root/var/lib/dpkg/available"
# Its dependencies live in the host's database, not the scratch root's: --force-depends.
dpkg --root="$root" --force-depends --force-not-root --log=/dev/null -i "$deb" >"$work/dpkg.out" 2>&1 ||
    fail "dpkg -i failed: $(cat "$work/dpkg.out")"
dpkg --root="$root" -s sluice | grep -q '^Status: install ok installed$' || fail "not installed"

"$root/usr/bin/sluice" --version | grep -Eq '^sluice [0-9]+\.[0-9]+\.[0-9]+ \(' ||
    fail "installed binary: $("$root/usr/bin/sluice" --version 2>&1)"
[[ -s $root/usr/share/man/man1/sluice.1 ]] || fail "no man page"
grep -q 'sluice serve' "$root/usr/share/man/man1/sluice.1" || fail "the man page lacks the commands"
if command -v man >/dev/null; then
    man -l "$root/usr/share/man/man1/sluice.1" >/dev/null 2>&1 || fail "man cannot read the man page"
fi
completion="$root/usr/share/bash-completion/completions/sluice"
[[ -s $completion ]] || fail "no bash completion"
# The completion completes from the installed binary's own help.
out=$(bash -c "source '$completion'; COMP_WORDS=('$root/usr/bin/sluice' se); COMP_CWORD=1; _sluice; echo \${COMPREPLY[*]}")
grep -qw serve <<<"$out" || fail "completion of 'se': $out"
out=$(bash -c "source '$completion'; COMP_WORDS=('$root/usr/bin/sluice' serve --work); COMP_CWORD=2; _sluice; echo \${COMPREPLY[*]}")
grep -qw -- --workspace-root <<<"$out" || fail "completion of 'serve --work': $out"

# The unit as installed, checked by systemd-analyze verify on this machine: its ExecStart names
# /usr/bin/sluice, so the copy verified names the scratch root's binary there (a scratch root has no
# sysinit.target for `verify --root` to start from).
unit="$root/usr/lib/systemd/system/sluice.service"
[[ -s $unit ]] || fail "no systemd unit"
grep -q '^ExecStart=/usr/bin/sluice serve' "$unit" || fail "ExecStart: $(grep ExecStart "$unit")"
grep -q '^Type=notify$' "$unit" || fail "the unit is not Type=notify"
mkdir -p "$work/verify"
sed "s|^ExecStart=/usr/bin/sluice |ExecStart=$root/usr/bin/sluice |" "$unit" >"$work/verify/sluice.service"
verify=$(systemd-analyze verify "$work/verify/sluice.service" 2>&1) || fail "systemd-analyze verify: $verify"
[[ -z $verify ]] || fail "systemd-analyze verify: $verify"

dpkg --root="$root" --force-not-root --log=/dev/null -r sluice >/dev/null 2>&1 || fail "dpkg -r failed"
[[ ! -e $root/usr/bin/sluice ]] || fail "dpkg -r left the binary"
echo "package test: $(basename "$deb") installs, runs and removes cleanly"
