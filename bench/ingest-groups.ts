/**
 * How the service grouped a run's messages into transactions, from its own /metrics (the
 * commit batch histograms, docs/metrics.md): read before and after the measured window.
 * A backlog's groups hold many reads of each asset, a steady stream's few, and the wait a
 * message spends inside the service (receipt to commit) tells its queue from the wait
 * before it reached the service (the publishers, the sockets, the broker).
 */

/** Sums of the series the bench reads, over every label set. */
export interface IngestTotals {
  transactions: number;
  transactionSeconds: number;
  bookedMessages: number;
  placedReads: number;
  storedMessages: number;
  messageSeconds: number;
}

export interface GroupFigures {
  transactions: number;
  /** Per committed transaction: reads placed, messages booked, and its duration in ms. */
  readsPerTransaction: number;
  messagesPerTransaction: number;
  transactionMs: number;
  /** Mean time from a message's receipt by the service to the commit that holds it, in ms. */
  messageWaitMs: number;
}

const SERIES: Record<keyof IngestTotals, string> = {
  transactions: 'tagtrail_ingest_batch_reads_count',
  transactionSeconds: 'tagtrail_ingest_batch_duration_seconds_sum',
  bookedMessages: 'tagtrail_ingest_batch_messages_sum',
  placedReads: 'tagtrail_ingest_batch_reads_sum',
  storedMessages: 'tagtrail_ingest_message_latency_seconds_count',
  messageSeconds: 'tagtrail_ingest_message_latency_seconds_sum',
};

/** The sums out of a Prometheus text exposition (each sample line: name, labels, value). */
export function ingestTotals(exposition: string): IngestTotals {
  const byName = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    if (line.startsWith('#') || line.trim() === '') continue;
    const name = line.match(/^[a-zA-Z_:][a-zA-Z0-9_:]*/)?.[0];
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    if (name && Number.isFinite(value)) byName.set(name, (byName.get(name) ?? 0) + value);
  }
  const totals = {} as IngestTotals;
  for (const [key, series] of Object.entries(SERIES) as Array<[keyof IngestTotals, string]>) {
    totals[key] = byName.get(series) ?? 0;
  }
  return totals;
}

/** What happened between two readings of the totals. */
export function groupFigures(before: IngestTotals, after: IngestTotals): GroupFigures {
  const d = (key: keyof IngestTotals) => after[key] - before[key];
  const per = (value: number, count: number, scale = 1) =>
    count === 0 ? 0 : Math.round((value / count) * scale * 10) / 10;
  const transactions = d('transactions');
  return {
    transactions,
    readsPerTransaction: per(d('placedReads'), transactions),
    messagesPerTransaction: per(d('bookedMessages'), transactions),
    transactionMs: per(d('transactionSeconds'), transactions, 1000),
    messageWaitMs: per(d('messageSeconds'), d('storedMessages'), 1000),
  };
}

/** Reads the service's /metrics with its token. */
export async function scrapeIngestTotals(url: string, token: string): Promise<IngestTotals> {
  const res = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
  if (!res.ok) throw new Error(`GET /metrics answered ${res.status}`);
  return ingestTotals(await res.text());
}
