import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { Command } from 'commander';
import { cliCaller } from '../caller.js';
import { loadConfig } from '../config.js';
import { importScanRecords } from '../ingest/import.js';
import { mosquittoFiles, writeMosquittoFiles } from '../ingest/mosquitto-config.js';
import { readerUsername } from '../ingest/mqtt-credentials.js';
import type { Reader, ScanPoint } from '../ingest/readers-service.js';
import { ensureRawPartitions } from '../ingest/retention.js';
import { consumerLogin } from '../ingest/transport.js';
import { id, integer } from './args.js';
import { print } from './output.js';
import { EXIT_REFUSED, progressBar } from './progress.js';
import { withOrganization, withServices } from './with-services.js';

const scanPointJson = (p: ScanPoint) => ({
  id: p.id,
  reader_id: p.readerId,
  antenna: p.antenna,
  location_id: p.locationId,
  created_at: p.createdAt.toISOString(),
});

const readerJson = (r: Reader) => ({
  id: r.id,
  org_id: r.orgId,
  name: r.name,
  family: r.family,
  identity: r.identity,
  topic: r.topic,
  webhook: r.webhook,
  mqtt_username: readerUsername(r.id),
  mqtt_credentials: r.mqtt,
  created_at: r.createdAt.toISOString(),
  last_message_at: r.lastMessageAt?.toISOString() ?? null,
  good_reads: r.goodReads,
  bad_reads: r.badReads,
  unknown_reads: r.unknownReads,
  scan_points: r.scanPoints.map(scanPointJson),
});

const antennaText = (antenna: number | null) => (antenna === null ? 'all' : String(antenna));

/** `reader`, `scan-point` and `scans` commands: readers and scan points, and scan record imports. */
export function registerIngestCommands(program: Command): void {
  const reader = program.command('reader').description('fixed readers (devices) that report tag reads');
  reader
    .command('add')
    .description(
      'register a reader; prints its MQTT user name and password (and with --webhook its webhook secret) once',
    )
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .requiredOption('--family <family>', 'impinj-r700, zebra-fx, csl-cs463 or generic-json')
    .requiredOption('--identity <identity>', 'serial number, MAC address or hostname of the reader')
    .requiredOption('--topic <topic>', 'MQTT topic the reader publishes to')
    .option('--name <name>', 'display name (default: the identity)')
    .option('--webhook', 'issue a secret for the HTTP reader webhook')
    .option('--json', 'print JSON')
    .action(
      (opts: {
        org: number;
        family: string;
        identity: string;
        topic: string;
        name?: string;
        webhook?: boolean;
        json?: boolean;
      }) =>
        withOrganization(opts.org, async (s) => {
          const {
            reader: created,
            webhookSecret,
            mqtt,
          } = await s.readers.create(cliCaller(opts.org), {
            family: opts.family,
            identity: opts.identity,
            topic: opts.topic,
            name: opts.name,
            webhook: Boolean(opts.webhook),
          });
          const { scan_points: _points, ...shown } = readerJson(created);
          print(Boolean(opts.json), {
            ...shown,
            mqtt_password: mqtt.password,
            ...(webhookSecret ? { webhook_secret: webhookSecret } : {}),
          });
          if (!opts.json) {
            process.stderr.write(
              'the MQTT password (and webhook secret) is shown only now; it cannot be retrieved later\n',
            );
          }
        }),
    );
  reader
    .command('list')
    .description("list an organization's readers with their scan points and read counters")
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .option('--json', 'print JSON')
    .action((opts: { org: number; json?: boolean }) =>
      withOrganization(opts.org, async (s) => {
        const readers = await s.readers.list(opts.org);
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ data: readers.map(readerJson) })}\n`);
          return;
        }
        for (const r of readers) {
          const points =
            r.scanPoints.map((p) => `${antennaText(p.antenna)}->${p.locationId}`).join(' ') || '-';
          process.stdout.write(
            `${r.id}\t${r.family}\t${r.identity}\t${r.topic}\tgood=${r.goodReads} bad=${r.badReads} unknown=${r.unknownReads}\tscan points: ${points}\n`,
          );
        }
      }),
    );
  reader
    .command('mqtt-rotate')
    .description(
      'issue new MQTT credentials for a reader (printed once); its connection with the old ones is closed',
    )
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .requiredOption('--reader <id>', 'reader id', id('--reader'))
    .option('--json', 'print JSON')
    .action((opts: { org: number; reader: number; json?: boolean }) =>
      withOrganization(opts.org, async (s) => {
        const { mqtt } = await s.readers.rotateMqttCredentials(cliCaller(opts.org), opts.reader);
        print(Boolean(opts.json), {
          id: opts.reader,
          mqtt_username: mqtt.username,
          mqtt_password: mqtt.password,
        });
        if (!opts.json)
          process.stderr.write('the MQTT password is shown only now; it cannot be retrieved later\n');
      }),
    );
  reader
    .command('mqtt-revoke')
    .description("revoke a reader's MQTT credentials: it is disconnected and cannot log in until rotated")
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .requiredOption('--reader <id>', 'reader id', id('--reader'))
    .option('--json', 'print JSON')
    .action((opts: { org: number; reader: number; json?: boolean }) =>
      withOrganization(opts.org, async (s) => {
        await s.readers.revokeMqttCredentials(cliCaller(opts.org), opts.reader);
        print(Boolean(opts.json), { id: opts.reader, mqtt_credentials: false });
      }),
    );
  reader
    .command('delete')
    .description('delete a reader (its topic stops being consumed; its history stays)')
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .requiredOption('--reader <id>', 'reader id', id('--reader'))
    .option('--json', 'print JSON')
    .action((opts: { org: number; reader: number; json?: boolean }) =>
      withOrganization(opts.org, async (s) => {
        await s.readers.delete(cliCaller(opts.org), opts.reader);
        print(Boolean(opts.json), { id: opts.reader, deleted: true });
      }),
    );

  program
    .command('mosquitto-config')
    .description(
      "write Mosquitto's password file and ACL file from the registered readers (then SIGHUP mosquitto)",
    )
    .requiredOption('--out <dir>', 'directory for passwd and acl')
    .option('--json', 'print JSON')
    .action((opts: { out: string; json?: boolean }) =>
      withServices(async (s) => {
        // The consumer's login: the one the service itself uses (MQTT_URL or TAGTRAIL_MQTT_USERNAME/PASSWORD).
        const login = consumerLogin(loadConfig());
        if (!login.username || !login.password) {
          throw new Error(
            "the service's consumer login is needed: set TAGTRAIL_MQTT_USERNAME and TAGTRAIL_MQTT_PASSWORD (or MQTT_URL with them)",
          );
        }
        const readers = await s.readers.liveTopics();
        await writeMosquittoFiles(
          opts.out,
          mosquittoFiles(readers, { username: login.username, password: login.password }),
        );
        print(Boolean(opts.json), {
          out: opts.out,
          readers: readers.filter((r) => r.mqttPasswordHash).length,
          consumer: login.username,
        });
      }),
    );

  const point = program.command('scan-point').description('map a reader antenna to a location');
  point
    .command('add')
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .requiredOption('--reader <id>', 'reader id', id('--reader'))
    .requiredOption('--location <id>', 'location id', id('--location'))
    .option(
      '--antenna <port>',
      'antenna port (default: every port without a point of its own)',
      integer('--antenna', 0, 65535),
    )
    .option('--json', 'print JSON')
    .action((opts: { org: number; reader: number; location: number; antenna?: number; json?: boolean }) =>
      withOrganization(opts.org, async (s) => {
        const created = await s.readers.addScanPoint(cliCaller(opts.org), opts.reader, {
          locationId: opts.location,
          antenna: opts.antenna ?? null,
        });
        print(Boolean(opts.json), scanPointJson(created));
      }),
    );
  point
    .command('remove')
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .requiredOption('--reader <id>', 'reader id', id('--reader'))
    .option(
      '--antenna <port>',
      'antenna port (default: the point for every port)',
      integer('--antenna', 0, 65535),
    )
    .option('--json', 'print JSON')
    .action((opts: { org: number; reader: number; antenna?: number; json?: boolean }) =>
      withOrganization(opts.org, async (s) => {
        await s.readers.removeScanPoint(cliCaller(opts.org), opts.reader, opts.antenna ?? null);
        print(Boolean(opts.json), { reader_id: opts.reader, antenna: opts.antenna ?? null, removed: true });
      }),
    );

  const scans = program.command('scans').description('scan records from handhelds and files');
  scans
    .command('import [file]')
    .description(
      `apply NDJSON scan records from a file or standard input (- or no file); exits ${EXIT_REFUSED} when any line was refused`,
    )
    .requiredOption('--org <id>', 'organization id', id('--org'))
    .option('--json', 'print the summary as JSON')
    .action((file: string | undefined, opts: { org: number; json?: boolean }) =>
      withOrganization(opts.org, async (s) => {
        // The raw log rows of this import land in today's partition, which a running service would prepare.
        await ensureRawPartitions(s.internal.db);
        const input = file === undefined || file === '-' ? process.stdin : createReadStream(file);
        const opened = new Promise<void>((resolve, reject) => {
          if (input === process.stdin) return resolve();
          input.once('open', () => resolve());
          input.once('error', reject);
        });
        await opened;
        // A file's size makes a bar; standard input has none, so only the counts show.
        const size = input === process.stdin ? 0 : (await stat(file as string)).size;
        const bar = progressBar(process.stderr);
        const summary = await importScanRecords(s.ingest, opts.org, input, {
          onBatch: (p) =>
            bar.update(
              size > 0 ? p.bytes / size : null,
              `${p.lines} lines: ${p.applied} applied, ${p.unknown} unknown, ${p.invalid} invalid`,
            ),
        }).finally(() => bar.finish());
        const result = {
          applied: summary.applied,
          unknown: summary.unknown,
          invalid: summary.invalid,
          lines: summary.lines,
          errors: summary.errors,
        };
        if (opts.json) {
          process.stdout.write(`${JSON.stringify(result)}\n`);
        } else {
          print(false, {
            applied: result.applied,
            unknown: result.unknown,
            invalid: result.invalid,
            lines: result.lines,
          });
          for (const e of result.errors) process.stdout.write(`error: ${e}\n`);
        }
        // Refused lines are a failure a script must notice; the valid ones are applied all the same.
        if (result.invalid > 0) process.exitCode = EXIT_REFUSED;
      }),
    );
}
