/**
 * The load generator of bench/api.mjs, run as a child process so that autocannon does not
 * share the event loop (and, on a small machine, the core) of the server it measures.
 *
 * Reads one JSON job from argv[2]: { url, connections, duration, headers, requests, overallRate? }, where
 * each request is { method, path, body?, contentType?, ids?: [min, max], skip?, weight? }; `{id}`
 * in a path is replaced by a random id in `ids` (not a multiple of `skip`) on every request, `{n}` in a body by a
 * counter. Requests with weights are mixed in that proportion. Prints autocannon's result
 * (req/s and latency percentiles) as one JSON line.
 */
import autocannon from 'autocannon';

const job = JSON.parse(process.argv[2]);
let counter = 0;

function materialize(spec) {
  return {
    method: spec.method,
    setupRequest(req) {
      let id = spec.ids ? spec.ids[0] + Math.floor(Math.random() * (spec.ids[1] - spec.ids[0] + 1)) : 0;
      if (spec.skip && id % spec.skip === 0) id -= 1;
      const n = ++counter;
      req.method = spec.method;
      req.path = spec.path.replace('{id}', String(id));
      if (spec.body !== undefined) {
        req.body = JSON.stringify(spec.body).replaceAll('{n}', `${process.pid}-${n}`);
        req.headers = { ...job.headers, 'content-type': spec.contentType ?? 'application/json' };
      } else {
        req.body = undefined;
        req.headers = { ...job.headers };
      }
      return req;
    },
  };
}

// A mix: a shuffled sequence of 100 requests in the given proportions. autocannon walks
// `requests` from the start on every connection, so each connection gets its own shuffle:
// with one sequence, a run too short for a connection to finish it would load the first
// requests of that sequence rather than the mix.
function sequence(specs) {
  const total = specs.reduce((s, r) => s + (r.weight ?? 1), 0);
  const seq = specs.flatMap((r) =>
    Array.from({ length: Math.round(((r.weight ?? 1) * 100) / total) }, () => r),
  );
  for (let i = seq.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [seq[i], seq[j]] = [seq[j], seq[i]];
  }
  return seq.map(materialize);
}

const result = await autocannon({
  url: job.url,
  connections: job.connections,
  duration: job.duration,
  // A steady load (bench/soak.mjs) instead of as fast as the server answers.
  ...(job.overallRate ? { overallRate: job.overallRate } : {}),
  headers: job.headers,
  requests: sequence(job.requests),
  setupClient: (client) => client.setRequests(sequence(job.requests)),
});
const non2xx = result.non2xx;
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx,
    statuses: Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([k, v]) => [k, v.count])),
    errors: result.errors + result.timeouts,
  })}\n`,
);
