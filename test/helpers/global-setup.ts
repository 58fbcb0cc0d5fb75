import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { type EmbeddedPostgres, startEmbeddedPostgres } from '../../src/db/embedded.js';

declare module 'vitest' {
  export interface ProvidedContext {
    adminDatabaseUrl: string;
    mqttUrl: string | undefined;
    databaseKind: 'embedded' | 'external';
  }
}

/**
 * One database server for the run: the machine's (TEST_DATABASE_URL) when given, else an
 * embedded one in a temporary directory. Each test file creates its own database on it.
 */
export default async function setup(project: TestProject) {
  let embedded: EmbeddedPostgres | undefined;
  let dir: string | undefined;
  const external = process.env.TEST_DATABASE_URL;
  if (external) {
    project.provide('adminDatabaseUrl', external);
    project.provide('databaseKind', 'external');
  } else {
    dir = await mkdtemp(join(tmpdir(), 'tagtrail-test-pg-'));
    embedded = await startEmbeddedPostgres(dir);
    project.provide('adminDatabaseUrl', embedded.adminUrl);
    project.provide('databaseKind', 'embedded');
  }
  project.provide('mqttUrl', process.env.TEST_MQTT_URL);
  return async () => {
    await embedded?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  };
}
