-- The trigram indexes behind `q` (assets_search, assets_report_search, locations_search)
-- are GIN with fast update: a write adds its entries to an unsorted pending list, which
-- every search reads through in full until a vacuum or a list past gin_pending_list_limit
-- (4 MB by default, about 500 pages) merges it into the index. Under the mixed load of
-- issue 11 (a quarter of the requests writes an asset) the list grew by about 130 entries a
-- second and was past 1,300 entries (165 pages) within ten seconds, so each GET /assets?q=
-- read 165 pages more than its own matches and ran 2.8 times as long as the same search on
-- a settled table. At 64 kB the writer that fills the list merges it (a batch of about 60
-- entries, still far cheaper than fast update off, which puts each row's trigrams into the
-- tree one by one), and a search reads at most 8 pending pages. Measured in docs/performance.md
-- (step 20).
ALTER INDEX assets_search SET (gin_pending_list_limit = 64);
ALTER INDEX assets_report_search SET (gin_pending_list_limit = 64);
ALTER INDEX locations_search SET (gin_pending_list_limit = 64);
