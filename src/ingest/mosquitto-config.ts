import { chmod, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { makeDirectories } from '../make-directories.js';
import { hashMqttPassword, readerUsername } from './mqtt-credentials.js';
import type { ReaderTopic } from './readers-repository.js';

/**
 * Mosquitto's password and ACL files for an external broker (docs/operations.md,
 * "External broker: Mosquitto"), from the registered readers: each reader with MQTT
 * credentials logs in as `reader-<id>` with its stored `$7$` hash and may write only to
 * its own topic; the service's consumer may read every topic.
 */
export function mosquittoFiles(
  readers: ReaderTopic[],
  consumer: { username: string; password: string },
): { passwd: string; acl: string } {
  const live = readers.filter((r) => r.mqttPasswordHash);
  const passwd = [
    `${consumer.username}:${hashMqttPassword(consumer.password)}`,
    ...live.map((r) => `${readerUsername(r.id)}:${r.mqttPasswordHash}`),
  ];
  const acl = [
    '# Written by tagtrail mosquitto-config; regenerate after readers change, then SIGHUP mosquitto.',
    `user ${consumer.username}`,
    'topic read #',
    '',
    ...live.flatMap((r) => [`user ${readerUsername(r.id)}`, `topic write ${r.topic}`, '']),
  ];
  return { passwd: `${passwd.join('\n')}\n`, acl: `${acl.join('\n')}\n` };
}

/** Writes `passwd` (mode 0600) and `acl` into `dir`, each replaced whole (rename) so a reload never reads half a file. */
export async function writeMosquittoFiles(
  dir: string,
  files: { passwd: string; acl: string },
): Promise<void> {
  await makeDirectories(dir);
  for (const [name, text, mode] of [
    ['passwd', files.passwd, 0o600],
    ['acl', files.acl, 0o644],
  ] as const) {
    const tmp = join(dir, `.${name}.tmp`);
    await writeFile(tmp, text, { mode });
    await chmod(tmp, mode);
    await rename(tmp, join(dir, name));
  }
}
