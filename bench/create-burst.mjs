/**
 * What a burst of creates without keys leaves one organization's reads. Those creates take
 * turns on the organization's keyspace lock, each waiting there with a connection of the
 * pool that also serves its reads and its readers' messages; AssetService lets only some
 * of them into the database at once (keylessCreatesInFlight). This loads the compiled
 * service (`tagtrail serve`, embedded PostgreSQL, a temporary data directory) with
 * GET /assets/{id} from `--gets` connections alone (the baseline), then the same beside
 * POST /assets without a key from `--posts` connections, and prints the reads' req/s and
 * latency in both, their ratio, and the creates' req/s.
 *
 *   npm run bench:create-burst
 *   npm run bench:create-burst -- --posts 24 --gets 8 --duration 15 --rounds 2 --assets 2000
 *   DATABASE_POOL_SIZE=20 npm run bench:create-burst    # the service with another pool size
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { benchArgs, positiveInteger } from '../dist/bench/cli-args.js';
import { runLoad, serviceEnv, startService } from './served.mjs';
import { setUpSite } from './soak-site.mjs';

const USAGE = `npm run bench:create-burst [-- options]   (docs/performance.md)
  --posts N      connections creating assets without a key (24)
  --gets N       connections reading GET /assets/{id} (8)
  --duration S   seconds of each load (15)
  --rounds N     rounds of the reads alone, then beside the creates (2)
  --assets N     assets seeded (2000)
env: DATABASE_POOL_SIZE (the service's pool size)`;

const { values: args } = benchArgs(USAGE, {
  options: {
    posts: { type: 'string', default: '24' },
    gets: { type: 'string', default: '8' },
    duration: { type: 'string', default: '15' },
    rounds: { type: 'string', default: '2' },
    assets: { type: 'string', default: '2000' },
  },
});
const ASSETS = positiveInteger('assets', args.assets, USAGE);
const DURATION = positiveInteger('duration', args.duration, USAGE);
const GETS = positiveInteger('gets', args.gets, USAGE);
const POSTS = positiveInteger('posts', args.posts, USAGE);
const ROUNDS = positiveInteger('rounds', args.rounds, USAGE);

const dataDir = await mkdtemp(join(tmpdir(), 'tagtrail-burst-'));
const env = serviceEnv(dataDir);
let service;
try {
  service = await startService(env);
  const url = service.match[1];
  const assets = ASSETS;
  const site = await setUpSite({ url, env, name: 'Burst', readers: 1, antennas: 1, assets, devices: false });
  const load = (requests, connections) =>
    runLoad({
      url,
      connections,
      duration: DURATION,
      headers: { authorization: `Bearer ${site.token}` },
      requests,
    });
  const reads = () =>
    load(
      [
        {
          method: 'GET',
          path: '/api/v1/assets/{id}',
          ids: [Math.min(...site.assetIds), Math.max(...site.assetIds)],
        },
      ],
      GETS,
    );
  const creates = () =>
    load([{ method: 'POST', path: '/api/v1/assets', body: { name: 'Burst {n}' } }], POSTS);

  console.log(
    `tagtrail create burst: GET /assets/{id} from ${args.gets} connections, alone and beside POST /assets ` +
      `without a key from ${args.posts}; ${assets} assets, ${args.duration} s per load; node ${process.version}\n`,
  );
  const f = (l) => `${l.rps.toFixed(0)} req/s p50 ${l.p50} ms p99 ${l.p99} ms`;
  for (let round = 1; round <= ROUNDS; round++) {
    const alone = await reads();
    const [burst, beside] = await Promise.all([creates(), reads()]);
    const failed = alone.non2xx + alone.errors + burst.non2xx + burst.errors + beside.non2xx + beside.errors;
    console.log(`round ${round}: reads alone    ${f(alone)}`);
    console.log(
      `         reads beside   ${f(beside)} (${((beside.rps / alone.rps) * 100).toFixed(0)}% of alone)`,
    );
    console.log(
      `         creates        ${f(burst)}${failed ? `; ${failed} answers not 2xx or failed` : ''}`,
    );
  }
} finally {
  if (service) {
    service.child.kill('SIGTERM');
    await new Promise((resolve) => service.child.on('exit', resolve));
  }
  await rm(dataDir, { recursive: true, force: true });
}
