-- Room on every page of stays for the next version of its rows. A stationary asset's
-- stay is updated in place on every read (last_seen_at, which no index holds); with free
-- space on its page the update is HOT: no index entries, and the old version is pruned on
-- the page instead of the row moving to a new one. The table then stays near the size of
-- its live rows however often they are read (docs/ingest.md, "Throughput and storage").
-- Applies to pages written from now on; existing pages fill up as before.
ALTER TABLE stays SET (fillfactor = 70);
