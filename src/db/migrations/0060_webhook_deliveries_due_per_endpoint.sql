-- Due deliveries are chosen per endpoint (docs/events.md, "Isolation"). 0041's index
-- ordered every pending delivery by due time across all endpoints, and the claim took the
-- oldest 2,048 before leaving out those of disabled or removed endpoints and of endpoints
-- with no free send slot: a backlog of ~1,800 deliveries nobody could send (a receiver
-- that hangs, a disabled endpoint's waiting deliveries, a removed one's until the
-- retention) filled that window at every poll, and no other endpoint of any organization
-- was sent anything. The claim now starts from the endpoints that may send and reads, for
-- each, only the oldest due deliveries it has slots for: this index, ordered as each
-- endpoint's queue is taken. Nothing else read the old one.
CREATE INDEX webhook_deliveries_due_per_endpoint ON webhook_deliveries (endpoint_id, next_attempt_at, id)
  WHERE state = 'pending';
DROP INDEX webhook_deliveries_due;
