#!/usr/bin/env bash
# Fresh-machine smoke test: what an operator does first, end to end.
#
#   `npm start` (build + serve on the embedded PostgreSQL and MQTT broker) in an empty data
#   directory -> create an organization and mint a key with the CLI -> the key file sealing
#   stored secrets is there -> GET /api/v1/orgs/me with the key -> SIGTERM -> the service
#   exits 0 within 15 s and leaves no PostgreSQL behind.
#
# Uses a temporary data directory and free ports, so it can run beside anything else.
set -euo pipefail

cd "$(dirname "$0")/.."

say() { printf 'smoke: %s\n' "$*"; }
fail() {
  printf 'smoke: FAILED: %s\n' "$*" >&2
  if [[ -n "${LOG:-}" && -f "$LOG" ]]; then
    printf -- '--- last lines of the service log (%s) ---\n' "$LOG" >&2
    tail -n 40 "$LOG" >&2 || true
  fi
  exit 1
}

WORK="$(mktemp -d "${TMPDIR:-/tmp}/tagtrail-smoke-XXXXXX")"
# As root the embedded PostgreSQL runs as the system user `postgres`, which must be able
# to reach the data directory: mktemp's 0700 would lock it out.
chmod 755 "$WORK"
DATA="$WORK/data"
LOG="$WORK/service.log"
SERVER_PID=""

# Every process below `$1` (npm -> node -> postgres), so a failed run leaves none behind.
descendants() {
  local child
  for child in $(pgrep -P "$1" || true); do
    echo "$child"
    descendants "$child"
  done
}

cleanup() {
  local rc=$?
  if [[ -n "$SERVER_PID" ]]; then
    local pids pid
    pids="$SERVER_PID $(descendants "$SERVER_PID" | tr '\n' ' ')"
    for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
    for _ in $(seq 1 50); do
      local alive=0
      for pid in $pids; do kill -0 "$pid" 2>/dev/null && alive=1; done
      ((alive)) || break
      sleep 0.2
    done
    for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
  fi
  # A PostgreSQL that outlived a failed run: stop the one in our own data directory only.
  if [[ -f "$DATA/postgres/postmaster.pid" ]]; then
    local pg_pid
    pg_pid="$(head -n 1 "$DATA/postgres/postmaster.pid" 2>/dev/null || true)"
    [[ -n "$pg_pid" ]] && kill -INT "$pg_pid" 2>/dev/null || true
    sleep 1
  fi
  if [[ $rc -eq 0 ]]; then rm -rf "$WORK"; else printf 'smoke: left %s for inspection\n' "$WORK" >&2; fi
}
trap cleanup EXIT

free_port() {
  node -e "const s=require('node:net').createServer();s.listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"
}

HTTP_PORT="$(free_port)"
BASE="http://127.0.0.1:$HTTP_PORT"

export TAGTRAIL_DATA_DIR="$DATA"
export PORT="$HTTP_PORT"
# TAGTRAIL_MQTT_PORT unset, as after `npm install && npm start`: the broker takes 1883, or a
# free port when 1883 is taken (the machine's Mosquitto), and prints where it listens.
export HOST=127.0.0.1
unset DATABASE_URL MQTT_URL REDIS_URL TAGTRAIL_MQTT_PORT

say "npm start (data directory $DATA, HTTP port $HTTP_PORT, MQTT port: the default)"
npm start >"$LOG" 2>&1 </dev/null &
SERVER_PID=$!

# The build runs first (prestart), then initdb on the first start: allow two minutes.
deadline=$((SECONDS + 120))
until curl -s -o /dev/null "$BASE/api/v1/orgs/me"; do
  kill -0 "$SERVER_PID" 2>/dev/null || fail "npm start exited before the service listened"
  ((SECONDS < deadline)) || fail "the service did not listen on $BASE within 120 s"
  sleep 0.5
done
say "listening on $BASE"
MQTT_PORT="$(sed -n 's#^MQTT broker (embedded) listening on mqtt://127\.0\.0\.1:\([0-9][0-9]*\)$#\1#p' "$LOG" | head -n 1)"
[[ -n "$MQTT_PORT" ]] || fail "no 'MQTT broker (embedded) listening on mqtt://127.0.0.1:<port>' start-up line"
if grep -q '^MQTT port 1883 is in use' "$LOG"; then say "port 1883 was taken: the broker took port $MQTT_PORT"; fi

json_field() { node -e "let s='';process.stdin.on('data',c=>s+=c).on('end',()=>{const v=JSON.parse(s)[process.argv[1]];if(v===undefined)process.exit(1);console.log(v)})" "$1"; }

ORG_JSON="$(node dist/src/cli/main.js org create --name Smoke --json)" || fail "org create failed"
ORG_ID="$(json_field id <<<"$ORG_JSON")" || fail "org create printed no id: $ORG_JSON"
KEY_JSON="$(node dist/src/cli/main.js key mint --org "$ORG_ID" --scopes assets:read --json)" || fail "key mint failed"
KEY_ID="$(json_field id <<<"$KEY_JSON")" || fail "key mint printed no id: $KEY_JSON"
TOKEN="$(json_field token <<<"$KEY_JSON")" || fail "key mint printed no token"
say "organization $ORG_ID, key $KEY_ID"

# The embedded setup seals the stored secrets under a key file of its own (docs/operations.md).
[[ "$(stat -c %a "$DATA/secret-keys" 2>/dev/null)" == 600 ]] ||
  fail "no key file $DATA/secret-keys of mode 0600: stored secrets would be unsealed"
say "stored secrets sealed under $DATA/secret-keys (mode 0600)"

BODY="$WORK/orgs-me.json"
STATUS="$(curl -s -o "$BODY" -w '%{http_code}' -H "Authorization: Bearer $TOKEN" "$BASE/api/v1/orgs/me")"
[[ "$STATUS" == 200 ]] || fail "GET /api/v1/orgs/me answered $STATUS: $(cat "$BODY")"
node -e "
const body = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'));
const [orgId, keyId] = process.argv.slice(2);
const d = body.data ?? {};
if (d.api_key_id !== keyId || String(d.id) !== orgId || d.name !== 'Smoke' || JSON.stringify(d.scopes) !== '[\"assets:read\"]') {
  console.error('unexpected body: ' + JSON.stringify(body));
  process.exit(1);
}" "$BODY" "$ORG_ID" "$KEY_ID" || fail "GET /api/v1/orgs/me returned the wrong organization or key"
say "GET /api/v1/orgs/me: 200, api_key_id $KEY_ID"

# The broker answers, and refuses a client without credentials (CONNACK 5, not authorized).
node --input-type=module -e "
import { connectMqtt } from './dist/src/ingest/mqtt-connection.js';
try {
  const c = await connectMqtt('mqtt://127.0.0.1:$MQTT_PORT', 'tagtrail-smoke', { initialTimeoutMs: 5000, reconnectPeriod: 0 });
  await c.endAsync();
  console.error('an anonymous client was let in');
  process.exit(1);
} catch (e) {
  if (!/not authorized/i.test(e.message)) { console.error(e.message); process.exit(1); }
}
" || fail "the embedded MQTT broker on port $MQTT_PORT does not answer, or lets anonymous clients in"
say "embedded MQTT broker on port $MQTT_PORT answers and refuses anonymous clients"

PG_PID="$(head -n 1 "$DATA/postgres/postmaster.pid" 2>/dev/null || true)"
[[ -n "$PG_PID" ]] || fail "no embedded PostgreSQL pid in $DATA/postgres/postmaster.pid"

say "SIGTERM to npm start (pid $SERVER_PID)"
kill -TERM "$SERVER_PID"
deadline=$((SECONDS + 15))
while kill -0 "$SERVER_PID" 2>/dev/null; do
  ((SECONDS < deadline)) || fail "the service was still running 15 s after SIGTERM"
  sleep 0.2
done
set +e
wait "$SERVER_PID"
EXIT_CODE=$?
set -e
SERVER_PID=""
[[ $EXIT_CODE -eq 0 ]] || fail "the service exited $EXIT_CODE after SIGTERM, not 0"
if kill -0 "$PG_PID" 2>/dev/null; then fail "the embedded PostgreSQL (pid $PG_PID) is still running"; fi
if pgrep -f -- "-D $DATA/postgres" >/dev/null; then fail "a PostgreSQL on $DATA/postgres is still running"; fi
say "exited 0 after SIGTERM; embedded PostgreSQL stopped"
say "passed"
