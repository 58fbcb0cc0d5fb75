/**
 * What bench/api.mjs measures besides autocannon's figures: latency per method as the
 * server saw it, and CPU time per request of the server process and of PostgreSQL.
 */
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

/**
 * Socket writes made by this process (both servers: their HTTP answers and their database
 * and LISTEN connections; autocannon runs in a child). A count, so the load of other work
 * does not move it; on loopback each write runs the kernel's TCP path for both ends.
 */
let socketWrites = 0;
for (const method of ['_write', '_writev']) {
  const original = net.Socket.prototype[method];
  net.Socket.prototype[method] = function counted(...args) {
    socketWrites++;
    return original.apply(this, args);
  };
}

/** Per-method latency as the server saw it (from the request's arrival to the end of the response). */
export function serverTimings(app) {
  const byMethod = new Map();
  app.server.on('request', (req, res) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const key = req.method === 'GET' ? 'GET' : req.method;
      if (!byMethod.has(key)) byMethod.set(key, []);
      byMethod.get(key).push(Number(process.hrtime.bigint() - start) / 1e6);
    });
  });
  return {
    reset: () => byMethod.clear(),
    summary: () =>
      [...byMethod].map(([method, times]) => {
        times.sort((a, b) => a - b);
        const at = (p) => times[Math.min(times.length - 1, Math.floor(times.length * p))];
        return `${method} n=${times.length} p50 ${at(0.5).toFixed(1)} ms p99 ${at(0.99).toFixed(1)} ms`;
      }),
  };
}

/**
 * CPU time spent so far by this process (both servers; autocannon runs in a child) and, on
 * the embedded server, by PostgreSQL (the postmaster, its live children, and the children
 * it has reaped). On a shared machine req/s follows the load of other work; CPU time per
 * request much less so, hence printed beside it.
 */
export function cpuClock(postmasterPid) {
  const tick = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
  // Fields after the command name (which may hold spaces): state is [0], utime [11], cutime [13].
  const stat = (pid) => {
    try {
      const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
      return text.slice(text.lastIndexOf(')') + 2).split(' ');
    } catch {
      return undefined;
    }
  };
  const postgres = () => {
    if (!postmasterPid) return undefined;
    const own = stat(postmasterPid);
    let ms = (Number(own[11]) + Number(own[12]) + Number(own[13]) + Number(own[14])) * tick;
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      const f = stat(entry);
      if (f && Number(f[1]) === postmasterPid) ms += (Number(f[11]) + Number(f[12])) * tick;
    }
    return ms;
  };
  return () => {
    const usage = process.cpuUsage();
    return { node: (usage.user + usage.system) / 1000, pg: postgres(), writes: socketWrites };
  };
}

export const total = (r) => r.nodeMs + (r.pgMs ?? 0);
export const cpu = (r) =>
  ` cpu ${total(r).toFixed(2)} ms/req${r.pgMs === undefined ? '' : ` (node ${r.nodeMs.toFixed(2)} pg ${r.pgMs.toFixed(2)})`}` +
  ` ${r.writes.toFixed(2)} writes/req`;
export const fmt = (r) =>
  `${r.rps.toFixed(0).padStart(6)} req/s p50 ${String(r.p50).padStart(4)} p99 ${String(r.p99).padStart(4)}${
    r.non2xx || r.errors ? ` (!${r.non2xx} non-2xx, ${r.errors} errors)` : ''
  }`;

/**
 * The ratio over every round, by which side ran first: a side runs faster after itself
 * (at a million assets by 15-25 points), so one round's ratio leans with its order and
 * only the two orders together say where the service stands. `byOrder.tagtrail` holds
 * the [tagtrail, baseline] results of the rounds that ran tagtrail first.
 */
export function roundsSummary(byOrder) {
  const pooled = (pairs) => {
    const sum = (i) => pairs.reduce((acc, p) => acc + p[i].rps, 0);
    return pairs.length === 0 ? '-' : `${((sum(0) / sum(1)) * 100).toFixed(0)}%`;
  };
  const all = [...byOrder.tagtrail, ...byOrder.baseline];
  return (
    `all rounds ${pooled(all)} (tagtrail first ${pooled(byOrder.tagtrail)}, ` +
    `baseline first ${pooled(byOrder.baseline)})`
  );
}
