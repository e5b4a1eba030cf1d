#!/bin/sh
# The client command the conformance suite runs once per scenario: `mcp-host conformance <url>`.
# The suite starts all its scenarios at once; on a 2-core machine two dozen Node processes starting
# together delay timers by hundreds of milliseconds, which the sse-retry scenario measures against
# a 200 ms tolerance. So the other scenarios' clients run at a lower CPU priority; what each one
# does is unchanged. MCP_HOST_NODE names the node binary (default: node on the PATH).
cli="$(dirname "$0")/../../dist/cli.js"
node="${MCP_HOST_NODE:-node}"
case "$MCP_CONFORMANCE_SCENARIO" in
  sse-retry) exec "$node" "$cli" conformance "$@" ;;
  *) exec nice -n 19 "$node" "$cli" conformance "$@" ;;
esac
