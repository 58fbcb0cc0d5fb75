-- A reference from one organization's row to another's is refused by the database itself.
-- The foreign keys named the parent's id alone, and PostgreSQL checks a foreign key as the
-- table's owner, under no row-level security: a tag could point at another organization's
-- asset, a scan point at another's location, if a write path ever passed such an id. Each
-- write path looks its ids up under the organization's policy first (and the API's
-- cross-organization tests hold them to it); this makes it a rule of the schema instead.
-- Every reference between two tables of organizations now carries the org_id: the child's
-- (org_id, parent_id) must be the parent's (org_id, id).
--
-- The parents get a unique (org_id, id) for the keys to reference. Where an index on
-- (org_id, id) was there already it becomes the unique one, so writes keep the indexes
-- they had; locations, readers and webhook endpoints get one more small index.

-- Parents. A unique index's included columns do not take part in its uniqueness, so the
-- assets' covering index serves the foreign keys as it is.
CREATE UNIQUE INDEX users_org_id_id ON users (org_id, id);
DROP INDEX users_org_idx;

CREATE UNIQUE INDEX assets_tracking_unique ON assets (org_id, id) INCLUDE (external_key, valid_from, valid_to, deleted_at);
DROP INDEX assets_tracking;
ALTER INDEX assets_tracking_unique RENAME TO assets_tracking;

CREATE UNIQUE INDEX locations_org_id_id ON locations (org_id, id);

CREATE UNIQUE INDEX readers_org_id_id ON readers (org_id, id);

CREATE UNIQUE INDEX webhook_endpoints_org_id_id ON webhook_endpoints (org_id, id);

CREATE UNIQUE INDEX events_org_unique ON events (org_id, id);
DROP INDEX events_org;
ALTER INDEX events_org_unique RENAME TO events_org;

-- Children: each key replaced by its organization's, checked against the rows already
-- there. A database that holds a reference across organizations fails here, naming the
-- constraint: such a row is one organization's data showing in another's, to be looked
-- at, not carried on.
ALTER TABLE api_keys DROP CONSTRAINT api_keys_created_by_user_id_fkey,
  ADD CONSTRAINT api_keys_created_by_user_id_fkey FOREIGN KEY (org_id, created_by_user_id)
    REFERENCES users (org_id, id);
ALTER TABLE web_sessions DROP CONSTRAINT web_sessions_user_id_fkey,
  ADD CONSTRAINT web_sessions_user_id_fkey FOREIGN KEY (org_id, user_id)
    REFERENCES users (org_id, id);
ALTER TABLE invitations DROP CONSTRAINT invitations_accepted_user_id_fkey,
  ADD CONSTRAINT invitations_accepted_user_id_fkey FOREIGN KEY (org_id, accepted_user_id)
    REFERENCES users (org_id, id);
ALTER TABLE invitations DROP CONSTRAINT invitations_invited_by_user_id_fkey,
  ADD CONSTRAINT invitations_invited_by_user_id_fkey FOREIGN KEY (org_id, invited_by_user_id)
    REFERENCES users (org_id, id);
ALTER TABLE password_resets DROP CONSTRAINT password_resets_issued_by_user_id_fkey,
  ADD CONSTRAINT password_resets_issued_by_user_id_fkey FOREIGN KEY (org_id, issued_by_user_id)
    REFERENCES users (org_id, id);
ALTER TABLE password_resets DROP CONSTRAINT password_resets_user_id_fkey,
  ADD CONSTRAINT password_resets_user_id_fkey FOREIGN KEY (org_id, user_id)
    REFERENCES users (org_id, id);
ALTER TABLE user_totp DROP CONSTRAINT user_totp_user_id_fkey,
  ADD CONSTRAINT user_totp_user_id_fkey FOREIGN KEY (org_id, user_id)
    REFERENCES users (org_id, id) ON DELETE CASCADE;
ALTER TABLE locations DROP CONSTRAINT locations_parent_id_fkey,
  ADD CONSTRAINT locations_parent_id_fkey FOREIGN KEY (org_id, parent_id)
    REFERENCES locations (org_id, id);
ALTER TABLE tags DROP CONSTRAINT tags_asset_id_fkey,
  ADD CONSTRAINT tags_asset_id_fkey FOREIGN KEY (org_id, asset_id)
    REFERENCES assets (org_id, id);
ALTER TABLE tags DROP CONSTRAINT tags_location_id_fkey,
  ADD CONSTRAINT tags_location_id_fkey FOREIGN KEY (org_id, location_id)
    REFERENCES locations (org_id, id);
ALTER TABLE scan_points DROP CONSTRAINT scan_points_location_id_fkey,
  ADD CONSTRAINT scan_points_location_id_fkey FOREIGN KEY (org_id, location_id)
    REFERENCES locations (org_id, id);
ALTER TABLE scan_points DROP CONSTRAINT scan_points_reader_id_fkey,
  ADD CONSTRAINT scan_points_reader_id_fkey FOREIGN KEY (org_id, reader_id)
    REFERENCES readers (org_id, id);
ALTER TABLE webhook_endpoints DROP CONSTRAINT webhook_endpoints_location_id_fkey,
  ADD CONSTRAINT webhook_endpoints_location_id_fkey FOREIGN KEY (org_id, location_id)
    REFERENCES locations (org_id, id);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_endpoint_id_fkey,
  ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (org_id, endpoint_id)
    REFERENCES webhook_endpoints (org_id, id);
ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey,
  ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (org_id, event_id)
    REFERENCES events (org_id, id);
ALTER TABLE asset_positions DROP CONSTRAINT asset_positions_asset_id_fkey,
  ADD CONSTRAINT asset_positions_asset_id_fkey FOREIGN KEY (org_id, asset_id)
    REFERENCES assets (org_id, id) ON DELETE CASCADE;
