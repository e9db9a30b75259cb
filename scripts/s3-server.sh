#!/bin/bash
# Starts and stops the loopback S3 server (scripts/s3_server.py) used by
# tdbg's S3 tests and benchmarks.
#
#   s3-server.sh check                 exit 0 when the server can run, 3 when python3-swift is missing
#   s3-server.sh start DIR [PORT]      start (PORT 0 or unset: a free port); prints the endpoint
#   s3-server.sh endpoint DIR          print the endpoint of the server running in DIR
#   s3-server.sh stop DIR              stop it (SIGTERM, then SIGKILL)
#   s3-server.sh kill DIR              SIGKILL, as a crash would; start again with the same PORT
#
# Credentials: access key id 'test:tester', secret 'testing', region us-east-1,
# path-style URLs (http://127.0.0.1:PORT/<bucket>/<key>). DIR needs a filesystem
# with user xattrs (ext4, xfs, tmpfs, overlayfs). Debian packages: python3-swift curl.
# Environment: S3_PORT (default port), S3_PARENT_PID (the server exits when that
# process is gone), and the S3_* variables documented in s3_server.py.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
# Debian's interpreter: another python3 earlier on PATH would not see python3-swift.
PYTHON=${S3_PYTHON:-/usr/bin/python3}

usage() { echo "usage: $0 check | start DIR [PORT] | endpoint DIR | stop DIR | kill DIR" >&2; exit 2; }

check() {
  if ! [ -x "$PYTHON" ] || ! "$PYTHON" -c 'import swift.common.middleware.s3api, eventlet' 2>/dev/null; then
    echo "python3-swift is not installed (apt-get install -y --no-install-recommends python3-swift curl)" >&2
    return 3
  fi
  if ! command -v curl >/dev/null; then
    echo "curl is not installed (apt-get install -y --no-install-recommends curl)" >&2
    return 3
  fi
}

wait_gone() {  # pid, tenths of a second
  for _ in $(seq 1 "$2"); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
  return 1
}

[ $# -ge 1 ] || usage
CMD=$1
if [ "$CMD" = check ]; then check; exit $?; fi
[ $# -ge 2 ] || usage
DIR=$2

case "$CMD" in
start)
  check || exit $?
  PORT=${3:-${S3_PORT:-0}}
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  if [ -f "$DIR/server.pid" ] && kill -0 "$(cat "$DIR/server.pid")" 2>/dev/null; then
    echo "an S3 server is already running in $DIR (pid $(cat "$DIR/server.pid"))" >&2; exit 1
  fi
  # A killed server's endpoint file would be read before the new server removes it.
  rm -f "$DIR/endpoint" "$DIR/data/endpoint"
  # setsid: the server outlives this script and is stopped by pid, not by process group.
  setsid "$PYTHON" "$HERE/s3_server.py" "$DIR/data" "$PORT" >>"$DIR/server.log" 2>&1 </dev/null &
  PID=$!
  echo "$PID" >"$DIR/server.pid"
  for _ in $(seq 1 600); do   # up to 60 s: a restart may wait for its port
    ENDPOINT=$(cat "$DIR/data/endpoint" 2>/dev/null || true)
    if [ -n "$ENDPOINT" ]; then
      if curl -sf -o /dev/null --max-time 2 "$ENDPOINT/healthcheck"; then
        echo "$ENDPOINT" >"$DIR/endpoint"
        echo "$ENDPOINT"
        exit 0
      fi
    fi
    kill -0 "$PID" 2>/dev/null || break
    sleep 0.1
  done
  echo "the S3 server did not start; its log ($DIR/server.log) ends with:" >&2
  tail -n 30 "$DIR/server.log" >&2
  kill -9 "$PID" 2>/dev/null || true
  rm -f "$DIR/server.pid"
  exit 1 ;;
endpoint)
  cat "$DIR/endpoint" ;;
stop|kill)
  if [ -f "$DIR/server.pid" ]; then
    PID=$(cat "$DIR/server.pid")
    if [ "$CMD" = kill ]; then
      kill -9 "$PID" 2>/dev/null || true
      wait_gone "$PID" 50 || true
    else
      kill "$PID" 2>/dev/null || true
      wait_gone "$PID" 50 || { kill -9 "$PID" 2>/dev/null || true; wait_gone "$PID" 20 || true; }
    fi
    rm -f "$DIR/server.pid"
  fi ;;
*) usage ;;
esac
