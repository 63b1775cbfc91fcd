#!/usr/bin/env bash
# Tries the packages scripts/package built, as a user who installs them would:
#   packaging/check-packages.sh build/packages
# - each .deb: name, version (the project's), Depends (Qt 6, QCustomPlot and
#   SQLite libraries where the binaries use them, from dpkg-shlibdeps), files;
# - the .desktop entry and AppStream metainfo validate;
# - unpacked into a throwaway root (dpkg -x): shardscope-cli --version names
#   the version and commit, `plan` plans the default model, the desktop
#   renders a screenshot offscreen, the agent starts with the packaged default
#   config (its paths moved into the root) on loopback and answers
#   `remote describe`, the man pages render;
# - the systemd unit: systemd-analyze security below 4.0;
# - the wheel: installed into a fresh venv without torch, it loads a plan;
# - lintian: no error, and every warning is one packaging/lintian-expected explains.
# Exits 1 at the first failed check, naming it.
set -euo pipefail
pkgs=$(cd "${1:?usage: check-packages.sh DIR}" && pwd)
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=$(mktemp -d /tmp/shardscope-packages.XXXXXX)
agent_pid=""
cleanup() {
  [ -n "$agent_pid" ] && kill "$agent_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check-packages: FAIL: $*" >&2; exit 1; }
ok() { echo "check-packages: ok: $*"; }

version=$(sed -n 's/^project(ShardScope VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ -n "$version" ] || fail "no project version in CMakeLists.txt"

# --- the packages and their metadata ----------------------------------------
for name in shardscope shardscope-cli shardscope-agent; do
  deb=$(ls "$pkgs/${name}_${version}-"*.deb 2>/dev/null | head -1)
  [ -n "$deb" ] || fail "$name: no ${name}_${version}-*.deb in $pkgs"
  [ "$(dpkg-deb -f "$deb" Package)" = "$name" ] || fail "$deb: Package is not $name"
  [ "$(dpkg-deb -f "$deb" Version)" = "$version-1" ] || fail "$deb: Version $(dpkg-deb -f "$deb" Version)"
  dpkg -x "$deb" "$work/root"
done
depends() { dpkg-deb -f "$(ls "$pkgs/$1_${version}-"*.deb)" Depends; }
depends shardscope | grep -q "libqt6widgets6" || fail "shardscope: Depends lacks Qt 6 Widgets: $(depends shardscope)"
depends shardscope | grep -q "libqcustomplot" || fail "shardscope: Depends lacks QCustomPlot"
depends shardscope | grep -q "libsqlite3" || fail "shardscope: Depends lacks SQLite"
depends shardscope-cli | grep -q "libsqlite3" || fail "shardscope-cli: Depends lacks SQLite"
depends shardscope-agent | grep -q "libqt6network6" || fail "shardscope-agent: Depends lacks Qt 6 Network"
depends shardscope-agent | grep -q "shardscope-cli (= $version-1)" ||
  fail "shardscope-agent: Depends lacks shardscope-cli"
ok "three packages $version-1; Depends: $(depends shardscope | tr -d '\n' | cut -c1-160)..."

root="$work/root"
for f in usr/bin/shardscope usr/bin/shardscope-cli usr/bin/shardscope-engine usr/bin/shardscope-agent \
         usr/share/applications/io.shardscope.ShardScope.desktop \
         usr/share/icons/hicolor/scalable/apps/io.shardscope.ShardScope.svg \
         usr/share/metainfo/io.shardscope.ShardScope.metainfo.xml \
         usr/share/man/man1/shardscope-cli.1.gz usr/share/man/man1/shardscope.1.gz \
         usr/share/man/man8/shardscope-agent.8.gz usr/share/bash-completion/completions/shardscope-cli \
         lib/systemd/system/shardscope-agent.service etc/shardscope/agent.json; do
  [ -e "$root/$f" ] || fail "/$f is in no package"
done
ok "programs, desktop entry, icon, metainfo, man pages, completion, unit and config in place"
desktop-file-validate "$root/usr/share/applications/io.shardscope.ShardScope.desktop" ||
  fail "desktop-file-validate: the .desktop entry"
appstreamcli validate --no-net --pedantic "$root/usr/share/metainfo/io.shardscope.ShardScope.metainfo.xml" \
  > "$work/appstream.txt" 2>&1 || fail "appstreamcli validate: $(cat "$work/appstream.txt")"
ok "the .desktop entry and the AppStream metainfo validate"

# --- the programs, unpacked ------------------------------------------------------
cli="$root/usr/bin/shardscope-cli"
"$cli" --version | grep -q "^shardscope-cli $version (commit [0-9a-f]\{12\}\(-dirty\)\?\|unknown)" ||
  fail "shardscope-cli --version: $("$cli" --version | head -1)"
for p in shardscope-engine shardscope-agent; do
  "$root/usr/bin/$p" --version | grep -q "^$p $version (commit " || fail "$p --version"
done
QT_QPA_PLATFORM=offscreen "$root/usr/bin/shardscope" --version | grep -q "$version (commit " ||
  fail "shardscope --version"
ok "--version of the four programs: $("$cli" --version | head -1)"
"$cli" plan > "$work/plan.txt" || fail "shardscope-cli plan exited $?"
grep -q "^Model \"DLRM-DCNv2" "$work/plan.txt" && grep -q " yes$" "$work/plan.txt" ||
  fail "plan: $(head -3 "$work/plan.txt")"
ok "shardscope-cli plan: $(sed -n 4p "$work/plan.txt" | tr -s ' ' | cut -c1-80)"
QT_QPA_PLATFORM=offscreen "$root/usr/bin/shardscope" --screenshot "$work/window.png" --screenshot-size 1280x800 ||
  fail "shardscope --screenshot exited $?"
[ "$(stat -c %s "$work/window.png")" -gt 20000 ] || fail "shardscope --screenshot wrote a near-empty image"
ok "shardscope --screenshot offscreen: $(stat -c %s "$work/window.png") bytes"
for page in "$root"/usr/share/man/man*/*.gz; do
  warnings=$(MANWIDTH=100 man --warnings -l "$page" 2>&1 >/dev/null || true)
  [ -z "$warnings" ] || fail "$(basename "$page"): $warnings"
done
ok "man pages render without warnings"

# --- the agent with its packaged config, on loopback -------------------------
python3 - "$root" "$work" <<'PY'
import json, os, socket, sys
root, work = sys.argv[1], sys.argv[2]
with open(os.path.join(root, "etc/shardscope/agent.json")) as f:
    c = json.load(f)
assert c["listen"]["address"] == "127.0.0.1", "the default config must listen on loopback only"
s = socket.socket(); s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]; s.close()
c["listen"]["port"] = port
c["token_file"] = os.path.join(work, "agent.token")
c["store_dir"] = os.path.join(work, "store")
if "engine" in c:
    c["engine"] = os.path.join(root, c["engine"].lstrip("/"))
with open(os.path.join(work, "agent.json"), "w") as f:
    json.dump(c, f)
with open(os.path.join(work, "port"), "w") as f:
    f.write(str(port))
PY
mkdir -m 0700 "$work/store"
(umask 077; head -c 32 /dev/urandom | base64 > "$work/agent.token")
PATH="$root/usr/bin:$PATH" "$root/usr/bin/shardscope-agent" --config "$work/agent.json" > "$work/agent.log" 2>&1 &
agent_pid=$!
port=$(cat "$work/port")
for _ in $(seq 1 100); do
  grep -q "listening on" "$work/agent.log" && break
  kill -0 "$agent_pid" 2>/dev/null || fail "the agent exited: $(cat "$work/agent.log")"
  sleep 0.1
done
"$cli" remote --agent "127.0.0.1:$port" --token-file "$work/agent.token" --known-agents "$work/known" \
  --accept-new describe > "$work/describe.txt" 2>&1 || fail "remote describe: $(cat "$work/describe.txt")"
ok "the agent with the packaged config answered describe: $(head -1 "$work/describe.txt")"
kill "$agent_pid"
wait "$agent_pid" 2>/dev/null || true
agent_pid=""

# --- the systemd unit ----------------------------------------------------------
if command -v systemd-analyze >/dev/null; then
  exposure=$(systemd-analyze security --offline=true --root="$root" shardscope-agent.service 2>&1 |
    sed -n 's/.*Overall exposure level for shardscope-agent.service: \([0-9.]*\).*/\1/p')
  [ -n "$exposure" ] || fail "systemd-analyze security gave no exposure level"
  awk -v e="$exposure" 'BEGIN { exit !(e < 4.0) }' || fail "systemd-analyze security: exposure $exposure, not below 4.0"
  ok "systemd-analyze security: exposure $exposure"
else
  fail "systemd-analyze is missing (apt-get install systemd)"
fi

# --- the wheel in a fresh venv, without torch ----------------------------------
wheel=$(ls "$pkgs"/shardscope_torchrec-"$version"-*.whl 2>/dev/null | head -1)
[ -n "$wheel" ] || fail "no shardscope_torchrec-$version wheel in $pkgs"
py=/usr/bin/python3  # Debian's, with its venv module (bootstrap installs python3-venv)
[ -x "$py" ] || py=python3
"$py" -m venv "$work/venv"
"$work/venv/bin/pip" install --quiet --no-index "$wheel" || fail "pip install $wheel"
"$work/venv/bin/python" - "$src/tests/data/plans/strided_8x4.json" "$version" <<'PY' || fail "the wheel: see above"
import importlib.metadata, sys
import shardscope_torchrec
plan = shardscope_torchrec.load_plan(sys.argv[1])
installed = importlib.metadata.version("shardscope-torchrec")
assert installed == sys.argv[2], f"the wheel is version {installed}, the project {sys.argv[2]}"
assert shardscope_torchrec.__version__ == sys.argv[2]
print(f"check-packages: ok: the wheel loads {sys.argv[1].split('/')[-1]}: world size {plan.world_size}")
PY

# --- lintian ---------------------------------------------------------------------
expected=$(grep -v '^#' "$src/packaging/lintian-expected" | awk 'NF { print $1 }' | sort -u | paste -sd, -)
for deb in "$pkgs"/*.deb; do
  report=$(lintian --tag-display-limit 0 --suppress-tags "$expected" "$deb" 2>&1 |
    grep -v "^running with root privileges is not recommended" || true)
  [ -z "$report" ] || fail "lintian $(basename "$deb"):
$report"
done
ok "lintian: clean but for the tags packaging/lintian-expected explains"
echo "check-packages: all checks passed"
