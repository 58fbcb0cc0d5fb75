/**
 * The ingest benchmark's readers, in a child process of their own, so that the process the
 * service runs in spends its CPU on the service alone: with one read per message the
 * publishers' MQTT client work (packet generation, its store of unacknowledged messages,
 * the acknowledgements, their garbage) was about a third of the single process's CPU, and
 * moved with the service's figure. The bench adds the two for a figure comparable to the
 * earlier single-process runs, and shows the service's apart. Each reader is a
 * LeanPublisher (./lean-publisher.ts): the child shares the service's two cores, where
 * real readers are devices of their own.
 *
 * Protocol over the IPC channel (advanced serialization): the parent sends `start` with
 * the readers' logins and the messages; the child connects every reader and answers
 * `connected`; on `publish` it publishes them all and answers `published` with the CPU it
 * spent from `publish` to the last acknowledgement; on `end` it disconnects and exits.
 */
import { fork } from 'node:child_process';
import { nextMessage } from './child-messages.js';
import type { BenchReaders } from './harness.js';
import { LeanPublisher, type PreparedPublish, preparePublish } from './lean-publisher.js';
import { type AckLatency, publishAtRate, summarizeLatencies } from './paced-publish.js';

export interface BenchMessage {
  reader: number;
  payload: string;
}

type ToChild =
  | {
      type: 'start';
      mqttUrl: string;
      readers: BenchReaders;
      messages: BenchMessage[];
      window: number;
      /** Messages per second in all (./paced-publish.ts); null: as fast as the window lets. */
      rate: number | null;
    }
  | { type: 'publish' }
  | { type: 'end' };

type FromChild =
  | { type: 'connected' }
  | { type: 'published'; cpuMicros: number; latency: AckLatency | null }
  | { type: 'failed'; error: string };

/**
 * Publishes every message, each reader's in order: all at once, or with a window at most
 * `window` unacknowledged per reader (the next one goes when one is acknowledged).
 */
export async function publishAll<M extends { reader: number }>(
  messages: M[],
  window: number,
  publish: (m: M) => Promise<unknown>,
): Promise<void> {
  if (window === Number.POSITIVE_INFINITY) {
    await Promise.all(messages.map(publish));
    return;
  }
  const queues = new Map<number, M[]>();
  for (const m of messages) {
    const queue = queues.get(m.reader) ?? [];
    queue.push(m);
    queues.set(m.reader, queue);
  }
  // `window` workers per reader, each taking the reader's next message when its last is acknowledged.
  const workers = [...queues.values()].flatMap((queue) => {
    let next = 0;
    const worker = async () => {
      while (next < queue.length) await publish(queue[next++]!);
    };
    return Array.from({ length: Math.min(window, queue.length) }, worker);
  });
  await Promise.all(workers);
}

export interface Published {
  /** The publishers' CPU, in microseconds. */
  cpuMicros: number;
  /** With a rate: each message's wait from its due time to its acknowledgement. */
  latency: AckLatency | null;
}

export interface Publishers {
  /** Starts publishing; resolves once all is acknowledged. */
  publish(): Promise<Published>;
  /** Disconnects the readers and waits for the child to exit. */
  end(): Promise<void>;
}

/** Starts the child, connects the readers in it, and resolves once they are connected. */
export async function startPublishers(options: {
  mqttUrl: string;
  readers: BenchReaders;
  messages: BenchMessage[];
  window: number;
  rate: number | null;
}): Promise<Publishers> {
  // No --cpu-prof or --expose-gc of the parent: the service's process is the one measured.
  const child = fork(new URL(import.meta.url), ['--child'], { serialization: 'advanced', execArgv: [] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const next = () =>
    nextMessage<FromChild>(child, 'publishers').then((m) => {
      if (m.type === 'failed') throw new Error(`publishers: ${m.error}`);
      return m;
    });
  const send = (m: ToChild) => child.send(m);
  const connected = next();
  send({ type: 'start', ...options });
  try {
    await connected;
  } catch (err) {
    child.kill();
    throw err;
  }
  return {
    async publish() {
      const done = next();
      send({ type: 'publish' });
      const m = await done;
      return m.type === 'published'
        ? { cpuMicros: m.cpuMicros, latency: m.latency }
        : { cpuMicros: 0, latency: null };
    },
    async end() {
      if (child.connected) send({ type: 'end' });
      await exited;
    },
  };
}

/** The child's side. */
function child(): void {
  let publishers: LeanPublisher[] = [];
  let prepared: Array<{ reader: number; packet: PreparedPublish }> = [];
  let start: Extract<ToChild, { type: 'start' }> | undefined;
  const reply = (m: FromChild) => process.send?.(m);
  const fail = (err: unknown) =>
    reply({ type: 'failed', error: err instanceof Error ? err.message : String(err) });
  process.on('message', (m: ToChild) => {
    if (m.type === 'start') {
      start = m;
      // Encoded before the clock starts: a reader has its message ready when it publishes.
      prepared = m.messages.map((msg) => ({
        reader: msg.reader,
        packet: preparePublish(m.readers.topics[msg.reader]!, msg.payload),
      }));
      Promise.all(
        m.readers.logins.map((login) =>
          LeanPublisher.connect(m.mqttUrl, { ...login, clientId: `${login.username}-bench` }),
        ),
      ).then((connected) => {
        publishers = connected;
        reply({ type: 'connected' });
      }, fail);
    } else if (m.type === 'publish' && start) {
      const cpu = process.cpuUsage();
      const send = (msg: (typeof prepared)[number]) => publishers[msg.reader]!.publish(msg.packet);
      const published: Promise<AckLatency | null> =
        start.rate === null
          ? publishAll(prepared, start.window, send).then(() => null)
          : publishAtRate(prepared, start.rate, send).then(summarizeLatencies);
      published.then((latency) => {
        const used = process.cpuUsage(cpu);
        reply({ type: 'published', cpuMicros: used.user + used.system, latency });
      }, fail);
    } else if (m.type === 'end') {
      Promise.all(publishers.map((p) => p.end())).finally(() => process.exit(0));
    }
  });
  process.on('disconnect', () => process.exit(0));
}

if (process.argv.includes('--child') && process.send) child();
