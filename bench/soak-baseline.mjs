/**
 * The baseline of bench/soak.mjs, in a process of its own: bench/api-baseline.mjs's bare
 * Fastify + `pg` server on the soak's database and organization, with GET /memory for the
 * sampler. What its memory does under the same steady load is what the platform (Node.js,
 * Fastify, `pg`, the services' code) does by itself; the service's drift beyond it is the
 * service's own.
 *
 *   node bench/soak-baseline.mjs <database url> <organization id>
 *
 * Prints `listening <port>` once it answers.
 */
import { baselineApp } from './api-baseline.mjs';

const [url, orgId] = process.argv.slice(2);
const { app, close } = await baselineApp(url, Number(orgId), { pool: 6 });
app.get('/memory', async () => process.memoryUsage());
await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`listening ${app.server.address().port}\n`);
process.on('SIGTERM', () => {
  void close().then(() => process.exit(0));
});
