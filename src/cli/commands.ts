import type { Command } from 'commander';
import { cliActor, cliCaller } from '../caller.js';
import { loadConfig } from '../config.js';
import { DatabaseTooNewError, migrate, migrationStatus } from '../db/migrate.js';
import { olderBuildConnections } from '../db/older-builds.js';
import { ApiError } from '../errors.js';
import { describeBroker } from '../ingest/broker-port.js';
import { MAX_KEY_LIFETIME_SECONDS } from '../keys/service.js';
import { type RunningService, startService } from '../runtime.js';
import { registerActivityCommands } from './activity-commands.js';
import { id, oneOf, positiveInt, uuid } from './args.js';
import { registerBackupCommands } from './backup-commands.js';
import { registerIngestCommands } from './ingest-commands.js';
import { openCliDatabase } from './open.js';
import { print } from './output.js';
import { registerSessionCommands } from './session-commands.js';
import { registerSpreadsheetCommands } from './spreadsheet-commands.js';
import { registerTwoFactorCommands } from './two-factor-commands.js';
import { withOrganization, withServices } from './with-services.js';

export function registerCommands(program: Command): void {
  program
    .command('serve')
    .description('serve the API and the web app (embedded PostgreSQL unless DATABASE_URL is set)')
    .action(async () => {
      const config = loadConfig();
      // The handlers go in before the start: a supervisor that stops the service as it
      // starts (or as soon as it reads the start-up lines) gets a clean stop, not Node's
      // default death, which would leave the embedded PostgreSQL running without its parent.
      let running: RunningService | undefined;
      let stopRequested = false;
      // A signal while starting ends a wait for the database (another process's server, ours starting).
      const starting = new AbortController();
      // What a signal does next: drain first (TAGTRAIL_SHUTDOWN_DRAIN_SECONDS), stop, or,
      // once stopping, exit at once with 1.
      let phase: 'serving' | 'draining' | 'stopping' = 'serving';
      const stop = (service: RunningService) => {
        phase = 'stopping';
        return service.stop().then(
          () => process.exit(0),
          (err) => {
            process.stderr.write(`error while stopping: ${(err as Error).message}\n`);
            process.exit(1);
          },
        );
      };
      const shutdown = (signal: string) => {
        if (phase === 'stopping') process.exit(1);
        const drainSeconds = config.TAGTRAIL_SHUTDOWN_DRAIN_SECONDS;
        if (phase === 'draining' && running) {
          process.stderr.write(`${signal}: drain cut short; stopping\n`);
          void stop(running);
        } else if (!running) {
          // Still starting: nothing was served yet, so nothing to drain.
          process.stderr.write(`${signal}: stopping\n`);
          phase = 'stopping';
          stopRequested = true;
          starting.abort();
        } else if (drainSeconds === 0) {
          process.stderr.write(`${signal}: stopping\n`);
          void stop(running);
        } else {
          phase = 'draining';
          process.stderr.write(
            `${signal}: draining for ${drainSeconds} s (/readyz answers 503), then stopping; another signal stops at once\n`,
          );
          const service = running;
          void service.drain().then(() => {
            if (phase !== 'draining') return;
            process.stderr.write('drained: stopping\n');
            void stop(service);
          });
        }
      };
      process.on('SIGTERM', () => shutdown('SIGTERM'));
      process.on('SIGINT', () => shutdown('SIGINT'));
      try {
        running = await startService(config, {
          onNotice: (line) => process.stderr.write(`${line}\n`),
          signal: starting.signal,
        });
      } catch (err) {
        // Stopped while it waited: what it had started is stopped again; a clean stop.
        if (starting.signal.aborted && (err as Error).name === 'AbortError') process.exit(0);
        throw err;
      }
      if (stopRequested) {
        await stop(running);
        return;
      }
      const service = running;
      // SIGHUP reloads renewed certificates (a certbot deploy hook, systemd's ExecReload).
      // Without TLS there is nothing to reload, but Node's default would end the process
      // without the clean stop, leaving the embedded PostgreSQL running: a reload never stops it.
      process.on('SIGHUP', () => {
        const results = service.reloadTls();
        if (results.length === 0) process.stderr.write('SIGHUP: nothing to reload (no TLS listener)\n');
        for (const result of results) {
          const detail = result.outcome === 'refused' ? `: ${result.error}` : '';
          process.stderr.write(`SIGHUP: ${result.listener} certificate ${result.outcome}${detail}\n`);
        }
      });
      const consuming = service.broker.embedded || service.ingest.consumer !== undefined;
      for (const line of describeBroker(service.broker, consuming)) process.stderr.write(`${line}\n`);
      process.stderr.write(`tagtrail listening on ${service.url}\n`);
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .option(
      '--check',
      'apply nothing: print the pending migrations; exit 0 when none, 3 when some are, 1 when a newer build migrated the database',
    )
    .option('--json', 'print JSON')
    .action(async (opts: { check?: boolean; json?: boolean }) => {
      const config = loadConfig();
      const opened = await openCliDatabase(config, { migrate: false, poolSize: 2 });
      try {
        if (opts.check) {
          const status = await migrationStatus(opened.db.pool);
          // Migrating would be refused while they are connected: a deploy script sees it first.
          const older = status.pending.length > 0 ? await olderBuildConnections(opened.db.pool) : [];
          print(Boolean(opts.json), {
            pending: status.pending,
            unknown: status.unknown,
            ...(older.length > 0 && {
              older_builds_connected: older.map((c) => `${c.applicationName} (pid ${c.pid})`),
            }),
          });
          if (status.unknown.length > 0) throw new DatabaseTooNewError(status.unknown);
          if (status.pending.length > 0) process.exitCode = 3;
          return;
        }
        const { applied } = await migrate(opened.db.pool);
        print(Boolean(opts.json), { applied });
      } finally {
        await opened.close();
      }
    });

  const org = program.command('org').description('organizations');
  org
    .command('create')
    .requiredOption('--name <name>', 'organization name')
    .option('--json', 'print JSON')
    .action((opts: { name: string; json?: boolean }) =>
      withServices(async (s) => {
        const created = await s.organizations.create(opts.name);
        print(Boolean(opts.json), {
          id: created.id,
          name: created.name,
          created_at: created.createdAt.toISOString(),
        });
      }),
    );

  const key = program.command('key').description('API keys');
  key
    .command('mint')
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .requiredOption('--scopes <list>', 'comma-separated scopes (may be empty)')
    .option('--name <name>', 'key name')
    .option(
      '--expires-in <seconds>',
      'lifetime in seconds',
      positiveInt('--expires-in', MAX_KEY_LIFETIME_SECONDS),
    )
    .option(
      '--env <env>',
      'environment the key is for: production or preview',
      oneOf('--env', ['production', 'preview'] as const),
    )
    .option('--json', 'print JSON')
    .action(
      (opts: {
        org: number;
        scopes: string;
        name?: string;
        expiresIn?: number;
        env?: 'production' | 'preview';
        json?: boolean;
      }) =>
        withOrganization(opts.org, async (s, config) => {
          const environment = opts.env ?? config.TAGTRAIL_ENV;
          const scopes = opts.scopes
            .split(',')
            .map((x) => x.trim())
            .filter(Boolean);
          const { key: k, token } = await s.keys.mint({
            caller: cliCaller(opts.org),
            name: opts.name,
            scopes,
            expiresInSeconds: opts.expiresIn,
            environment,
          });
          print(Boolean(opts.json), {
            id: k.id,
            org_id: k.orgId,
            name: k.name,
            scopes: k.scopes,
            environment: k.environment,
            expires_at: k.expiresAt?.toISOString() ?? null,
            token,
          });
        }),
    );
  key
    .command('revoke')
    .argument('<keyId>', 'the key id (a UUID)', uuid('key id'))
    .option('--json', 'print JSON')
    .action((keyId: string, opts: { json?: boolean }) =>
      withServices(async (s) => {
        const k = await s.keys.revokeAnywhere(keyId, cliActor());
        print(Boolean(opts.json), { id: k.id, revoked_at: k.revokedAt?.toISOString() ?? null });
      }),
    );
  registerIngestCommands(program);
  registerSessionCommands(program);
  registerActivityCommands(program);
  registerBackupCommands(program);
  registerSpreadsheetCommands(program);
  registerTwoFactorCommands(program);
}

/** A message for an operator; stack traces only for what we did not expect. */
export function describeFailure(err: unknown): string {
  if (err instanceof ApiError) {
    const fields = err.fields?.map((f) => `  ${f.field}: ${f.message}`).join('\n');
    return fields ? `${err.detail}\n${fields}` : err.detail;
  }
  return err instanceof Error ? err.message : String(err);
}
