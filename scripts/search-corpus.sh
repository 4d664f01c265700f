#!/usr/bin/env bash
# Regenerates benches/search/corpus.json, the real tool definitions the tool search benchmark
# (benches/search.rs) ranks: installs each MCP server below at its pinned version into
# target/search-corpus/ (SEARCH_CORPUS_DIR), starts it over stdio with dummy credentials and
# records what its `tools/list` answers. Not run by CI; needs the npm registry and PyPI, and the
# Python MCP SDK of the test peers (scripts/peers.sh). See BENCHMARKS.md, "Tool search".
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${SEARCH_CORPUS_DIR:-target/search-corpus}"
client_python="${SEARCH_CORPUS_PYTHON:-tests/peers/.venv/bin/python}"
out=benches/search/corpus.json

# key  registry  package  version  command (relative to the install's bin folder)  args...
servers='
everything          npm   @modelcontextprotocol/server-everything          2026.8.31  mcp-server-everything stdio
filesystem          npm   @modelcontextprotocol/server-filesystem          2026.8.31  mcp-server-filesystem {root}
memory              npm   @modelcontextprotocol/server-memory              2026.8.31  mcp-server-memory
sequential-thinking npm   @modelcontextprotocol/server-sequential-thinking 2026.8.31  mcp-server-sequential-thinking
github              npm   @modelcontextprotocol/server-github              2025.4.8   mcp-server-github
gitlab              npm   @modelcontextprotocol/server-gitlab              2025.4.25  mcp-server-gitlab
slack               npm   @modelcontextprotocol/server-slack               2025.4.25  mcp-server-slack
puppeteer           npm   @modelcontextprotocol/server-puppeteer           2025.5.12  mcp-server-puppeteer
google-maps         npm   @modelcontextprotocol/server-google-maps         0.6.2      mcp-server-google-maps
playwright          npm   @playwright/mcp                                  0.0.83     playwright-mcp
chrome-devtools     npm   chrome-devtools-mcp                              1.11.0     chrome-devtools-mcp
notion              npm   @notionhq/notion-mcp-server                      2.5.2      notion-mcp-server
kubernetes          npm   mcp-server-kubernetes                            4.1.7      mcp-server-kubernetes
desktop-commander   npm   @wonderwhy-er/desktop-commander                  0.2.52     desktop-commander
mongodb             npm   mongodb-mcp-server                               3.0.4      mongodb-mcp-server
circleci            npm   @circleci/mcp-server-circleci                    0.20.0     mcp-server-circleci
firecrawl           npm   firecrawl-mcp                                    3.26.0     firecrawl-mcp
git                 pypi  mcp-server-git                                   2026.10.19 mcp-server-git
time                pypi  mcp-server-time                                  2026.10.19 mcp-server-time --local-timezone UTC
fetch               pypi  mcp-server-fetch                                 2026.10.24 mcp-server-fetch
'

mkdir -p "$dir/npm" "$dir/home" "$dir/root"
# Install scripts are skipped: they download browsers and build native modules, which listing
# tools does not need (and which cannot be fetched here).
npm_specs=$(awk '$2 == "npm" { print $3 "@" $4 }' <<<"$servers")
[ -f "$dir/npm/package.json" ] || echo '{"private": true}' >"$dir/npm/package.json"
# shellcheck disable=SC2086
npm install --prefix "$dir/npm" --ignore-scripts --no-audit --no-fund --save-exact $npm_specs
[ -x "$dir/py/bin/pip" ] || python3 -m venv "$dir/py"
# shellcheck disable=SC2046
"$dir/py/bin/pip" install --quiet $(awk '$2 == "pypi" { print $3 "==" $4 }' <<<"$servers")

SERVERS="$servers" DIR="$(realpath "$dir")" "$client_python" - "$out" <<'EOF'
"""Starts every server of $SERVERS over stdio and writes their tools/list answers as one corpus."""

import asyncio
import json
import os
import sys

from mcp import StdioServerParameters, stdio_client
from mcp.client.client import Client

DIR = os.environ["DIR"]
# Tokens the servers insist on at start-up; listing tools never uses them.
ENV = {
    "GITHUB_PERSONAL_ACCESS_TOKEN": "dummy",
    "GITLAB_PERSONAL_ACCESS_TOKEN": "dummy",
    "SLACK_BOT_TOKEN": "dummy",
    "SLACK_TEAM_ID": "T0",
    "GOOGLE_MAPS_API_KEY": "dummy",
    "NOTION_TOKEN": "dummy",
    "CIRCLECI_TOKEN": "dummy",
    "FIRECRAWL_API_KEY": "dummy",
    "MEMORY_FILE_PATH": f"{DIR}/home/memory.json",
    "MDB_MCP_TELEMETRY": "disabled",
    "DO_NOT_TRACK": "1",
    "HOME": f"{DIR}/home",
    "PATH": os.environ["PATH"],
}


async def list_tools(command, args):
    params = StdioServerParameters(command=command, args=args, env=ENV, cwd=f"{DIR}/root")
    tools, cursor = [], None
    async with Client(stdio_client(params), mode="legacy") as client:
        while True:
            page = await (client.list_tools(cursor=cursor) if cursor else client.list_tools())
            tools += [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in page.tools]
            cursor = page.next_cursor
            if not cursor:
                return tools


async def main():
    servers = []
    for line in os.environ["SERVERS"].strip().splitlines():
        key, registry, package, version, command, *args = line.split()
        bin_dir = f"{DIR}/npm/node_modules/.bin" if registry == "npm" else f"{DIR}/py/bin"
        args = [a.replace("{root}", f"{DIR}/root") for a in args]
        tools = await asyncio.wait_for(list_tools(f"{bin_dir}/{command}", args), 120)
        # What a run-time detail of this machine put into a definition would make the corpus drift.
        text = json.dumps(tools).replace(f"{DIR}/root", "/srv/files").replace(f"{DIR}/home", "/home/user")
        servers.append({"key": key, "registry": registry, "package": package, "version": version,
                        "tools": json.loads(text)})
        print(f"{key}: {len(tools)} tools", file=sys.stderr)
    corpus = {
        "about": "tools/list answers of real MCP servers, regenerated by scripts/search-corpus.sh",
        "servers": servers,
    }
    with open(sys.argv[1], "w") as f:
        json.dump(corpus, f, indent=1, ensure_ascii=False)
        f.write("\n")
    print(f"{sum(len(s['tools']) for s in servers)} tools from {len(servers)} servers", file=sys.stderr)


asyncio.run(main())
EOF
