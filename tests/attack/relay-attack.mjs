#!/usr/bin/env node
// Replays the hostile-client and hostile-upstream cases against a relay it starts itself on loopback, and
// prints what the relay held: slow request heads, idle connections past the connection limit, slow bodies,
// a CPU flood of colliding tool names while /healthz is probed, an upstream that sends only SSE comments,
// and SIGTERM with a half-sent request. Loopback only; every phase is bounded (about a minute in all).
//
// Usage: node tests/attack/relay-attack.mjs
// Env:   RELAY_BIN (default: $CARGO_TARGET_DIR or ./target, debug/patchbridge-relay; build it first with
//        `cargo build -p patchbridge-relay`), SLOW=300 (slow-head connections), FLOOD=8 (concurrent heavy
//        requests), NAMES=8000 (colliding tool names per heavy request)
// Prints a table; exits 1 if a bound did not hold.

import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const target = process.env.CARGO_TARGET_DIR ?? join(process.cwd(), "target");
const RELAY_BIN = process.env.RELAY_BIN ?? join(target, "debug", "patchbridge-relay");
const SLOW = Number(process.env.SLOW ?? 300);
const FLOOD = Number(process.env.FLOOD ?? 8);
const NAMES = Number(process.env.NAMES ?? 8000);
const LIMITS = {
  headerReadTimeoutMs: 2000,
  requestBodyTimeoutMs: 2000,
  maxConnections: 200,
  maxStreamDurationMs: 3000,
  idleTimeoutMs: 60000,
  shutdownGraceMs: 2000,
};
const results = [];
let failed = false;
const report = (phase, held, ok) => {
  results.push({ phase, held, ok: ok ? "yes" : "NO" });
  if (!ok) failed = true;
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// An upstream that accepts the call and then sends only comments, for ever.
const endless = http.createServer((req, res) => {
  req.resume();
  res.writeHead(200, { "content-type": "text/event-stream" });
  const timer = setInterval(() => res.write(": still thinking\n\n"), 100);
  res.on("close", () => clearInterval(timer));
});
await new Promise((r) => endless.listen(0, "127.0.0.1", r));
const upstream = `http://127.0.0.1:${endless.address().port}/v1`;

const dir = mkdtempSync(join(tmpdir(), "relay-attack-"));
const config = join(dir, "relay.json");
writeFileSync(
  config,
  JSON.stringify({
    server: { bind: "127.0.0.1:0" },
    identity: { mode: "development" },
    database: { url: `sqlite://${join(dir, "relay.sqlite3")}` },
    limits: LIMITS,
    models: [
      {
        id: "endless",
        provider: "openai-chat",
        baseUrl: upstream,
        upstreamModel: "m",
        authScheme: "none",
      },
    ],
  }),
);

const relay = spawn(RELAY_BIN, ["--config", config], {
  env: { ...process.env, PATCHBRIDGE_LOG: "info" },
  stdio: ["ignore", "pipe", "pipe"],
});
let log = "";
relay.stderr.on("data", (d) => (log += d));
const addr = await new Promise((resolve, reject) => {
  const timer = setTimeout(() => reject(new Error(`relay did not start:\n${log}`)), 30000);
  relay.stdout.on("data", (d) => {
    const m = String(d).match(/listening on http:\/\/([\d.]+):(\d+)/);
    if (m) {
      clearTimeout(timer);
      resolve({ host: m[1], port: Number(m[2]) });
    }
  });
  relay.on("exit", () => reject(new Error(`relay exited:\n${log}`)));
});
const base = `http://${addr.host}:${addr.port}`;

/** Latency of one GET /healthz on a fresh connection (ms), or Infinity past `limit`. A raw socket, not
 * fetch: fetch would reuse a pooled keep-alive connection and never wait in the accept queue. */
function healthz(limit = 10000) {
  return new Promise((resolve) => {
    const started = performance.now();
    let data = "";
    const socket = net.connect(addr.port, addr.host, () =>
      socket.write("GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"),
    );
    const timer = setTimeout(() => {
      socket.destroy();
      resolve(Infinity);
    }, limit);
    socket.on("data", (d) => (data += d));
    socket.on("close", () => {
      clearTimeout(timer);
      resolve(data.startsWith("HTTP/1.1 200") ? performance.now() - started : Infinity);
    });
    socket.on("error", () => {});
  });
}

/** Opens a raw socket and writes `text`; resolves with a handle that knows when the relay closed it. */
function rawConnection(text) {
  return new Promise((resolve) => {
    const socket = net.connect(addr.port, addr.host, () => {
      if (text) socket.write(text);
      resolve(handle);
    });
    const handle = { socket, closedAt: null, data: "" };
    socket.on("data", (d) => (handle.data += d));
    socket.on("close", () => (handle.closedAt = performance.now()));
    socket.on("error", () => {});
  });
}

const percentile = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

// 1. Slow request heads: SLOW connections that send half a head and stop.
{
  const started = performance.now();
  const conns = await Promise.all(
    Array.from({ length: SLOW }, () => rawConnection("GET /healthz HTTP/1.1\r\nHost: x\r\nX-Slow: a")),
  );
  // Past maxConnections the rest wait in the backlog and get their own timeout once admitted.
  await sleep(Math.ceil(SLOW / LIMITS.maxConnections) * LIMITS.headerReadTimeoutMs + 1500);
  const closed = conns.filter((c) => c.closedAt !== null).length;
  const after = await healthz();
  conns.forEach((c) => c.socket.destroy());
  report(
    `slow heads (${SLOW} conns, header timeout ${LIMITS.headerReadTimeoutMs} ms)`,
    `${closed}/${SLOW} closed by the relay within ${Math.round(performance.now() - started)} ms; healthz after ${after.toFixed(1)} ms`,
    closed === SLOW && after < 1000,
  );
}

// 2. Idle connections past the connection limit.
{
  const n = LIMITS.maxConnections + 60;
  const conns = await Promise.all(Array.from({ length: n }, () => rawConnection("")));
  await sleep(300);
  const during = await healthz(LIMITS.headerReadTimeoutMs * 3);
  const logged = log.includes("connection limit reached");
  conns.forEach((c) => c.socket.destroy());
  report(
    `idle conns past maxConnections (${n} > ${LIMITS.maxConnections})`,
    `limit logged: ${logged}; healthz answered after ${during.toFixed(0)} ms (once idle ones timed out)`,
    logged && during < LIMITS.headerReadTimeoutMs * 3,
  );
}

// 3. Slow body: a POST whose body never completes.
{
  const conn = await rawConnection(
    "POST /api/conversations HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n" +
      "x-patchbridge-user: attacker\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{",
  );
  const started = performance.now();
  while (conn.closedAt === null && performance.now() - started < LIMITS.requestBodyTimeoutMs + 5000) await sleep(50);
  const status = conn.data.split("\r\n")[0];
  report(
    `slow body (body timeout ${LIMITS.requestBodyTimeoutMs} ms)`,
    `answered "${status}" after ${Math.round((conn.closedAt ?? performance.now()) - started)} ms`,
    status.includes("408"),
  );
  conn.socket.destroy();
}

// 4. CPU flood: FLOOD concurrent model calls each with NAMES tool names that collide once sanitised, while
// /healthz is probed every 50 ms.
{
  const unsafe = ".:/!@#$%^&*()+=[]{};";
  const tools = Array.from({ length: NAMES }, (_, i) => ({
    name: `tool${unsafe[i % 20]}${unsafe[Math.floor(i / 20) % 20]}${unsafe[Math.floor(i / 400) % 20]}${"_".repeat(40)}`,
    description: "",
    inputSchema: { type: "object" },
  }));
  const body = JSON.stringify({
    model: "endless",
    messages: [{ id: "u1", role: "user", blocks: [{ type: "text", text: "hi" }] }],
    modelState: null,
    tools,
  });
  const probes = [];
  let flooding = true;
  const prober = (async () => {
    while (flooding) {
      probes.push(await healthz());
      await sleep(50);
    }
  })();
  const started = performance.now();
  await Promise.all(
    Array.from({ length: FLOOD }, async () => {
      const controller = new AbortController();
      try {
        const r = await fetch(`${base}/api/model`, {
          method: "POST",
          headers: { "content-type": "application/json", origin: base, "x-patchbridge-user": "attacker" },
          body,
          signal: controller.signal,
        });
        // The endless upstream answers: take the first bytes, then drop the stream.
        const reader = r.body.getReader();
        await reader.read();
        controller.abort();
      } catch {}
    }),
  );
  const floodMs = performance.now() - started;
  flooding = false;
  await prober;
  const p50 = percentile(probes, 50);
  const max = Math.max(...probes);
  report(
    `CPU flood (${FLOOD} x ${NAMES} colliding tool names, ${(body.length / 1024).toFixed(0)} KiB each)`,
    `all encoded in ${Math.round(floodMs)} ms; healthz during: ${probes.length} probes, p50 ${p50.toFixed(1)} ms, max ${max.toFixed(1)} ms`,
    max < 1000,
  );
}

// 5. Endless upstream: only SSE comments, for ever.
{
  const started = performance.now();
  const r = await fetch(`${base}/api/model`, {
    method: "POST",
    headers: { "content-type": "application/json", origin: base, "x-patchbridge-user": "attacker" },
    body: JSON.stringify({
      model: "endless",
      messages: [{ id: "u1", role: "user", blocks: [{ type: "text", text: "hi" }] }],
      modelState: null,
      tools: [],
    }),
    signal: AbortSignal.timeout(LIMITS.maxStreamDurationMs + 20000),
  }).catch((e) => ({ error: e }));
  let text = "";
  if (r.body) text = await r.text().catch(() => "");
  const held = performance.now() - started;
  const code = (text.match(/"code":"([A-Z_]+)"/) ?? [])[1];
  report(
    `endless upstream (maxStreamDurationMs ${LIMITS.maxStreamDurationMs})`,
    `stream held ${Math.round(held)} ms, ended with ${code ?? "no error event"}`,
    code === "UPSTREAM_TIMEOUT" && held < LIMITS.maxStreamDurationMs + 2000,
  );
}

// 6. SIGTERM with a half-sent request open.
{
  const conn = await rawConnection(
    "POST /api/conversations HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost\r\n" +
      "x-patchbridge-user: attacker\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{",
  );
  await sleep(100);
  const started = performance.now();
  const exited = new Promise((r) => relay.on("exit", (code) => r(code)));
  relay.kill("SIGTERM");
  const code = await Promise.race([exited, sleep(LIMITS.shutdownGraceMs + 10000).then(() => "still running")]);
  const took = performance.now() - started;
  report(
    `SIGTERM with a half-sent request (grace ${LIMITS.shutdownGraceMs} ms)`,
    `exit ${code} after ${Math.round(took)} ms`,
    code === 0 && took < LIMITS.shutdownGraceMs + 3000,
  );
  conn.socket.destroy();
}

endless.close();
if (relay.exitCode === null) relay.kill("SIGKILL");
const width = Math.max(...results.map((r) => r.phase.length));
for (const r of results) console.log(`${r.phase.padEnd(width)}  held: ${r.ok.padEnd(3)}  ${r.held}`);
process.exit(failed ? 1 : 0);
