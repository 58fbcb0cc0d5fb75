/**
 * Stand-ins for the MQTT transports' collaborators (test/ingest/mqtt-consumer.test.ts and
 * broker-ingest.test.ts): the database side of ingest, and a reader directory of fixed topics.
 */
import type { ReaderRef } from '../../src/ingest/directory.js';
import { ReaderDirectory } from '../../src/ingest/directory.js';
import type { Settle } from '../../src/ingest/group-commit.js';
import { silentLogger } from '../../src/ingest/limiter.js';
import type { IngestOutcome } from '../../src/ingest/outcome.js';

const OK: IngestOutcome = { good: 1, bad: 0, unknown: 0, errors: [] };

/** A stand-in for IngestService.readerMessage that records calls and can fail or stall. */
export function fakeIngest(
  behaviour: (payload: string, call: number) => Promise<void> | void = () => undefined,
) {
  const calls: string[] = [];
  const stored: string[] = [];
  let active = 0;
  let maxActive = 0;
  return {
    calls,
    stored,
    get maxActive() {
      return maxActive;
    },
    async readerMessage(_reader: ReaderRef, payload: Buffer | string): Promise<IngestOutcome> {
      const text = payload.toString();
      calls.push(text);
      active++;
      maxActive = Math.max(maxActive, active);
      try {
        await behaviour(text, calls.filter((c) => c === text).length);
      } finally {
        active--;
      }
      stored.push(text);
      return OK;
    },
    takeReaderMessage(
      reader: ReaderRef,
      payload: Buffer | string,
      _source: string,
      _receivedAt: number,
      settle: Settle<IngestOutcome>,
    ): void {
      this.readerMessage(reader, payload).then(
        (outcome) => settle.resolve(outcome),
        (err) => settle.reject(err),
      );
    },
  };
}

export type FakeIngest = ReturnType<typeof fakeIngest>;

export async function directoryOf(topics: string[]) {
  const directory = new ReaderDirectory({
    source: async () =>
      topics.map((topic, i) => ({ id: i + 1, orgId: 1, family: 'generic-json' as const, topic })),
    logger: silentLogger,
  });
  await directory.start();
  return directory;
}
