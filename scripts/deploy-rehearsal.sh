#!/usr/bin/env bash
# The deployment runbook (docs/deploy.md, "Scaled out, step by step") rehearsed
# on one machine, so the page and the code cannot drift apart: .ci/run runs it
# after the tests.
#
#   scripts/deploy-rehearsal.sh          # after `npm ci` (which builds dist/)
#
# It runs every block of the runbook marked `<!-- rehearsal: NAME -->` as the
# page has it, in the page's order, in this shell, with a throwaway PostgreSQL
# cluster (Debian's postgresql-15), redis-server, s3rver (in place of the
# provider), Debian's nginx and two instances (`node dist/src/server.js`, as the
# page's systemd unit starts them). Only addresses, ports and paths are swapped
# for free loopback ports and a temporary directory (printed at the start), and
# TLS is left out (nginx listens on plain HTTP). Two shell functions stand in
# for what only exists on a real machine: `sudo` (`-u postgres` is the
# throwaway cluster's superuser; root and `packs` are this user) and
# `systemctl` (start, stop, restart, enable --now of the page's units). Blocks
# beginning `# production only` are not run; every other block of the runbook
# must be marked, or this fails.
#
# Before the page's steps it makes "an existing one-machine site": the same
# build on SQLite and local files, with a user, a token and a published pack.
# After them it checks, printing PASS or FAIL for each:
#   - the moved pack downloads through nginx byte for byte (SHA-256);
#   - a version published through nginx is the update-check's answer on both
#     instances, asked directly, within 1 s;
#   - 13 wrong gate passwords through nginx, each with a fresh made-up
#     X-Forwarded-For, get 401 x 10 then 429, spread over both instances, and
#     then both instances refuse that client even its right password;
#   - /readyz answers 200 on both instances, /metrics answers the scrape token
#     (PACKS_METRICS_TOKEN, step 10) and refuses none or a wrong one;
#   - SIGTERM stops every server with exit code 0, and nginx serves through the
#     instance left while one is stopped.
# Then the page's "One machine behind nginx" (its settings file, one instance,
# step 6's site with the internal location; as root, nginx's workers run as
# nobody in the store's group, as www-data in packs-files would) on a fresh
# site, checking that a download through nginx has the uploaded bytes
# (SHA-256), that a Range gets its bytes with 206, that the instance itself
# sent no body, that a hidden pack's signed link is refused through nginx, and
# that the download count moves.
# Exit code 0 only when every check passed. Works as root (CI: PostgreSQL then
# runs as the `postgres` user) and as a normal user; everything it starts is
# stopped, and its temporary directory removed, on any exit.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
# DEPLOY_DOC: rehearse another copy of the page (to see a check fail on a broken one).
doc="${DEPLOY_DOC:-$repo/docs/deploy.md}"
started_ms=$(($(date +%s%N) / 1000000))

now_ms() { echo $(($(date +%s%N) / 1000000)); }
say() { printf '%s\n' "$*"; }
failures=0
pass() { printf 'PASS  %s\n' "$*"; }
fail() { printf 'FAIL  %s\n' "$*"; failures=$((failures + 1)); }
# A step the rest depends on went wrong: stop here (the EXIT trap cleans up).
die() { printf 'FAIL  %s\n' "$*"; exit 1; }

# ---------------------------------------------------------------- what it needs
bindir="${PG_BINDIR:-}"
if [ -z "$bindir" ]; then
  for candidate in /usr/lib/postgresql/15/bin /usr/lib/postgresql/*/bin; do
    if [ -x "$candidate/initdb" ]; then bindir="$candidate"; break; fi
  done
fi
[ -n "$bindir" ] && [ -x "$bindir/initdb" ] || die "no PostgreSQL server (apt-get install postgresql-15, or set PG_BINDIR)"
for tool in node curl nginx redis-server sha256sum; do
  command -v "$tool" >/dev/null || die "$tool is not installed (.ci/run installs nginx-light, redis-server, postgresql-15)"
done
[ -f dist/src/server.js ] || die "no build in dist/: run npm ci (or npm run build) first"
[ -x node_modules/.bin/s3rver ] || die "s3rver is missing: run npm ci (it is a dev dependency)"
node_bin="$(command -v node)"

as_pg=()
superuser="$(id -un)"
if [ "$(id -u)" -eq 0 ]; then
  # initdb and postgres refuse to run as root.
  id postgres >/dev/null 2>&1 || die "running as root needs the postgres system user (installed with postgresql-15)"
  as_pg=(runuser -u postgres --)
  superuser=postgres
fi

# ---------------------------------------------------------------- cleanup
tmp="$(mktemp -d "${TMPDIR:-/tmp}/packs-rehearsal-XXXXXX")"
# Traversable (not listable) so the postgres user reaches its cluster inside; secrets sit in 0700 folders.
chmod 711 "$tmp"
mkdir -p "$tmp/tmp" "$tmp/logs" "$tmp/out"
export TMPDIR="$tmp/tmp"
declare -A unit_pid=()
declare -A log_from=()
other_pids=()
pg_started=""
current="preparing"

cleanup() {
  local status=$?
  set +e
  trap - ERR
  if [ "$status" -ne 0 ] && [ -s "$tmp/out/current" ]; then
    say "---- output of the failed step ($current):"
    sed 's/^/    /' "$tmp/out/current"
  fi
  local pid
  for pid in "${unit_pid[@]}" "${other_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; done
  for pid in "${unit_pid[@]}" "${other_pids[@]}"; do
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null
  done
  wait 2>/dev/null
  if [ -n "$pg_started" ]; then
    "${as_pg[@]}" "$bindir/pg_ctl" -D "$tmp/pg/data" -m immediate -w stop >/dev/null 2>&1
  fi
  [ -n "${KEEP_REHEARSAL:-}" ] && say "kept $tmp" || rm -rf "$tmp"
  local took=$((($(now_ms) - started_ms) / 100))
  if [ "$status" -eq 0 ] && [ "$failures" -eq 0 ]; then
    say "deploy rehearsal: every check passed ($((took / 10)).$((took % 10)) s)"
  else
    say "deploy rehearsal FAILED at: $current ($failures failed checks, exit $status, $((took / 10)).$((took % 10)) s)"
    [ "$status" -eq 0 ] && status=1
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---------------------------------------------------------------- ports
read -r PG_PORT REDIS_PORT S3_PORT OLD_PORT PORT1 PORT2 HTTP_PORT HTTPS_PORT < <(node -e '
  const net = require("node:net")
  // All open at once, so the eight are distinct.
  Promise.all(Array.from({ length: 8 }, () => new Promise((resolve) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => resolve(s))
  }))).then((servers) => {
    console.log(servers.map((s) => s.address().port).join(" "))
    for (const s of servers) s.close()
  })')
SITE="http://127.0.0.1:$HTTPS_PORT"

# ---------------------------------------------------------------- the page's blocks
# What the page names, and what stands in for it here (longest first: /srv/packs/data before /srv/packs).
swaps=(
  "/srv/packs/data" "$tmp/old-site"
  "/srv/packs" "$repo"
  "/etc/packs/env" "$tmp/etc/packs/env"
  "/etc/redis/redis.conf" "$tmp/etc/redis/redis.conf"
  "/var/lib/packs" "$tmp/var/lib/packs"
  "/var/tmp/packs-export" "$tmp/export"
  "/var/www/html" "$tmp/www"
  "https://packs.example.org" "$SITE"
  "http://packs.example.org" "http://127.0.0.1:$HTTP_PORT"
  "https://s3.example.net" "http://127.0.0.1:$S3_PORT"
  "127.0.0.1:8001" "127.0.0.1:$PORT1"
  "127.0.0.1:8002" "127.0.0.1:$PORT2"
  "127.0.0.1:5432" "127.0.0.1:$PG_PORT"
  "127.0.0.1:6379" "127.0.0.1:$REDIS_PORT"
  "/usr/bin/node" "$node_bin"
)
# The values the page asks the reader to paste, filled in once known.
declare -A placeholders=()

localize() {
  local text="$1" i
  for ((i = 0; i < ${#swaps[@]}; i += 2)); do text="${text//"${swaps[i]}"/"${swaps[i + 1]}"}"; done
  local name
  for name in "${!placeholders[@]}"; do text="${text//"$name"/"${placeholders[$name]}"}"; done
  # Nothing may reach the real system: every path and name must have been swapped.
  local rest="${text//"$tmp"/TMP}"
  rest="${rest//"$repo"/REPO}"
  rest="${rest//"$node_bin"/NODE}"
  if grep -nE '(^|[^A-Za-z0-9_])/(etc|srv|var|usr|home|root)/|example\.(org|net)|<[a-z][a-z0-9 ._-]*>' <<<"$rest" >&2; then
    die "$current: the lines above name something the rehearsal does not swap (docs/deploy.md changed?)"
  fi
  printf '%s\n' "$text"
}

# The body of the block marked <!-- rehearsal: NAME --> (the line right before its fence).
block() {
  awk -v name="$1" '
    $0 == "<!-- rehearsal: " name " -->" { want = 1; next }
    want == 1 && /^```/ { want = 2; found++; next }
    want == 1 { want = 0 }
    want == 2 && /^```$/ { want = 0; next }
    want == 2 { print }
    END { if (found != 1) exit 3 }
  ' "$doc" || die "docs/deploy.md has no block marked <!-- rehearsal: $1 --> right before a fence (or more than one)"
}

# Runs a shell block of the page in this shell (its variables stay, as in the reader's shell), its output kept.
run_block() {
  local name="$1" input="${2:-}" text
  current="runbook block '$name'"
  text="$(block "$name")"
  text="$(localize "$text")"
  say "== runbook: $name"
  # shellcheck disable=SC1090
  source <(printf '%s\n' "$text") <<<"$input" >"$tmp/out/current" 2>&1
  cd "$repo"
  sed 's/^/    /' "$tmp/out/current"
  mv "$tmp/out/current" "$tmp/out/$name"
}

# Every block of the runbook is rehearsed or says it is production only.
current="the runbook's blocks are all marked"
unmarked="$(awk '
  /^## Scaled out, step by step/ { inside = 1 }
  /^## Backups and restore/ { inside = 0 }
  inside && !fence && /^```/ {
    fence = 1; first = 1; start = NR
    marked = (prev ~ /^<!-- (rehearsal: [a-z0-9-]+|production only[^>]*) -->$/)
    next
  }
  fence && /^```$/ { fence = 0; if (!marked) print "docs/deploy.md line " start; next }
  fence && first { first = 0; if ($0 ~ /^# production only/) marked = 1 }
  { prev = $0 }
' "$doc")"
grep -q '^## Scaled out, step by step' "$doc" || die "docs/deploy.md has no '## Scaled out, step by step' section"
if [ -n "$unmarked" ]; then
  fail "blocks neither rehearsed (<!-- rehearsal: NAME -->) nor '# production only': $unmarked"
else
  pass "every block of the runbook is rehearsed here or marked production only"
fi

say "== swapped in the page's blocks:"
for ((i = 0; i < ${#swaps[@]}; i += 2)); do printf '    %-28s -> %s\n' "${swaps[i]}" "${swaps[i + 1]}"; done

# ---------------------------------------------------------------- stand-ins
pg_env=(env "PATH=$bindir:$PATH" "PGHOST=$tmp/pg" "PGPORT=$PG_PORT" PGDATABASE=postgres)
sudo() {
  local user=root
  if [ "${1:-}" = -u ]; then user="$2"; shift 2; fi
  case "$user" in
    postgres) "${as_pg[@]}" "${pg_env[@]}" "$@" ;;
    root | packs) "$@" ;;
    *) die "sudo -u $user: the rehearsal knows postgres, packs and root" ;;
  esac
}

systemctl() {
  local verb="$1" unit
  shift
  case "$verb" in
    daemon-reload) ;; # the unit is read from the page at each start
    enable)
      [ "${1:-}" = --now ] || die "systemctl enable without --now: nothing to rehearse"
      shift
      for unit in "$@"; do start_unit "$unit"; done ;;
    start) for unit in "$@"; do start_unit "$unit"; done ;;
    restart) for unit in "$@"; do stop_unit "$unit"; start_unit "$unit"; done ;;
    stop) for unit in "$@"; do stop_unit "$unit"; done ;;
    *) die "systemctl $verb: not rehearsed" ;;
  esac
}

wait_http() { # url, unit: until it answers (any status), or the process is gone
  local url="$1" unit="$2"
  for _ in $(seq 1 300); do
    curl -s -o /dev/null --max-time 1 "$url" && return 0
    kill -0 "${unit_pid[$unit]}" 2>/dev/null || { cat "$tmp/logs/$unit.log"; die "$unit exited at start"; }
    sleep 0.05
  done
  cat "$tmp/logs/$unit.log"
  die "$unit did not answer at $url within 15 s"
}

# The clean environment systemd gives a service, plus what the unit or caller adds.
clean_env=(env -i "PATH=$PATH" "TMPDIR=$TMPDIR" LANG=C.UTF-8)

start_unit() {
  local unit="$1"
  [ -z "${unit_pid[$unit]:-}" ] || die "$unit is already running"
  touch "$tmp/logs/$unit.log"
  log_from[$unit]=$(($(wc -l <"$tmp/logs/$unit.log") + 1))
  case "$unit" in
    redis-server)
      redis-server "$tmp/etc/redis/redis.conf" >>"$tmp/logs/$unit.log" 2>&1 &
      unit_pid[$unit]=$!
      for _ in $(seq 1 100); do unit_log "$unit" | grep -q 'Ready to accept connections' && return 0; sleep 0.05; done
      cat "$tmp/logs/$unit.log"
      die "redis-server did not start" ;;
    packs)
      # The old one-machine site: npm start's command with its data directory.
      "${clean_env[@]}" "PACKS_DATA_DIR=$tmp/old-site" "PORT=$OLD_PORT" "$node_bin" dist/src/server.js >>"$tmp/logs/$unit.log" 2>&1 &
      unit_pid[$unit]=$!
      wait_http "http://127.0.0.1:$OLD_PORT/healthz" "$unit" ;;
    packs@[0-9]*) start_instance "$unit" ;;
    *) die "systemctl start $unit: not rehearsed" ;;
  esac
}

# packs@N as the page's unit starts it: WorkingDirectory, Environment= (with %i), then EnvironmentFile
# (which wins, as in systemd), then ExecStart. User= and the sandboxing are systemd's: not rehearsed.
start_instance() {
  local unit="$1" n="${1#packs@}" unit_text line key value
  local workdir="" env_file="" exec_line="" assignments=()
  unit_text="$(localize "$(block systemd-unit)")"
  while IFS= read -r line; do
    key="${line%%=*}"
    value="${line#*=}"
    value="${value//%i/$n}"
    case "$key" in
      WorkingDirectory) workdir="$value" ;;
      EnvironmentFile) env_file="$value" ;;
      Environment) assignments+=("$value") ;;
      ExecStart) exec_line="$value" ;;
    esac
  done <<<"$unit_text"
  [ -n "$workdir" ] && [ -n "$env_file" ] && [ -n "$exec_line" ] || die "the unit lacks WorkingDirectory=, EnvironmentFile= or ExecStart="
  local i
  for i in "${!assignments[@]}"; do
    # Ports of the page (8001, 8002) become this run's free ones.
    case "${assignments[$i]}" in
      PORT=8001) assignments[$i]="PORT=$PORT1" ;;
      PORT=8002) assignments[$i]="PORT=$PORT2" ;;
    esac
  done
  check_env_file "$env_file"
  local -a command
  read -r -a command <<<"$exec_line"
  (
    cd "$workdir"
    exec "${clean_env[@]}" "${assignments[@]}" bash -c 'set -a && . "$1" && set +a && shift && exec "$@"' _ "$env_file" "${command[@]}"
  ) >>"$tmp/logs/$unit.log" 2>&1 &
  unit_pid[$unit]=$!
  local port
  port="$(for a in "${assignments[@]}"; do case "$a" in PORT=*) echo "${a#PORT=}" ;; esac; done)"
  [ -n "$port" ] || die "the unit sets no PORT for $unit"
  wait_http "http://127.0.0.1:$port/healthz" "$unit"
}

# The settings file is read by `set -a; . file` here and by systemd in production: only lines both read alike.
env_file_checked=""
check_env_file() {
  [ -n "$env_file_checked" ] && return 0
  env_file_checked=1
  local bad
  bad="$(grep -nvE "^(#.*|[A-Za-z_][A-Za-z0-9_]*='[^'\$\\\\]*'|[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9_./:@,+-]*|)\$" "$1" || true)"
  if [ -n "$bad" ]; then
    fail "the settings file has lines systemd and sh may read differently: ${bad//$'\n'/; }"
  else
    pass "the settings file: $(grep -c = "$1") settings, each single-quoted or plain, read alike by systemd's EnvironmentFile= and sh"
  fi
}

stop_unit() {
  local unit="$1" pid code=0 t0
  pid="${unit_pid[$unit]:-}"
  [ -n "$pid" ] || die "systemctl stop $unit: it is not running"
  t0=$(now_ms)
  kill -TERM "$pid"
  wait "$pid" || code=$?
  unset "unit_pid[$unit]"
  local took=$(($(now_ms) - t0))
  case "$unit" in
    redis-server) ;;
    *)
      if [ "$code" -eq 0 ] && [ "$took" -le 10000 ]; then
        pass "SIGTERM stops $unit: exit 0 after ${took} ms"
      else
        fail "SIGTERM stops $unit: exit $code after ${took} ms (want 0 within 10 s)"
      fi ;;
  esac
}

# The lines a unit logged since its last start.
unit_log() { tail -n +"${log_from[$1]}" "$tmp/logs/$1.log"; }

json() { node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>{const v=JSON.parse(s)[process.argv[1]];console.log(v===undefined?"":v)})' "$1"; }

make_pack() { # out-file, text of its function: a small data pack, different each time
  node --input-type=module -e '
    import fs from "node:fs"
    import { randomBytes } from "node:crypto"
    import yazl from "yazl"
    const [out, text] = process.argv.slice(1)
    const zip = new yazl.ZipFile()
    zip.addBuffer(Buffer.from(JSON.stringify({ pack: { pack_format: 48, description: "Rehearsal" } })), "pack.mcmeta")
    zip.addBuffer(Buffer.from(`say ${text}\n`), "data/rehearsal/function/load.mcfunction")
    zip.addBuffer(randomBytes(4096), "data/rehearsal/noise.bin")
    zip.outputStream.pipe(fs.createWriteStream(out)).on("close", () => {})
    zip.end()' "$1" "$2"
}

# ---------------------------------------------------------------- an existing one-machine site
current="the old one-machine site"
say "== an existing one-machine site (SQLite and local files) with a published pack"
mkdir -p "$tmp/old-site" "$tmp/work"
start_unit packs
old_password="$(sed -n 's/^  Site password: \(.*\)$/\1/p' "$tmp/logs/packs.log")"
[ -n "$old_password" ] || die "the old site printed no generated site password"
placeholders["<the old site password>"]="$old_password"
old_cli=("${clean_env[@]}" "PACKS_DATA_DIR=$tmp/old-site" "$node_bin" bin/packs.js)
printf '%s\n' 'rehearsal-password-1' | "${old_cli[@]}" user create alice --password-stdin >/dev/null
token="$("${old_cli[@]}" token create alice --name rehearsal | tail -n1)"
GATE="X-Master-Password: $old_password"
AUTH="Authorization: Bearer alice $token"
make_pack "$tmp/work/pack-1.0.zip" 'version 1.0'
old="http://127.0.0.1:$OLD_PORT"
draft="$(node -p 'crypto.randomUUID()')"
curl -fsS -o /dev/null -H "$GATE" -H "$AUTH" -F kind=version -F draft_uuid="$draft" -F file=@"$tmp/work/pack-1.0.zip" "$old/api/uploads/"
curl -fsS -o /dev/null -H "$GATE" -H "$AUTH" -H 'Content-Type: application/json' \
  -d "{\"draft\":\"$draft\",\"data\":{\"title\":\"Rehearsal Pack\",\"summary\":\"Moved over\",\"version_name\":\"1.0.0\"}}" "$old/api/draft/"
published="$(curl -fsS -H "$GATE" -H "$AUTH" -H 'Content-Type: application/json' -d "{\"draft\":\"$draft\"}" "$old/api/draft/publish/")"
ns="$(json namespace <<<"$published")"
pack_id="$(json pack_id <<<"$published")"
[ -n "$ns" ] && [ -n "$pack_id" ] || die "publishing on the old site answered: $published"
say "    published $ns:$pack_id 1.0.0 on the old site"

# ---------------------------------------------------------------- 1. PostgreSQL
current="a throwaway PostgreSQL cluster"
mkdir -p "$tmp/pg"
[ "${#as_pg[@]}" -gt 0 ] && chown postgres: "$tmp/pg"
# As Debian's cluster: local socket trusted for the superuser, password (scram-sha-256) logins over TCP.
"${as_pg[@]}" "$bindir/initdb" -D "$tmp/pg/data" -U "$superuser" --auth-local=trust --auth-host=scram-sha-256 \
  --encoding=UTF8 --locale=C.UTF-8 >"$tmp/logs/initdb.log" 2>&1 || { cat "$tmp/logs/initdb.log"; die "initdb failed"; }
"${as_pg[@]}" "$bindir/pg_ctl" -D "$tmp/pg/data" -l "$tmp/pg/server.log" -w -t 60 \
  -o "-p $PG_PORT -h 127.0.0.1 -k $tmp/pg -c fsync=off" start >/dev/null || { cat "$tmp/pg/server.log"; die "PostgreSQL did not start"; }
pg_started=1
run_block postgresql

# ---------------------------------------------------------------- 2. the object store
current="s3rver"
mkdir -p "$tmp/s3"
# s3rver stands in for the provider (it takes any key; the page's bucket script creates the bucket). It
# lacks ListMultipartUploads and AbortMultipartUpload, which a real store has and the consistency check uses
# to remove abandoned uploads (without them Packs runs on and warns once at start): added here over s3rver's
# own on-disk layout, as test/helpers/s3.ts does, so the page's start-up line is checked without the warning.
node --input-type=module -e '
  import fs from "node:fs"
  import path from "node:path"
  import S3rver from "s3rver"
  const [directory, port] = process.argv.slice(1)
  const server = new S3rver({ address: "127.0.0.1", port: Number(port), silent: true, directory })
  const xml = (text) => text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
  server.middleware.unshift(async (ctx, next) => {
    const [bucket, ...key] = ctx.path.split("/").filter(Boolean).map(decodeURIComponent)
    if (!bucket || !/^[a-z0-9.-]+$/.test(bucket)) return next()
    const uploads = path.join(directory, bucket, "._S3rver_uploads")
    const id = ctx.query.uploadId
    if (ctx.method === "DELETE" && key.length > 0 && typeof id === "string" && /^[0-9a-f]+$/.test(id)) {
      fs.rmSync(path.join(uploads, id), { recursive: true, force: true })
      ctx.status = 204
      return
    }
    if (ctx.method === "GET" && key.length === 0 && "uploads" in ctx.query) {
      const prefix = typeof ctx.query.prefix === "string" ? ctx.query.prefix : ""
      const found = (fs.existsSync(uploads) ? fs.readdirSync(uploads) : [])
        .filter((upload) => fs.existsSync(path.join(uploads, upload, "key")))
        .map((upload) => ({ upload, key: fs.readFileSync(path.join(uploads, upload, "key"), "utf8"), at: fs.statSync(path.join(uploads, upload, "key")).mtime.toISOString() }))
        .filter((u) => u.key.startsWith(prefix))
      ctx.status = 200
      ctx.type = "application/xml"
      ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<ListMultipartUploadsResult><Bucket>${xml(bucket)}</Bucket><Prefix>${xml(prefix)}</Prefix><IsTruncated>false</IsTruncated>`
        + found.map((u) => `<Upload><Key>${xml(u.key)}</Key><UploadId>${u.upload}</UploadId><Initiated>${u.at}</Initiated></Upload>`).join("")
        + "</ListMultipartUploadsResult>"
      return
    }
    return next()
  })
  await server.run()
  const stop = () => server.close().then(() => process.exit(0))
  process.on("SIGTERM", stop)
  process.on("SIGINT", stop)
' "$tmp/s3" "$S3_PORT" >"$tmp/logs/s3rver.log" 2>&1 &
other_pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$S3_PORT/" && break; sleep 0.05; done
# s3rver's fixed key, typed at the page's prompts.
run_block s3-key $'S3RVER\nS3RVER'

# ---------------------------------------------------------------- 3. Redis
mkdir -p "$tmp/etc/redis" "$tmp/redis"
# What Debian's redis.conf says before the page's lines are appended (its port and directory here).
printf 'port %s\ndir %s\ndaemonize no\nlogfile ""\n' "$REDIS_PORT" "$tmp/redis" >"$tmp/etc/redis/redis.conf"
start_unit redis-server
run_block redis
current="Redis asks for the password"
redis_ping() { # password or empty: the server's answer to PING, over a bare socket
  local answer
  exec 3<>"/dev/tcp/127.0.0.1/$REDIS_PORT"
  if [ -n "$1" ]; then printf 'AUTH %s\r\nPING\r\n' "$1" >&3; read -r answer <&3; fi
  [ -z "$1" ] && printf 'PING\r\n' >&3
  read -r answer <&3
  exec 3>&-
  printf '%s' "${answer%$'\r'}"
}
noauth="$(redis_ping '')"
authed="$(redis_ping "$REDIS_PASSWORD")"
if [[ "$noauth" == -NOAUTH* ]] && [ "$authed" = +PONG ]; then
  pass "Redis refuses a client without the password ($noauth) and answers one with it"
else
  fail "Redis without the password said '$noauth', with it '$authed'"
fi

# ---------------------------------------------------------------- 4. settings, the CLI, the bucket
mkdir -p "$tmp/etc/packs" "$tmp/var/lib/packs"
chmod 700 "$tmp/etc/packs"
run_block env-file
check_env_file "$tmp/etc/packs/env"
run_block cli

# ---------------------------------------------------------------- 5. two instances
current="the systemd unit"
if command -v systemd-analyze >/dev/null; then
  mkdir -p "$tmp/systemd"
  block systemd-unit >"$tmp/systemd/packs@.service"
  verify="$(cd "$tmp/systemd" && systemd-analyze verify ./packs@1.service 2>&1 || true)"
  if grep -qiE 'unknown|invalid|failed|error|bad' <<<"$verify"; then
    fail "systemd-analyze verify packs@.service: ${verify//$'\n'/; }"
  else
    pass "systemd-analyze verify accepts the unit${verify:+ (notes: ${verify//$'\n'/; })}"
  fi
else
  say "    (no systemd-analyze here: the unit's syntax is not verified, only its Environment/ExecStart are used)"
fi
run_block start
current="the start-up lines"
fresh_password=""
for unit in packs@1 packs@2; do
  # The logger writes in batches: the line may come a moment after the port answers.
  for _ in $(seq 1 60); do unit_log "$unit" | grep -q '"msg":"packs: running on' && break; sleep 0.05; done
  verdict="$(unit_log "$unit" | node -e '
    let s = ""
    process.stdin.on("data", (d) => s += d).on("end", () => {
      const lines = s.split("\n").filter((l) => l.startsWith("{")).map((l) => { try { return JSON.parse(l) } catch { return {} } })
      const line = lines.find((l) => l.level === 30 && String(l.msg).startsWith("packs: running on"))
      // The warnings about a shape that does not share (local files or no Redis beside PostgreSQL); others are notes.
      const warnings = lines.filter((l) => l.level >= 40 && /shared/.test(String(l.msg))).map((l) => l.msg)
      if (!line) return console.log("no start-up line")
      const wrong = [["database", "PostgreSQL "], ["storage", "S3 "], ["sharedState", "Redis "]]
        .filter(([field, start]) => !String(line[field]).startsWith(start)).map(([field]) => `${field}: ${line[field]}`)
      if (warnings.length) wrong.push(`warnings: ${warnings.join(" | ")}`)
      console.log(wrong.length ? wrong.join("; ") : `ok ${line.database}, ${line.storage}, ${line.sharedState}`)
    })')"
  if [[ "$verdict" == ok* ]]; then pass "$unit's start-up line names PostgreSQL, S3 and Redis, no warning (${verdict#ok })"; else fail "$unit's start-up line: $verdict"; fi
  [ -n "$fresh_password" ] || fresh_password="$(unit_log "$unit" | sed -n 's/^  Site password: \(.*\)$/\1/p')"
done
[ -n "$fresh_password" ] || die "neither instance printed the new site's generated password"
placeholders["<the site password from the journal>"]="$fresh_password"

# ---------------------------------------------------------------- 6. nginx
current="nginx with the page's site"
mkdir -p "$tmp/etc/nginx" "$tmp/nginx" "$tmp/www/.well-known/acme-challenge"
site="$(block nginx)"
# TLS is production's: the two servers listen on this run's ports, plain HTTP, IPv4 loopback.
site="$(sed -E -e '/^[[:space:]]*listen \[::\]:/d' -e '/^[[:space:]]*ssl_/d' \
  -e "s/^([[:space:]]*)listen 80;/\1listen 127.0.0.1:$HTTP_PORT;/" \
  -e "s/^([[:space:]]*)listen 443 ssl;/\1listen 127.0.0.1:$HTTPS_PORT;/" \
  -e 's/server_name packs\.example\.org;/server_name localhost;/' <<<"$site")"
site="$(localize "$site")"
grep -q "listen 127.0.0.1:$HTTP_PORT;" <<<"$site" && grep -q "listen 127.0.0.1:$HTTPS_PORT;" <<<"$site" \
  && ! grep -qw ssl <<<"$site" && grep -q 'proxy_pass http://packs;' <<<"$site" \
  || { printf '%s\n' "$site"; die "the page's nginx site no longer has the listen 80 / listen 443 ssl / ssl_ / proxy_pass lines the rehearsal swaps"; }
printf '%s\n' "$site" >"$tmp/etc/nginx/packs.conf"
{
  [ "$(id -u)" -eq 0 ] && echo 'user root;'
  cat <<EOF
worker_processes 1;
daemon off;
error_log $tmp/nginx/error.log;
pid $tmp/nginx/nginx.pid;
events { worker_connections 256; }
http {
  access_log $tmp/nginx/access.log;
  client_body_temp_path $tmp/nginx/body;
  proxy_temp_path $tmp/nginx/proxy;
  fastcgi_temp_path $tmp/nginx/fastcgi;
  uwsgi_temp_path $tmp/nginx/uwsgi;
  scgi_temp_path $tmp/nginx/scgi;
  include $tmp/etc/nginx/packs.conf;
}
EOF
} >"$tmp/nginx/nginx.conf"
nginx_cmd=(nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -e "$tmp/nginx/error.log")
if "${nginx_cmd[@]}" -t >"$tmp/out/nginx-t" 2>&1; then
  pass "nginx -t accepts the page's site ($(nginx -v 2>&1 | sed 's/.*: //'))"
else
  cat "$tmp/out/nginx-t"
  die "nginx -t refuses the page's site"
fi
"${nginx_cmd[@]}" >"$tmp/logs/nginx.log" 2>&1 &
other_pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null "$SITE/healthz" && break; sleep 0.05; done
echo rehearsal >"$tmp/www/.well-known/acme-challenge/rehearsal"
acme="$(curl -s "http://127.0.0.1:$HTTP_PORT/.well-known/acme-challenge/rehearsal")"
[ "$acme" = rehearsal ] && pass "port 80 serves certbot's webroot (renewals)" || fail "port 80 did not serve the webroot file: $acme"

# ---------------------------------------------------------------- 7. check it
run_block check
current="the check's answers"
if grep -q '^301 https://127.0.0.1/$' "$tmp/out/check" && [ "$(grep -c '{"status":"ok"}' "$tmp/out/check")" -ge 2 ]; then
  pass "the page's checks: both instances healthy, port 80 redirects to https, the gate password opens the site through nginx"
else
  fail "the page's checks did not answer as the page says"
fi

# ---------------------------------------------------------------- 8. moving the old site over
run_block export
run_block import
run_block check-moved
current="the moved pack downloads through nginx"
latest="$(curl -fsS -H "$GATE" "$SITE/api/packs/$ns/$pack_id/latest")"
download_url="$(json download_url <<<"$latest")"
curl -fsS -H "$GATE" -o "$tmp/work/downloaded.zip" "$download_url"
want="$(sha256sum <"$tmp/work/pack-1.0.zip" | cut -d' ' -f1)"
got="$(sha256sum <"$tmp/work/downloaded.zip" | cut -d' ' -f1)"
if [[ "$download_url" == "$SITE/"* ]] && [ "$got" = "$want" ] && [ "$(json sha256 <<<"$latest")" = "$want" ]; then
  pass "the moved pack downloads through nginx byte for byte (sha256 ${want:0:16}…, from $download_url)"
else
  fail "the moved pack through nginx: url $download_url, sha256 $got, uploaded $want, answer says $(json sha256 <<<"$latest")"
fi

current="a new version reaches both instances' update-check"
latest_on() { curl -s -H "$GATE" "http://127.0.0.1:$1/api/packs/$ns/$pack_id/latest" | grep -o '"version":"[^"]*"' | cut -d'"' -f4; }
# Both instances answer (and cache) 1.0.0 first: the new version must replace a cached answer.
before1="$(latest_on "$PORT1")"
before2="$(latest_on "$PORT2")"
make_pack "$tmp/work/pack-1.1.zip" 'version 1.1'
curl -fsS -o /dev/null -H "$GATE" -H "$AUTH" -F version_name=1.1.0 -F changelog='Published through nginx' \
  -F file=@"$tmp/work/pack-1.1.zip" "$SITE/api/packs/$ns/$pack_id/versions/"
t0=$(now_ms)
seen1=""
seen2=""
while [ -z "$seen1" ] || [ -z "$seen2" ]; do
  [ -z "$seen1" ] && [ "$(latest_on "$PORT1")" = 1.1.0 ] && seen1=$(($(now_ms) - t0))
  [ -z "$seen2" ] && [ "$(latest_on "$PORT2")" = 1.1.0 ] && seen2=$(($(now_ms) - t0))
  [ $(($(now_ms) - t0)) -gt 3000 ] && break
done
if [ "$before1 $before2" = "1.0.0 1.0.0" ] && [ -n "$seen1" ] && [ -n "$seen2" ] && [ "$seen1" -le 1000 ] && [ "$seen2" -le 1000 ]; then
  pass "1.1.0, published through nginx, is the update-check's answer on packs@1 after ${seen1} ms and on packs@2 after ${seen2} ms (asked directly)"
else
  fail "update-check: before ${before1:-?}/${before2:-?}, 1.1.0 seen on packs@1 after ${seen1:-never} ms, packs@2 after ${seen2:-never} ms (want both within 1000 ms)"
fi

current="the failure limit through nginx"
codes=""
for i in $(seq 1 13); do
  codes+="$(curl -s -o /dev/null -w '%{http_code}' -H "X-Master-Password: wrong-password-$i" -H "X-Forwarded-For: 203.0.113.$i" \
    "$SITE/api/packs/$ns/$pack_id/latest?attempt=$i") "
done
codes="${codes% }"
if [ "$codes" = "401 401 401 401 401 401 401 401 401 401 429 429 429" ]; then
  pass "13 wrong gate passwords through nginx, each with a fresh X-Forwarded-For: $codes"
else
  fail "13 wrong gate passwords through nginx, each with a fresh X-Forwarded-For: $codes (want 401 x 10, then 429)"
fi
for port in "$PORT1" "$PORT2"; do
  headers="$(curl -s -o /dev/null -D - -H "$GATE" "http://127.0.0.1:$port/api/packs/$ns/$pack_id/latest")"
  status="$(head -n1 <<<"$headers" | cut -d' ' -f2)"
  retry="$(grep -i '^retry-after:' <<<"$headers" | tr -dc 0-9 || true)"
  if [ "$status" = 429 ] && [ "${retry:-0}" -gt 0 ]; then
    pass "then 127.0.0.1:$port refuses that client even its right password: 429, Retry-After $retry s"
  else
    fail "then 127.0.0.1:$port answered the blocked client's right password with $status (Retry-After ${retry:-none})"
  fi
done
sleep 0.6 # the access log is written in batches (250 ms)
attempts1="$(unit_log packs@1 | grep -c '"url":"[^"]*attempt=' || true)"
attempts2="$(unit_log packs@2 | grep -c '"url":"[^"]*attempt=' || true)"
addresses="$( (unit_log packs@1; unit_log packs@2) | grep '"url":"[^"]*attempt=' | grep -o '"ip":"[^"]*"' | sort -u | tr '\n' ' ' || true)"
if [ "$attempts1" -ge 1 ] && [ "$attempts2" -ge 1 ] && [ $((attempts1 + attempts2)) -eq 13 ] && [ "$addresses" = '"ip":"127.0.0.1" ' ]; then
  pass "nginx spread the 13 attempts over both instances ($attempts1 + $attempts2), each seen from 127.0.0.1, not the made-up address"
else
  fail "the 13 attempts reached packs@1 $attempts1 and packs@2 $attempts2 times, from ${addresses:-nothing}"
fi

current="keep-alive to the instances"
# Idle connections nginx keeps open to the instances after the requests above (ESTABLISHED, read from
# /proc: no ss needed). Without proxy_http_version 1.1 and an empty Connection header there are none.
idle_upstream() {
  local port hex total=0
  for port in "$PORT1" "$PORT2"; do
    hex="$(printf '%04X' "$port")"
    total=$((total + $(awk -v p=":$hex" '$3 ~ p"$" && $4 == "01"' /proc/net/tcp | wc -l)))
  done
  echo "$total"
}
idle="$(idle_upstream)"
[ "$idle" -ge 1 ] && pass "nginx keeps $idle idle HTTP/1.1 connections open to the instances (upstream keepalive)" \
  || fail "nginx keeps no connection open to the instances between requests: upstream keepalive does not work"

# ---------------------------------------------------------------- 10. metrics and readiness
run_block metrics-token
run_block metrics-check
current="the metrics' and readiness' answers"
ready="$(grep -c '^{"status":"ready","checks":{"database":{"ok":true,[^}]*},"storage":{"ok":true,[^}]*},"redis":{"ok":true,[^}]*}}}$' "$tmp/out/metrics-check" || true)"
up="$(grep -cE '^packs_backend_up\{backend="(database|redis|storage)"\} 1$' "$tmp/out/metrics-check" || true)"
if [ "$ready" = 2 ] && [ "$up" = 3 ] && grep -q '^packs_build_info{version="' "$tmp/out/metrics-check" && [ "$(tail -n1 "$tmp/out/metrics-check")" = 401 ]; then
  pass "both instances are ready (database, redis, storage); /metrics answers the scrape token with every backend up, and refuses a scrape through nginx without it (401)"
else
  fail "the metrics step answered: $(tr '\n' ' ' <"$tmp/out/metrics-check" | cut -c1-400)"
fi
codes=""
for port in "$PORT1" "$PORT2"; do
  codes+="$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer ${METRICS_TOKEN}0" "http://127.0.0.1:$port/metrics") "
  codes+="$(curl -s -o /dev/null -w '%{http_code}' -H "Authorization: Bearer $METRICS_TOKEN" "http://127.0.0.1:$port/metrics") "
done
[ "$codes" = "401 200 401 200 " ] && pass "each instance refuses a wrong scrape token and answers the right one: $codes" \
  || fail "scrapes with a wrong and the right token answered: $codes (want 401 200 on each instance)"

current="stopping"
systemctl stop packs@1
through="$(curl -s -o /dev/null -w '%{http_code}' -H "$AUTH" "$SITE/api/packs/$ns/$pack_id/latest")"
[ "$through" = 200 ] && pass "with packs@1 stopped, nginx answers through packs@2 (200)" || fail "with packs@1 stopped, nginx answered $through"
systemctl stop packs@2

# ---------------------------------------------------------------- one machine behind nginx
current="one machine behind nginx: the page's blocks"
# The scaled site's nginx gives its ports to this one.
"${nginx_cmd[@]}" -s stop >/dev/null 2>&1 || true
for _ in $(seq 1 100); do curl -s -o /dev/null --max-time 1 "$SITE/healthz" || break; sleep 0.05; done
# What the page's production-only block makes: the store's directory, 0700 until Packs opens it to its group.
mkdir -p "$tmp/var/lib/packs-files"
chmod 700 "$tmp/var/lib/packs-files"
env_file_checked=""
run_block one-machine-env
run_block one-machine-start
one_password="$(unit_log packs@1 | sed -n 's/^  Site password: \(.*\)$/\1/p')"
[ -n "$one_password" ] || die "the one-machine site printed no generated site password"
ONE_GATE="X-Master-Password: $one_password"

current="one machine behind nginx: step 6's site with the internal location"
one_location="$(block one-machine-nginx)"
one_site="$(block nginx | grep -v 'server 127\.0\.0\.1:8002;' | ONE_LOCATION="$one_location" awk '
  /^  listen 443 ssl;$/ { tls = 1 }
  tls && $0 == "  location / {" { print ENVIRON["ONE_LOCATION"]; print ""; tls = 0 }
  { print }')"
one_site="$(sed -E -e '/^[[:space:]]*listen \[::\]:/d' -e '/^[[:space:]]*ssl_/d' \
  -e "s/^([[:space:]]*)listen 80;/\1listen 127.0.0.1:$HTTP_PORT;/" \
  -e "s/^([[:space:]]*)listen 443 ssl;/\1listen 127.0.0.1:$HTTPS_PORT;/" \
  -e 's/server_name packs\.example\.org;/server_name localhost;/' <<<"$one_site")"
one_site="$(localize "$one_site")"
grep -q 'location /_packs_files/ {' <<<"$one_site" && grep -q "alias $tmp/var/lib/packs-files/;" <<<"$one_site" && ! grep -q ":$PORT2;" <<<"$one_site" \
  || { printf '%s\n' "$one_site"; die "the page's one-machine nginx site lacks the internal location, or still names a second instance"; }
mkdir -p "$tmp/nginx-one"
printf '%s\n' "$one_site" >"$tmp/nginx-one/packs.conf"
{
  # As www-data in packs-files would: another user, in the group Packs gives the stored files to.
  [ "$(id -u)" -eq 0 ] && echo "user nobody $(stat -c %G "$tmp/var/lib/packs-files");"
  sed -e "s|$tmp/nginx/|$tmp/nginx-one/|g" -e "s|$tmp/etc/nginx/packs.conf|$tmp/nginx-one/packs.conf|" "$tmp/nginx/nginx.conf" | grep -v '^user '
} >"$tmp/nginx-one/nginx.conf"
one_nginx=(nginx -p "$tmp/nginx-one" -c "$tmp/nginx-one/nginx.conf" -e "$tmp/nginx-one/error.log")
if "${one_nginx[@]}" -t >"$tmp/out/nginx-one-t" 2>&1; then
  pass "nginx -t accepts step 6's site with the page's internal location"
else
  cat "$tmp/out/nginx-one-t"
  die "nginx -t refuses the one-machine site"
fi
"${one_nginx[@]}" >"$tmp/logs/nginx-one.log" 2>&1 &
other_pids+=($!)
for _ in $(seq 1 100); do curl -s -o /dev/null "$SITE/healthz" && break; sleep 0.05; done

current="one machine behind nginx: a pack published through it"
printf '%s\n' 'rehearsal-password-2' | packs user create carol --password-stdin >/dev/null
one_token="$(packs token create carol --name rehearsal | tail -n1)"
ONE_AUTH="Authorization: Bearer carol $one_token"
make_pack "$tmp/work/one-1.0.zip" 'one machine'
one_draft="$(node -p 'crypto.randomUUID()')"
one_upload="$(curl -fsS -H "$ONE_GATE" -H "$ONE_AUTH" -F kind=version -F draft_uuid="$one_draft" -F file=@"$tmp/work/one-1.0.zip" "$SITE/api/uploads/")"
curl -fsS -o /dev/null -H "$ONE_GATE" -H "$ONE_AUTH" -H 'Content-Type: application/json' \
  -d "{\"draft\":\"$one_draft\",\"data\":{\"title\":\"One Machine Pack\",\"summary\":\"Sent by nginx\",\"version_name\":\"1.0.0\"}}" "$SITE/api/draft/"
one_published="$(curl -fsS -H "$ONE_GATE" -H "$ONE_AUTH" -H 'Content-Type: application/json' -d "{\"draft\":\"$one_draft\"}" "$SITE/api/draft/publish/")"
one_ns="$(json namespace <<<"$one_published")"
one_id="$(json pack_id <<<"$one_published")"
one_file="$(json url <<<"$one_upload" | sed -E 's|^.*(/api/files/[0-9a-f-]+/)$|\1|')"
[ -n "$one_ns" ] && [ -n "$one_id" ] && [[ "$one_file" == /api/files/* ]] || die "publishing through nginx answered: $one_published / $one_upload"

current="one machine behind nginx: downloads"
want="$(sha256sum <"$tmp/work/one-1.0.zip" | cut -d' ' -f1)"
curl -fsS -H "$ONE_GATE" -D "$tmp/work/one-headers" -o "$tmp/work/one-downloaded.zip" "$SITE${one_file}?download=1"
got="$(sha256sum <"$tmp/work/one-downloaded.zip" | cut -d' ' -f1)"
direct="$(curl -s -H "$ONE_GATE" -D - -o "$tmp/work/one-direct" "http://127.0.0.1:$PORT1${one_file}?download=1")"
accel="$(grep -i '^x-accel-redirect:' <<<"$direct" | tr -d '\r' | cut -d' ' -f2)"
if [ "$got" = "$want" ] && grep -qi '^server: nginx' "$tmp/work/one-headers" && ! grep -qi '^x-accel-redirect' "$tmp/work/one-headers" \
  && grep -qi '^content-disposition: attachment' "$tmp/work/one-headers" && [[ "$accel" == /_packs_files/* ]] && [ ! -s "$tmp/work/one-direct" ]; then
  pass "a download through nginx is the upload byte for byte (sha256 ${want:0:16}…); the instance itself answered with no body and X-Accel-Redirect: $accel"
else
  fail "the download through nginx: sha256 $got (uploaded $want), the instance's X-Accel-Redirect '${accel}', its body $(wc -c <"$tmp/work/one-direct") bytes"
fi
range_code="$(curl -s -H "$ONE_GATE" -r 100-1099 -o "$tmp/work/one-range" -w '%{http_code}' "$SITE${one_file}?download=1")"
if [ "$range_code" = 206 ] && [ "$(sha256sum <"$tmp/work/one-range" | cut -d' ' -f1)" = "$(tail -c +101 "$tmp/work/one-1.0.zip" | head -c 1000 | sha256sum | cut -d' ' -f1)" ]; then
  pass "a Range through nginx: 206 with bytes 100-1099 of the upload"
else
  fail "a Range through nginx answered $range_code with $(wc -c <"$tmp/work/one-range") bytes"
fi
link="$(curl -fsS -H "$ONE_GATE" "$SITE/api/modrinth/v2/project/$one_ns:$one_id/version" | node -e 'let s="";process.stdin.on("data",(d)=>s+=d).on("end",()=>console.log(JSON.parse(s)[0].files[0].url))')"
open_code="$(curl -s -o "$tmp/work/one-link.zip" -w '%{http_code}' "$link")"
# Their note on stderr (no REDIS_URL: the update-check's cache) is not about files.
packs pack hide "$one_ns:$one_id" --reason 'rehearsal' >/dev/null 2>&1
hidden_code="$(curl -s -o /dev/null -w '%{http_code}' "$link")"
packs pack unhide "$one_ns:$one_id" >/dev/null 2>&1
if [ "$open_code" = 200 ] && [ "$(sha256sum <"$tmp/work/one-link.zip" | cut -d' ' -f1)" = "$want" ] && [ "$hidden_code" = 404 ]; then
  pass "the pack's signed link opens through nginx without the gate (200, the upload's bytes), and is refused while the pack is hidden (404)"
else
  fail "the signed link through nginx answered $open_code, and $hidden_code while the pack was hidden (want 200, then 404)"
fi
counted=""
for _ in $(seq 1 100); do
  counted="$(curl -fsS -H "$ONE_GATE" "$SITE/api/packs/$one_ns/$one_id/" | json downloads)"
  [ "${counted:-0}" -ge 1 ] && break
  sleep 0.1
done
[ "${counted:-0}" -ge 1 ] && pass "the downloads through nginx are counted: the pack shows $counted" \
  || fail "the pack's download count did not move within 10 s of the downloads through nginx (${counted:-none})"
stored="$tmp/var/lib/packs-files/${accel#/_packs_files/}"
if [ "$(stat -c %a "$stored")" = 640 ] && [ "$(stat -c %a "$(dirname "$stored")")" = 710 ] && [ "$(stat -c %a "$tmp/var/lib/packs")" = 700 ]; then
  pass "the stored file is 0640 and its directory 0710 for the store's group ($(stat -c %G "$stored")); the data directory stays 0700"
else
  fail "modes: the stored file $(stat -c %a "$stored"), its directory $(stat -c %a "$(dirname "$stored")"), the data directory $(stat -c %a "$tmp/var/lib/packs")"
fi
systemctl stop packs@1

current="secrets in logs"
leaked=""
for secret in "$DB_PASSWORD" "$REDIS_PASSWORD" "$token" "$METRICS_TOKEN"; do
  if grep -rqF -- "$secret" "$tmp/logs" "$tmp/nginx"/*.log; then leaked+=" ${secret:0:6}…"; fi
done
[ -z "$leaked" ] && pass "no log holds the database or Redis password, the API token or the scrape token" || fail "secrets in the logs:$leaked"
current="done"
