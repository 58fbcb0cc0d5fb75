import type { Config } from './config.js';
import { openDatabase } from './db/connect.js';
import { buildServer } from './http/server.js';
import { createServices } from './services.js';

export interface RunningService {
  url: string;
  stop(): Promise<void>;
}

/**
 * Starts the whole service: database (embedded unless DATABASE_URL), migrations, HTTP.
 * `stop` closes in reverse order: stop accepting and finish requests in flight, then the
 * stores, then the database.
 */
export async function startService(config: Config): Promise<RunningService> {
  const opened = await openDatabase(config);
  const services = await createServices(opened.db, config);
  const app = await buildServer(services, {
    bodyLimit: config.TAGTRAIL_BODY_LIMIT,
    logger: { level: config.LOG_LEVEL },
  });
  try {
    await app.listen({ port: config.PORT, host: config.HOST });
  } catch (err) {
    await app.close();
    await services.close();
    await opened.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') {
      throw new Error(`port ${config.PORT} on ${config.HOST} is in use; set PORT to another port`);
    }
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.PORT;
  let stopping: Promise<void> | undefined;
  return {
    url: `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${port}`,
    stop() {
      stopping ??= (async () => {
        await app.close();
        await services.close();
        await opened.close();
      })();
      return stopping;
    },
  };
}
