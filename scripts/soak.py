#!/usr/bin/env python3
"""The soak (issue 22): the release service under a mixed, steady load for SOAK_MINUTES, then a verdict.

Run by hand, outside CI, through scripts/soak.sh (which installs the peers, builds the release binary and raises
`ulimit -n`), or directly with the peers' venv:

    tests/peers/.venv/bin/python scripts/soak.py [--minutes 30] [--bridge target/release/mcp-bridge]

What it starts (each process in a session of its own, all of them stopped on exit, Ctrl-C and failure alike):
  - the bridge on a free port, a temporary data dir (SQLite) and a random JWT secret;
  - server-everything over Streamable HTTP (`streamableHttp`, PORT=a free port), registered as `evh`;
  - the WebSocket fixture (tests/peers/ws_server.py, SDK 1.x), registered as `ws`;
  - server-everything over stdio, registered as `ev` (the bridge's own child).
Tokens are HS256 JWTs with the claims `mcp-bridge token` puts in one (one minted by it is read for the claim set),
for 200 agents `agent-000` .. `agent-199`; `agent-000` is an admin and registers the servers (so owns them).

The load, all at once until the time is up:
  - calls: 16 workers, `POST /v1/tools/call` with `Accept: application/json` on kept-alive connections, taking the
    three echo tools in turn, each call as the next agent;
  - events: one `GET /v1/events` per agent, read all along; a stream that ends or fails is reopened with
    `Last-Event-ID` (counted as a drop);
  - sampling: every few seconds an agent calls server-everything's sampling tool (found in its tool list),
    alternately over Streamable HTTP (the request goes to the caller) and stdio (to the caller when its call is
    the only one in flight, else to the owner); whoever gets the `mcp/sample/req` answers it through
    `POST /v1/sampling/responses`, and the call must come back with that answer;
  - kills: once a minute `kill -9`, in turn, of the Streamable HTTP server (restarted on its port ~2 s later) and
    of the stdio child of the bridge (the bridge must bring it back itself); the window from the kill until a
    probe call to that server succeeds again (+1 s) is that kill's window;
  - churn: every ~10 s a fourth server (stdio server-everything, a fresh id) is registered, called and
    unregistered.
Every 10 s: the bridge's RSS, open fds and threads (/proc), `mcp_bridge_runtime_tasks` and the event-stream gauge
(/metrics), and the latencies of the calls of the last 10 s.

The report (stdout, target/soak/report.md and report.json) and its criteria are described in BENCHMARKS.md
("Soak"); the exit status is 1 when a criterion fails, 2 when the soak could not run.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from array import array
from collections import Counter, defaultdict
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
PEERS = ROOT / "tests" / "peers"
EVERYTHING = PEERS / "node_modules" / ".bin" / "mcp-server-everything"
WS_PYTHON = PEERS / ".venv-ws" / "bin" / "python"
WS_SERVER = PEERS / "ws_server.py"

# Bounds of the verdict (BENCHMARKS.md says why each).
FAST_FAIL_S = 1.0  # a kill-caused error must come back within this
RSS_GROWTH_MAX = 0.05  # RSS after warm-up may grow at most 5 %
FD_TOLERANCE = 10  # open fds: end - warm-up <= max(10, 5 %)
TASK_TOLERANCE = 25  # tokio tasks: end - warm-up <= max(25, 5 %)
P99_RATIO_MAX = 1.5  # p99 of the last window <= 1.5x the first's
RETRYABLE_CODES = {"mcp_server_unavailable", "mcp_transport_error", "timeout", "rate_limited"}


def log(*parts: object) -> None:
    print(time.strftime("%H:%M:%S"), *parts, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pct(values, q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, int(round(q * (len(ordered) - 1)))))
    return ordered[k]


def ms(v: float | None) -> str:
    return "n/a" if v is None else f"{v * 1000:.2f}"


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def b64url_decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


# ---------------------------------------------------------------- processes


class Procs:
    """Every process the soak starts, each the leader of a session of its own, and the run's marker (in the
    environment of each, and of the stdio servers through their config) to find strays by."""

    def __init__(self) -> None:
        self.marker = uuid.uuid4().hex
        self.procs: dict[str, subprocess.Popen] = {}

    def env(self, extra: dict | None = None) -> dict:
        env = dict(os.environ)
        env["SOAK_RUN"] = self.marker
        env.update(extra or {})
        return env

    def start(self, name: str, argv: list[str], env: dict | None = None, **kw) -> subprocess.Popen:
        proc = subprocess.Popen(argv, env=self.env(env), start_new_session=True, preexec_fn=die_with_parent, **kw)
        self.procs[name] = proc
        return proc

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        proc = self.procs.get(name)
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        with contextlib.suppress(Exception):
            proc.wait(timeout=5)

    def strays(self) -> list[int]:
        """Live processes carrying this run's marker (stdio servers the bridge left behind, grandchildren)."""
        found = []
        needle = f"SOAK_RUN={self.marker}".encode()
        for entry in os.listdir("/proc"):
            if not entry.isdigit() or int(entry) == os.getpid():
                continue
            try:
                with open(f"/proc/{entry}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        found.append(int(entry))
            except OSError:
                pass
        return found

    def cleanup(self) -> None:
        bridge = self.procs.get("bridge")
        if bridge is not None and bridge.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                bridge.send_signal(signal.SIGTERM)  # stops its servers (their process groups) itself
            try:
                bridge.wait(timeout=15)
            except subprocess.TimeoutExpired:
                log("the bridge did not stop within 15 s of SIGTERM: SIGKILL")
        for name in list(self.procs):
            self.kill(name)
        for pid in self.strays():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
                log(f"killed stray process {pid} of this run")


def die_with_parent() -> None:
    """In the child before exec: SIGKILL when the soak itself dies (even by SIGKILL), so nothing outlives it."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def children_of(pid: int) -> list[int]:
    kids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
            ppid = int(stat[stat.rindex(")") + 2 :].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        if ppid == pid:
            kids.append(int(entry))
    return kids


def environ_has(pid: int, item: str) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as f:
            return item.encode() in f.read().split(b"\0")
    except OSError:
        return False


def proc_stats(pid: int) -> dict:
    out = {"rss_kb": None, "threads": None, "fds": None}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    out["rss_kb"] = int(line.split()[1])
                elif line.startswith("Threads:"):
                    out["threads"] = int(line.split()[1])
        out["fds"] = len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        pass
    return out


async def wait_listening(port: int, within: float = 20) -> None:
    deadline = time.monotonic() + within
    while True:
        try:
            _, w = await asyncio.open_connection("127.0.0.1", port)
            w.close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise RuntimeError(f"nothing listens on port {port} after {within} s")
            await asyncio.sleep(0.05)


# ---------------------------------------------------------------- the soak


class Soak:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.procs = Procs()
        self.duration = args.minutes * 60.0
        self.warmup = min(300.0, self.duration / 6)
        self.segment = min(300.0, self.duration / 6)  # first and last latency windows
        self.t0 = 0.0
        self.stop = asyncio.Event()
        self.tasks: list[asyncio.Task] = []
        # calls
        self.call_t = array("d")  # start, seconds since t0, of each successful call
        self.call_lat = array("d")
        self.window_lat: list[float] = []
        self.calls = Counter()  # per server: ok
        self.failures: list[dict] = []  # every failed call, classified at the end
        # kills: {server, at, back, ...}
        self.kills: list[dict] = []
        # events
        self.events = Counter()
        self.events_per_agent = Counter()
        self.drops = Counter()
        self.drop_reasons = Counter()
        self.events_lost = 0
        self.stream_open_errors = Counter()
        # sampling
        self.sampling: dict[int, dict] = {}
        self.sampling_lat: list[float] = []
        self.sample_routes = Counter()
        self.sample_answer_errors = Counter()
        # churn
        self.churn = Counter()
        self.churn_failures: list[dict] = []
        # samples every 10 s
        self.samples: list[dict] = []

    # ---- setup

    def now(self) -> float:
        return time.monotonic() - self.t0

    def mint_claims(self, bridge: str, secret: str) -> dict:
        out = subprocess.run(
            [bridge, "token", "--sub", "agent-000", "--admin", "--ttl", "1h"],
            env=self.procs.env({"MCP_BRIDGE_JWT_SECRET": secret, "MCP_BRIDGE_DATA_DIR": self.data_dir}),
            capture_output=True, text=True, timeout=30, check=True,
        ).stdout.strip()
        header, payload, _ = out.split(".")
        return json.loads(b64url_decode(header)), json.loads(b64url_decode(payload))

    def token(self, header: dict, claims: dict, sub: str, admin: bool, ttl: int, secret: str) -> str:
        body = dict(claims)
        body["sub"] = sub
        now = int(time.time())
        for k in ("iat", "nbf"):
            if k in body:
                body[k] = now
        body["exp"] = now + ttl
        if not admin:
            body.pop("roles", None)
        signing = b64url(json.dumps(header, separators=(",", ":")).encode()) + "." + b64url(
            json.dumps(body, separators=(",", ":")).encode()
        )
        sig = hmac.new(secret.encode(), signing.encode(), hashlib.sha256).digest()
        return signing + "." + b64url(sig)

    async def start_http_everything(self) -> None:
        self.procs.start(
            "evh", [str(EVERYTHING), "streamableHttp"], env={"PORT": str(self.http_port)},
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        await wait_listening(self.http_port)

    async def start_ws(self) -> str:
        proc = self.procs.start("ws", [str(WS_PYTHON), str(WS_SERVER), "--port", "0"],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 30)
        port = line.decode().strip().removeprefix("PORT=")
        return f"ws://127.0.0.1:{int(port)}/ws"

    async def start(self) -> None:
        a = self.args
        for path in (EVERYTHING, WS_PYTHON, WS_SERVER, Path(a.bridge)):
            if not path.exists():
                raise RuntimeError(f"{path} is missing (scripts/peers.sh installs the peers; cargo build --release)")
        self.out = Path(a.out)
        self.out.mkdir(parents=True, exist_ok=True)
        self.data_dir = tempfile.mkdtemp(prefix="mcp-bridge-soak-")
        secret = secrets.token_hex(32)
        header, claims = self.mint_claims(a.bridge, secret)
        ttl = int(self.duration) + 3600
        self.admin = self.token(header, claims, "agent-000", True, ttl, secret)
        self.agents = [self.admin] + [
            self.token(header, claims, f"agent-{i:03d}", False, ttl, secret) for i in range(1, a.agents)
        ]
        port = free_port()
        self.base = f"http://127.0.0.1:{port}"
        self.bridge_log = open(self.out / "bridge.log", "wb")
        self.bridge = self.procs.start(
            "bridge", [a.bridge],
            env={
                "MCP_BRIDGE_BIND": f"127.0.0.1:{port}",
                "MCP_BRIDGE_DATA_DIR": self.data_dir,
                "MCP_BRIDGE_JWT_SECRET": secret,
                "MCP_BRIDGE_LOG": a.bridge_log_level,
                "MCP_BRIDGE_REPLAY_BUFFER": str(a.replay_buffer),
            },
            stdout=self.bridge_log, stderr=subprocess.STDOUT,
        )
        self.http_port = free_port()
        await self.start_http_everything()
        ws_url = await self.start_ws()
        await wait_listening(port)

        limits = httpx.Limits(max_connections=a.concurrency + 4, max_keepalive_connections=a.concurrency + 4)
        self.calls_client = httpx.AsyncClient(base_url=self.base, limits=limits, timeout=httpx.Timeout(30.0))
        self.aux = httpx.AsyncClient(base_url=self.base, timeout=httpx.Timeout(60.0),
                                     limits=httpx.Limits(max_connections=64, max_keepalive_connections=32))
        self.streams_client = httpx.AsyncClient(
            base_url=self.base, timeout=httpx.Timeout(10.0, read=a.stream_read_timeout),
            limits=httpx.Limits(max_connections=a.agents + 10, max_keepalive_connections=a.agents + 10),
        )
        for _ in range(200):
            with contextlib.suppress(httpx.HTTPError):
                if (await self.aux.get("/readyz")).status_code == 200:
                    break
            await asyncio.sleep(0.1)
        else:
            raise RuntimeError("the bridge is not ready after 20 s (see target/soak/bridge.log)")

        self.ev_cfg = {"server_id": "ev", "transport": "stdio", "cmd": [str(EVERYTHING), "stdio"],
                       "env": {"SOAK_SERVER": "ev", "SOAK_RUN": self.procs.marker}}
        for cfg in (
            self.ev_cfg,
            {"server_id": "evh", "transport": "http", "url": f"http://127.0.0.1:{self.http_port}/mcp"},
            {"server_id": "ws", "transport": "ws", "url": ws_url},
        ):
            r = await self.aux.post("/v1/servers", json={"config": cfg}, headers=self.auth(self.admin))
            if r.status_code != 201 or r.json()["server"]["status"] != "ready":
                raise RuntimeError(f"registering {cfg['server_id']}: {r.status_code} {r.text[:500]}")
        r = await self.aux.get("/v1/tools", params={"server_id": "evh"}, headers=self.auth(self.admin))
        names = [t["name"] for t in r.json()["tools"]]
        found = [n for n in names if "sampling" in n and "async" not in n]
        if not found:
            raise RuntimeError(f"no sampling tool in evh's list: {names}")
        self.sampling_tool = found[0].split("__", 1)[1]
        self.echo = {"ev": ("ev__echo", "message"), "evh": ("evh__echo", "message"), "ws": ("ws__echo", "text")}
        log(f"bridge pid {self.bridge.pid} at {self.base}; servers ev (stdio), evh (http :{self.http_port}), "
            f"ws ({ws_url}); sampling tool {self.sampling_tool}; {a.agents} agents; {a.minutes} min")

    def auth(self, token: str) -> dict:
        return {"Authorization": f"Bearer {token}"}

    # ---- load

    async def call_worker(self, w: int) -> None:
        # Each worker keeps to one server (16 workers: 6, 5, 5), so a server that hangs holds only its own
        # workers and the others stay loaded; the agent changes with every call.
        servers = list(self.echo)
        server = servers[w % len(servers)]
        k = w
        while not self.stop.is_set():
            agent = self.agents[k % len(self.agents)]
            k += self.args.concurrency
            name, field = self.echo[server]
            body = {"name": name, "arguments": {field: f"soak {k}"}}
            start = time.monotonic()
            status, code, retryable, detail = 0, None, None, ""
            try:
                r = await self.calls_client.post(
                    "/v1/tools/call", json=body,
                    headers={"Authorization": f"Bearer {agent}", "Accept": "application/json"},
                )
                status = r.status_code
                if status == 200:
                    j = r.json()
                    if not j.get("is_error"):
                        lat = time.monotonic() - start
                        self.call_t.append(start - self.t0)
                        self.call_lat.append(lat)
                        self.window_lat.append(lat)
                        self.calls[server] += 1
                        continue
                    code, detail = "is_error", json.dumps(j.get("content"))[:200]
                else:
                    with contextlib.suppress(ValueError):
                        j = r.json()
                        code, retryable, detail = j.get("code"), j.get("retryable"), j.get("error", "")[:200]
            except httpx.HTTPError as e:
                code, detail = f"client:{type(e).__name__}", str(e)[:200]
            end = time.monotonic()
            self.failures.append({"kind": "call", "server": server, "start": start - self.t0, "end": end - self.t0,
                                  "latency": end - start, "status": status, "code": code, "retryable": retryable,
                                  "error": detail})
            if code and code.startswith("client:"):
                await asyncio.sleep(0.05)  # a connection problem: do not spin

    async def event_reader(self, i: int) -> None:
        token = self.agents[i]
        last_id = None
        while not self.stop.is_set():
            headers = self.auth(token)
            if last_id is not None:
                headers["Last-Event-ID"] = last_id
            try:
                async with self.streams_client.stream("GET", "/v1/events", headers=headers) as r:
                    if r.status_code != 200:
                        self.stream_open_errors[r.status_code] += 1
                        await asyncio.sleep(1)
                        continue
                    event, data, eid = "message", [], None
                    async for line in r.aiter_lines():
                        if line == "":
                            if data:
                                if eid is not None:
                                    last_id = eid
                                self.on_event(i, event, "\n".join(data))
                            event, data, eid = "message", [], None
                        elif line.startswith(":"):
                            continue
                        else:
                            field, _, value = line.partition(":")
                            value = value[1:] if value.startswith(" ") else value
                            if field == "event":
                                event = value
                            elif field == "data":
                                data.append(value)
                            elif field == "id":
                                eid = value
                    reason = "ended"
            except httpx.HTTPError as e:
                reason = type(e).__name__
            if self.stop.is_set():
                return
            self.drops[f"agent-{i:03d}"] += 1
            self.drop_reasons[reason] += 1
            log(f"event stream of agent-{i:03d} dropped ({reason}); reopening after id {last_id}")
            await asyncio.sleep(0.2)

    def on_event(self, i: int, event: str, raw: str) -> None:
        self.events[event] += 1
        self.events_per_agent[i] += 1
        if event == "mcp/sample/req":
            with contextlib.suppress(ValueError):
                self.tasks.append(asyncio.create_task(self.answer_sampling(i, json.loads(raw))))
        elif event == "mcp/server/push" and '"bridge/events_lost"' in raw:
            self.events_lost += 1

    async def answer_sampling(self, i: int, req: dict) -> None:
        text = json.dumps(req.get("messages", []))
        m = re.search(r"soak-sample-(\d+)", text)
        n = int(m.group(1)) if m else -1
        entry = self.sampling.get(n)
        if entry is not None:
            self.sample_routes["caller" if entry["agent"] == i else ("owner" if i == 0 else "other")] += 1
        body = {"req_id": req.get("id"), "content": {"type": "text", "text": f"soak-answer-{n}"},
                "model": "soak", "stop_reason": "endTurn"}
        try:
            r = await self.aux.post("/v1/sampling/responses", json=body, headers=self.auth(self.agents[i]))
            if r.status_code != 202:
                self.sample_answer_errors[r.status_code] += 1
        except httpx.HTTPError as e:
            self.sample_answer_errors[type(e).__name__] += 1

    async def sampling_loop(self) -> None:
        n = 0
        while not self.stop.is_set():
            await asyncio.sleep(self.args.sampling_every)
            if self.stop.is_set():
                return
            n += 1
            self.tasks.append(asyncio.create_task(self.sampling_round(n)))

    async def sampling_round(self, n: int) -> None:
        agent = 1 + (n % (len(self.agents) - 1))
        server = "evh" if n % 2 else "ev"
        self.sampling[n] = {"agent": agent, "server": server}
        body = {"name": f"{server}__{self.sampling_tool}", "arguments": {"prompt": f"soak-sample-{n}", "maxTokens": 16}}
        start = time.monotonic()
        status, code, retryable, detail = 0, None, None, ""
        try:
            r = await self.aux.post("/v1/tools/call", json=body,
                                    headers={**self.auth(self.agents[agent]), "Accept": "application/json"})
            status = r.status_code
            j = r.json()
            if status == 200 and not j.get("is_error") and f"soak-answer-{n}" in json.dumps(j.get("content")):
                self.sampling_lat.append(time.monotonic() - start)
                self.sampling[n]["ok"] = True
                return
            code = j.get("code") or ("is_error" if status == 200 else None)
            retryable, detail = j.get("retryable"), (j.get("error") or json.dumps(j.get("content")))[:300]
        except (httpx.HTTPError, ValueError) as e:
            code, detail = f"client:{type(e).__name__}", str(e)[:200]
        end = time.monotonic()
        self.failures.append({"kind": "sampling", "server": server, "start": start - self.t0, "end": end - self.t0,
                              "latency": end - start, "status": status, "code": code, "retryable": retryable,
                              "error": detail})

    async def probe(self, server: str) -> bool:
        name, field = self.echo[server]
        try:
            r = await self.aux.post("/v1/tools/call", json={"name": name, "arguments": {field: "probe"}},
                                    headers={**self.auth(self.admin), "Accept": "application/json"}, timeout=5)
            return r.status_code == 200 and not r.json().get("is_error")
        except (httpx.HTTPError, ValueError):
            return False

    def stdio_child(self) -> int | None:
        for pid in children_of(self.bridge.pid):
            if environ_has(pid, "SOAK_SERVER=ev"):
                return pid
        return None

    async def kill_loop(self) -> None:
        n = 0
        while True:
            await asyncio.sleep(self.args.kill_every)
            if self.stop.is_set() or self.now() > self.duration - 45:
                return  # no kill whose recovery the end of the run would cut short
            server = "evh" if n % 2 == 0 else "ev"
            n += 1
            kill = {"server": server, "at": self.now()}
            if server == "evh":
                self.procs.kill("evh")
                kill["at"] = self.now()
                await asyncio.sleep(2)
                await self.start_http_everything()
                kill["restarted"] = self.now()
            else:
                pid = self.stdio_child()
                if pid is None:
                    log("no stdio child of the bridge carries SOAK_SERVER=ev: skipping this kill")
                    kill["error"] = "stdio child not found"
                    self.kills.append(kill)
                    continue
                kill["pid"] = pid
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(pid, signal.SIGKILL)  # the bridge made it a group leader
                kill["at"] = self.now()
            self.kills.append(kill)
            deadline = self.now() + 60
            while self.now() < deadline and not await self.probe(server):
                await asyncio.sleep(0.1)
            kill["back"] = self.now() if self.now() < deadline else None
            if kill["back"] is None:
                self.stop.set()  # a server that does not come back: the rest of the run would say nothing more
            if server == "ev":
                kill["new_pid"] = self.stdio_child()
            log(f"kill -9 {server}: back after {kill['back'] - kill['at']:.2f} s" if kill["back"]
                else f"kill -9 {server}: NOT back within 60 s")

    async def churn_loop(self) -> None:
        n = 0
        while not self.stop.is_set():
            await asyncio.sleep(self.args.register_every)
            if self.stop.is_set():
                return
            n += 1
            sid = f"tmp-{n}"
            cfg = {"server_id": sid, "transport": "stdio", "cmd": [str(EVERYTHING), "stdio"],
                   "env": {"SOAK_RUN": self.procs.marker}}
            start = self.now()
            step = "register"
            try:
                r = await self.aux.post("/v1/servers", json={"config": cfg}, headers=self.auth(self.admin))
                if r.status_code != 201 or r.json()["server"]["status"] != "ready":
                    raise RuntimeError(f"{r.status_code} {r.text[:300]}")
                self.churn["registered"] += 1
                step = "call"
                r = await self.aux.post("/v1/tools/call", json={"name": f"{sid}__echo", "arguments": {"message": "x"}},
                                        headers={**self.auth(self.admin), "Accept": "application/json"})
                if r.status_code != 200 or r.json().get("is_error"):
                    raise RuntimeError(f"{r.status_code} {r.text[:300]}")
                self.churn["called"] += 1
                step = "unregister"
                r = await self.aux.delete(f"/v1/servers/{sid}", headers=self.auth(self.admin))
                if r.status_code != 200:
                    raise RuntimeError(f"{r.status_code} {r.text[:300]}")
                self.churn["unregistered"] += 1
                self.churn_lat = getattr(self, "churn_lat", []) + [self.now() - start]
            except (httpx.HTTPError, RuntimeError, ValueError) as e:
                self.churn["failed"] += 1
                self.churn_failures.append({"server": sid, "step": step, "at": start, "error": str(e)[:300]})
                log(f"churn {sid} failed at {step}: {e}")
                with contextlib.suppress(httpx.HTTPError):
                    await self.aux.delete(f"/v1/servers/{sid}", headers=self.auth(self.admin))

    async def sample_once(self) -> dict:
        s = {"t": round(self.now(), 1), **proc_stats(self.bridge.pid)}
        try:
            text = (await self.aux.get("/metrics", timeout=10)).text
            for line in text.splitlines():
                for key, metric in (("tasks", "mcp_bridge_runtime_tasks"), ("streams", "mcp_bridge_event_streams"),
                                    ("pending", "mcp_bridge_pending_requests")):
                    if line.startswith(metric + " ") or line.startswith(metric + "{"):
                        s[key] = float(line.rsplit(" ", 1)[1])
        except httpx.HTTPError as e:
            s["metrics_error"] = type(e).__name__
        lat, self.window_lat = self.window_lat, []
        s["calls"] = len(lat)
        s["p50_ms"] = None if not lat else round(pct(lat, 0.5) * 1000, 3)
        s["p99_ms"] = None if not lat else round(pct(lat, 0.99) * 1000, 3)
        s["errors"] = len(self.failures)
        s["kill_window"] = any(k["at"] <= self.now() and (k.get("back") is None or self.now() <= k["back"] + 1)
                               for k in self.kills)
        self.samples.append(s)
        return s

    async def sampler(self) -> None:
        while not self.stop.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.stop.wait(), self.args.sample_every)
            if self.stop.is_set():
                return
            s = await self.sample_once()
            log(f"t={s['t']:>6}s rss={s['rss_kb']} kB fds={s['fds']} threads={s['threads']} tasks={s.get('tasks')} "
                f"streams={s.get('streams')} calls={s['calls']} p50={s['p50_ms']} p99={s['p99_ms']} ms "
                f"errors={s['errors']} events={sum(self.events.values())} samplings={len(self.sampling_lat)}")
            if self.bridge.poll() is not None:
                log(f"the bridge exited ({self.bridge.returncode})")
                self.bridge_exited = self.bridge.returncode
                self.stop.set()

    async def run(self) -> None:
        self.bridge_exited = None
        self.t0 = time.monotonic()
        load = [asyncio.create_task(self.event_reader(i)) for i in range(len(self.agents))]
        # Let the streams open before anything that pushes events.
        for _ in range(300):
            await asyncio.sleep(0.1)
            if await self.streams_open() >= len(self.agents):
                break
        else:
            log(f"only {await self.streams_open()} event streams open after 30 s; going on")
        self.t0 = time.monotonic()
        self.samples.clear()
        await self.sample_once()
        load += [asyncio.create_task(self.call_worker(w)) for w in range(self.args.concurrency)]
        load += [asyncio.create_task(f()) for f in (self.sampling_loop, self.kill_loop, self.churn_loop)]
        sampler = asyncio.create_task(self.sampler())
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.stop.wait(), self.duration)
        self.stop.set()
        self.t_end = self.now()
        log("time is up: stopping the load")
        await asyncio.sleep(0)
        # Let calls and sampling rounds in flight finish (they are bounded by their timeouts).
        for t in load:
            if not t.done():
                t.cancel()
        await asyncio.gather(*load, return_exceptions=True)
        pending = [t for t in self.tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=35)
        sampler.cancel()
        await asyncio.gather(sampler, return_exceptions=True)
        s = await self.sample_once()
        s["after_load"] = True
        log(f"final sample: rss={s['rss_kb']} kB fds={s['fds']} tasks={s.get('tasks')}")

    async def streams_open(self) -> int:
        try:
            for line in (await self.aux.get("/metrics")).text.splitlines():
                if line.startswith("mcp_bridge_event_streams "):
                    return int(float(line.split()[1]))
        except httpx.HTTPError:
            pass
        return 0

    # ---- verdict

    def summarize(self) -> dict:
        a = self.args
        kills = self.kills

        def kill_caused(f: dict) -> dict | None:
            for k in kills:
                if k.get("error") or k["server"] != f["server"]:
                    continue
                end = (k["back"] if k.get("back") is not None else self.t_end) + 1.0
                if f["end"] >= k["at"] - 0.05 and f["start"] <= end:
                    return k
            return None

        by_kill, other = [], []
        per_kill = defaultdict(list)
        for f in self.failures:
            k = kill_caused(f)
            (by_kill if k else other).append(f)
            if k:
                per_kill[id(k)].append(f)
        for k in kills:
            fs = per_kill.get(id(k), [])
            k["errors"] = len(fs)
            k["max_error_latency_s"] = round(max((f["latency"] for f in fs), default=0), 3)
            k["slow_errors"] = sum(1 for f in fs if f["latency"] >= FAST_FAIL_S)
            k["codes"] = dict(Counter(f"{f['status']} {f['code']}" for f in fs))
        kill_codes = Counter(f"{f['status']} {f['code']} retryable={f['retryable']}" for f in by_kill)
        other_codes = Counter(f"{f['kind']} {f['server']} {f['status']} {f['code']}" for f in other)
        kill_max = max((f["latency"] for f in by_kill), default=None)
        # Retryable is judged on the bridge's answers; a call the bridge never answered (the client gave up after
        # its 30 s read timeout) has no flag and fails the fast criterion instead.
        kill_unanswered = [f for f in by_kill if f["status"] == 0]
        kill_not_retryable = [f for f in by_kill if f["status"] != 0 and f["retryable"] is not True]

        # Under load only: not the sample at t=0 (no calls yet), nor the one after the load stopped.
        samples = [s for s in self.samples if s.get("rss_kb") is not None and s["t"] > 0 and not s.get("after_load")]

        def around(t_hi: float, n: int = 5) -> list[dict]:
            chosen = [s for s in samples if s["t"] <= t_hi + 0.5]
            return chosen[-n:]

        def med(rows: list[dict], key: str):
            vals = [r[key] for r in rows if r.get(key) is not None]
            return statistics.median(vals) if vals else None

        warm_rows = around(self.warmup)
        # the end: the last samples taken under load (not the one after it stopped)
        end_rows = around(self.t_end)
        warm = {k: med(warm_rows, k) for k in ("rss_kb", "fds", "threads", "tasks")}
        end = {k: med(end_rows, k) for k in ("rss_kb", "fds", "threads", "tasks")}
        after = self.samples[-1] if self.samples else {}

        def growth(k: str):
            if warm[k] in (None, 0) or end[k] is None:
                return None
            return (end[k] - warm[k]) / warm[k]

        t = self.call_t
        lat = self.call_lat
        first = [lat[i] for i in range(len(t)) if t[i] < self.segment]
        last = [lat[i] for i in range(len(t)) if t[i] >= self.t_end - self.segment]
        p99_first, p99_last = pct(first, 0.99), pct(last, 0.99)

        sampling_total = len(self.sampling)
        sampling_ok = len(self.sampling_lat)
        sampling_failed = [f for f in self.failures if f["kind"] == "sampling"]
        total_calls = len(lat) + len([f for f in self.failures if f["kind"] == "call"])

        crit = []

        def criterion(name: str, ok: bool, detail: str) -> None:
            crit.append({"criterion": name, "pass": bool(ok), "detail": detail})

        criterion("no errors but those a kill caused", not other and self.churn["failed"] == 0,
                  f"{len(other)} other errors, {self.churn['failed']} failed registration rounds")
        criterion(f"kill-caused errors fail fast (< {FAST_FAIL_S:.0f} s)", kill_max is None or kill_max < FAST_FAIL_S,
                  f"{len(by_kill)} errors, {sum(1 for f in by_kill if f['latency'] >= FAST_FAIL_S)} of them >= "
                  f"{FAST_FAIL_S:.0f} s, slowest {ms(kill_max)} ms, {len(kill_unanswered)} never answered")
        criterion("kill-caused errors are retryable", not kill_not_retryable,
                  f"{len(kill_not_retryable)} of the bridge's answers not marked retryable")
        criterion("every kill recovered", all(k.get("back") is not None for k in kills) and kills != [] or
                  self.duration < a.kill_every, f"{sum(1 for k in kills if k.get('back') is not None)}/{len(kills)}")
        rg = growth("rss_kb")
        criterion(f"RSS growth after warm-up < {RSS_GROWTH_MAX:.0%}", rg is not None and rg < RSS_GROWTH_MAX,
                  f"{warm['rss_kb']} -> {end['rss_kb']} kB ({'n/a' if rg is None else f'{rg:+.1%}'})")
        fd_ok = warm["fds"] is not None and end["fds"] is not None and \
            end["fds"] - warm["fds"] <= max(FD_TOLERANCE, 0.05 * warm["fds"])
        criterion(f"no fd growth (tolerance max({FD_TOLERANCE}, 5 %))", fd_ok, f"{warm['fds']} -> {end['fds']}")
        task_ok = warm["tasks"] is not None and end["tasks"] is not None and \
            end["tasks"] - warm["tasks"] <= max(TASK_TOLERANCE, 0.05 * warm["tasks"])
        criterion(f"no task growth (tolerance max({TASK_TOLERANCE}, 5 %))", task_ok,
                  f"{warm['tasks']} -> {end['tasks']}")
        criterion(f"p99 of the last window <= {P99_RATIO_MAX}x the first's",
                  p99_first is not None and p99_last is not None and p99_last <= P99_RATIO_MAX * p99_first,
                  f"{ms(p99_first)} -> {ms(p99_last)} ms")
        criterion("event streams never dropped", sum(self.drops.values()) == 0 and not self.stream_open_errors,
                  f"{sum(self.drops.values())} drops, {sum(self.stream_open_errors.values())} failed reopenings")
        criterion("sampling round trips completed", sampling_ok > 0 and
                  all(kill_caused(f) for f in sampling_failed),
                  f"{sampling_ok}/{sampling_total} ok, {len(sampling_failed)} failed "
                  f"({sum(1 for f in sampling_failed if kill_caused(f))} kill-caused)")
        criterion("the bridge stayed up", self.bridge_exited is None, f"exit {self.bridge_exited}")

        per_agent = [self.events_per_agent[i] for i in range(len(self.agents))]
        return {
            "minutes": a.minutes, "duration_s": round(self.t_end, 1), "warmup_s": self.warmup,
            "window_s": self.segment, "concurrency": a.concurrency, "agents": len(self.agents),
            "bridge": a.bridge, "bridge_pid": self.bridge.pid,
            "calls": {"total": total_calls, "ok": len(lat), "ok_per_server": dict(self.calls),
                      "per_second": round(total_calls / max(self.t_end, 1), 1),
                      "p50_ms_all": ms(pct(list(lat), 0.5)), "p99_ms_all": ms(pct(list(lat), 0.99)),
                      "first_window": {"calls": len(first), "p50_ms": ms(pct(first, 0.5)), "p99_ms": ms(p99_first)},
                      "last_window": {"calls": len(last), "p50_ms": ms(pct(last, 0.5)), "p99_ms": ms(p99_last)}},
            "errors": {"kill_caused": len(by_kill), "other": len(other),
                       "kill_caused_codes": dict(kill_codes), "other_codes": dict(other_codes),
                       "kill_caused_max_latency_ms": ms(kill_max),
                       "kill_caused_p50_latency_ms": ms(pct([f["latency"] for f in by_kill], 0.5)),
                       "other_examples": other[:10],
                       "kill_caused_slow": [f for f in by_kill if f["latency"] >= FAST_FAIL_S][:50]},
            "kills": [{k2: (round(v, 2) if isinstance(v, float) else v) for k2, v in k.items()} for k in kills],
            "kill_recovery_s": {s: [round(k["back"] - k["at"], 2) for k in kills if k["server"] == s and k.get("back")]
                                for s in ("evh", "ev")},
            "events": {"total": sum(self.events.values()), "by_type": dict(self.events),
                       "per_agent_min": min(per_agent, default=0), "per_agent_max": max(per_agent, default=0),
                       "drops": sum(self.drops.values()), "drop_reasons": dict(self.drop_reasons),
                       "events_lost": self.events_lost, "open_errors": dict(self.stream_open_errors)},
            "sampling": {"rounds": sampling_total, "ok": sampling_ok, "failed": len(sampling_failed),
                         "p50_ms": ms(pct(self.sampling_lat, 0.5)), "p99_ms": ms(pct(self.sampling_lat, 0.99)),
                         "max_ms": ms(max(self.sampling_lat, default=None)), "routed_to": dict(self.sample_routes),
                         "answer_errors": dict(self.sample_answer_errors)},
            "churn": {**dict(self.churn), "p50_s": None if not getattr(self, "churn_lat", None) else
                      round(statistics.median(self.churn_lat), 3), "failures": self.churn_failures[:10]},
            "resources": {"warmup": warm, "end": end, "after_load": {k: after.get(k) for k in
                                                                       ("rss_kb", "fds", "threads", "tasks")},
                          "rss_growth": None if rg is None else round(rg, 4),
                          "at_start": {k: self.samples[0].get(k) for k in ("rss_kb", "fds", "threads", "tasks")}
                          if self.samples else {}},
            "criteria": crit,
            "pass": all(c["pass"] for c in crit),
            "samples": self.samples,
        }

    def report(self, summary: dict) -> str:
        s = summary
        c, e, r = s["calls"], s["errors"], s["resources"]
        lines = [
            f"# Soak: {s['minutes']} min, {s['agents']} agents, {s['concurrency']} concurrent calls",
            "",
            f"- calls: {c['total']} ({c['per_second']}/s), ok {c['ok']} {c['ok_per_server']}; "
            f"p50 {c['p50_ms_all']} ms, p99 {c['p99_ms_all']} ms over the run",
            f"- first {s['window_s']:.0f} s: {c['first_window']['calls']} calls, p50 {c['first_window']['p50_ms']} ms, "
            f"p99 {c['first_window']['p99_ms']} ms; last {s['window_s']:.0f} s: {c['last_window']['calls']} calls, "
            f"p50 {c['last_window']['p50_ms']} ms, p99 {c['last_window']['p99_ms']} ms",
            f"- errors caused by a kill: {e['kill_caused']} (slowest {e['kill_caused_max_latency_ms']} ms, "
            f"p50 {e['kill_caused_p50_latency_ms']} ms): {e['kill_caused_codes']}",
            f"- other errors: {e['other']} {e['other_codes']}",
            f"- kills: {len(s['kills'])}; back after (s): evh {s['kill_recovery_s']['evh']}, "
            f"ev {s['kill_recovery_s']['ev']}",
            *[f"  - {k['server']} at {k['at']} s, back at {k.get('back')} s: {k.get('errors')} errors, "
              f"{k.get('slow_errors')} of them >= {FAST_FAIL_S:.0f} s, slowest {k.get('max_error_latency_s')} s, "
              f"{k.get('codes')}" for k in s["kills"]],
            f"- events: {s['events']['total']} {s['events']['by_type']}; per agent {s['events']['per_agent_min']}.."
            f"{s['events']['per_agent_max']}; drops {s['events']['drops']} {s['events']['drop_reasons']}; "
            f"events_lost {s['events']['events_lost']}",
            f"- sampling round trips: {s['sampling']['ok']}/{s['sampling']['rounds']} ok, p50 {s['sampling']['p50_ms']} ms,"
            f" p99 {s['sampling']['p99_ms']} ms, max {s['sampling']['max_ms']} ms; answered by {s['sampling']['routed_to']}",
            f"- registrations: {s['churn'].get('registered', 0)} registered, {s['churn'].get('called', 0)} called, "
            f"{s['churn'].get('unregistered', 0)} unregistered, {s['churn'].get('failed', 0)} failed; "
            f"a round p50 {s['churn']['p50_s']} s",
            f"- bridge at start (no load): {r['at_start']}",
            f"- warm-up end ({s['warmup_s']:.0f} s, median of the last 5 samples): {r['warmup']}",
            f"- end (median of the last 5 samples under load): {r['end']}; after the load stopped: {r['after_load']}",
            "",
            "| criterion | result | |",
            "|---|---|---|",
        ]
        for cr in s["criteria"]:
            lines.append(f"| {cr['criterion']} | {'PASS' if cr['pass'] else 'FAIL'} | {cr['detail']} |")
        lines += ["", f"**{'PASS' if s['pass'] else 'FAIL'}**", "",
                  "| t s | RSS kB | fds | threads | tasks | streams | calls | p50 ms | p99 ms | errors | kill window |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
        for x in s["samples"]:
            lines.append(f"| {x['t']} | {x.get('rss_kb')} | {x.get('fds')} | {x.get('threads')} | {x.get('tasks')} | "
                         f"{x.get('streams')} | {x['calls']} | {x['p50_ms']} | {x['p99_ms']} | {x['errors']} | "
                         f"{'yes' if x.get('kill_window') else ''} |")
        return "\n".join(lines) + "\n"


def parse_args() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--minutes", type=float, default=float(os.environ.get("SOAK_MINUTES", "30")))
    p.add_argument("--bridge", default=os.environ.get("SOAK_BRIDGE", str(ROOT / "target" / "release" / "mcp-bridge")))
    p.add_argument("--out", default=str(ROOT / "target" / "soak"))
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--agents", type=int, default=200)
    p.add_argument("--kill-every", type=float, default=60)
    p.add_argument("--register-every", type=float, default=10)
    p.add_argument("--sampling-every", type=float, default=3)
    p.add_argument("--sample-every", type=float, default=10)
    p.add_argument("--stream-read-timeout", type=float, default=60,
                   help="seconds without a byte (keep-alives come every 15 s) before a stream counts as dropped")
    p.add_argument("--bridge-log-level", default="warn")
    p.add_argument("--replay-buffer", type=int, default=50,
                   help="MCP_BRIDGE_REPLAY_BUFFER: small, so that every agent's replay buffer (bounded, but some "
                        "25 events a minute here) is full before warm-up ends and its filling is not taken for a leak")
    return p.parse_args()


async def main_async(soak: Soak) -> int:
    loop = asyncio.get_running_loop()
    main = asyncio.current_task()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, main.cancel)
    await soak.start()
    await soak.run()
    summary = soak.summarize()
    text = soak.report(summary)
    (soak.out / "report.md").write_text(text)
    (soak.out / "report.json").write_text(json.dumps(summary, indent=1, default=str))
    print(text)
    log(f"written {soak.out / 'report.md'} and report.json")
    return 0 if summary["pass"] else 1


def main() -> int:
    args = parse_args()
    soak = Soak(args)
    code = 2
    try:
        code = asyncio.run(main_async(soak))
    except (KeyboardInterrupt, asyncio.CancelledError):
        log("interrupted")
        code = 130
    except Exception as e:  # noqa: BLE001 - report, clean up, exit 2
        log(f"the soak could not run: {type(e).__name__}: {e}")
        code = 2
    finally:
        soak.procs.cleanup()
        if getattr(soak, "data_dir", None):
            shutil.rmtree(soak.data_dir, ignore_errors=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
