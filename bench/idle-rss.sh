#!/bin/sh
# idle-rss.sh SWITCHBOARD BENCH: the resident size of `SWITCHBOARD serve
# --http 127.0.0.1:0` over one stdio server (the Go echo server inside
# BENCH, a `go build -o BENCH ./bench`), idle 3 s after one client's
# initialize and tools/list: VmRSS and RssAnon from /proc/PID/status, the
# echo tools listed, and /proc/loadavg. Issue 36's point 3 measures with it
# (docs/benchmarks.md). Copy binaries with cp before comparing them: the
# file-backed part of VmRSS depends on how the file sits in page cache
# (see there).
set -eu
SB=$1 BENCH=$2
D=$(mktemp -d)
trap 'rm -rf "$D"' EXIT
mkdir -p "$D/home" "$D/work"
printf '{"mcpServers":{"echo":{"type":"stdio","command":"%s","args":["__switchboard-testserver","echo"]}}}\n' "$BENCH" >"$D/work/servers.json"
cd "$D/work"
env -i HOME="$D/home" PATH=/usr/bin:/bin LANG=C.UTF-8 TMPDIR=/tmp \
	"$SB" serve --http 127.0.0.1:0 --no-watch --strict-mcp-config --mcp-config "$D/work/servers.json" \
	--settings '{"permissions":{"allow":["mcp__echo"]}}' 2>"$D/stderr" &
PID=$!
URL=
for _ in $(seq 1 100); do
	URL=$(grep -o 'gateway serving http://[^ ]*/mcp' "$D/stderr" | head -1 | cut -d' ' -f3) || true
	[ -n "$URL" ] && break
	sleep 0.1
done
[ -n "$URL" ] || { cat "$D/stderr" >&2; kill "$PID"; exit 1; }
post() { curl -s -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' "$@" "$URL"; }
SID=$(post -D - -o /dev/null -d '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"rss","version":"1"}}}' |
	tr -d '\r' | awk -F': ' 'tolower($1)=="mcp-session-id"{print $2}')
post -o /dev/null -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-06-18' -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
TOOLS=$(post -H "Mcp-Session-Id: $SID" -H 'MCP-Protocol-Version: 2025-06-18' -d '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' | grep -o '"name":"echo__' | wc -l)
sleep 3
echo "$(awk '/^VmRSS|^RssAnon/ {printf "%s %s kB  ", $1, $2}' "/proc/$PID/status")tools: $TOOLS  loadavg: $(cut -d' ' -f1-3 /proc/loadavg)"
kill -TERM "$PID"
wait "$PID" 2>/dev/null || true
