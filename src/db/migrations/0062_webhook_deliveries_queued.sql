-- A pending delivery behind an earlier pending one of its subject (for its endpoint) is
-- "queued": it cannot be sent before its head. The claim read each endpoint's due
-- deliveries in due order and left out those behind a head; while the heads were in
-- flight, every due delivery queued behind them was read again at every poll (about a
-- second per poll with 200,000 deliveries on 100 assets of one endpoint). The claim now
-- reads this index, which holds only the heads: the dispatcher queues a new delivery behind
-- a pending one, and recording a head's outcome (delivered, or given up) makes the next one
-- of its subject the head (src/events/deliveries-repository.ts, "subject heads").
ALTER TABLE webhook_deliveries ADD COLUMN queued boolean NOT NULL DEFAULT false;
UPDATE webhook_deliveries d SET queued = true
  WHERE d.state = 'pending' AND EXISTS (
    SELECT 1 FROM webhook_deliveries p
    WHERE p.endpoint_id = d.endpoint_id AND p.subject = d.subject AND p.state = 'pending'
      AND p.event_id < d.event_id);
CREATE INDEX webhook_deliveries_due_heads ON webhook_deliveries (endpoint_id, next_attempt_at, id)
  WHERE state = 'pending' AND NOT queued;
DROP INDEX webhook_deliveries_due_per_endpoint;
