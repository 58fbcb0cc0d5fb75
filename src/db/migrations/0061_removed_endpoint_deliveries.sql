-- A removed webhook endpoint's pending deliveries are never sent, yet they were kept until
-- the retention (30 days by default): rows that took room in the pending indexes and that
-- the dispatcher's subject-order lookups and the retention kept reading. Removing an
-- endpoint now deletes them in its transaction (WebhookService.remove), so the app role
-- may delete deliveries (row-level security still keeps it to its organization). The ones
-- removed endpoints left before this migration go now.
GRANT DELETE ON webhook_deliveries TO tagtrail_app;
DELETE FROM webhook_deliveries d USING webhook_endpoints w
  WHERE w.id = d.endpoint_id AND w.deleted_at IS NOT NULL AND d.state = 'pending';
