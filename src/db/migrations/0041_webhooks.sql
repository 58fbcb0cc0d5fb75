-- Webhook endpoints and their deliveries (docs/events.md). An endpoint receives the
-- events of the types it names, optionally only those concerning a location subtree.
-- Its signing secret is kept as it is (the service must sign with it); it is shown to
-- the administrator once, when created.
CREATE TABLE webhook_endpoints (
  id bigint GENERATED ALWAYS AS IDENTITY (MINVALUE 1 MAXVALUE 2147483647) PRIMARY KEY,
  org_id bigint NOT NULL REFERENCES organizations (id),
  url text NOT NULL CHECK (length(url) BETWEEN 1 AND 2048),
  event_types text[] NOT NULL CHECK (cardinality(event_types) > 0),
  location_id bigint REFERENCES locations (id),
  secret text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now_ms(),
  deleted_at timestamptz,
  -- Set by the administrator (reason null) or after a day of failures (with the reason).
  disabled_at timestamptz,
  disabled_reason text,
  -- The first failure since the last success: a day of it disables the endpoint.
  failing_since timestamptz
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, id) WHERE deleted_at IS NULL;

-- One event for one endpoint. It stays pending (retried with backoff) until the receiver
-- answers 2xx or a day has passed. `subject` orders: a delivery is sent only when no
-- earlier event of its subject is pending for the endpoint.
CREATE TABLE webhook_deliveries (
  id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  org_id bigint NOT NULL,
  endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id),
  event_id bigint NOT NULL REFERENCES events (id),
  subject text NOT NULL,
  state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  next_attempt_at timestamptz NOT NULL DEFAULT now_ms(),
  -- A worker sending it holds it until then; past it (worker crashed) anyone may retry.
  leased_until timestamptz,
  created_at timestamptz NOT NULL DEFAULT now_ms(),
  last_attempt_at timestamptz,
  last_status integer,
  last_error text,
  last_duration_ms integer,
  delivered_at timestamptz,
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at, id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_queue ON webhook_deliveries (endpoint_id, subject, event_id) WHERE state = 'pending';
CREATE INDEX webhook_deliveries_log ON webhook_deliveries (org_id, endpoint_id, id);

ALTER TABLE webhook_endpoints ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON webhook_endpoints USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
ALTER TABLE webhook_deliveries ENABLE ROW LEVEL SECURITY;
CREATE POLICY org_isolation ON webhook_deliveries USING (org_id = current_org_id()) WITH CHECK (org_id = current_org_id());
GRANT SELECT, INSERT, UPDATE ON webhook_endpoints, webhook_deliveries TO tagtrail_app;
