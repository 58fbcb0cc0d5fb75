/**
 * What bench/api.mjs sends: each case's requests and the mixed load's, in the job format of
 * bench/api-load.mjs.
 */

/** The cases ([id, label, requests]) and the mixed load, for `assets` seeded assets under `root`. */
export function apiRequests(assets, root) {
  // Ids 1..assets are the seeded assets; every 50th is soft-deleted (404): skipped.
  const live = [1, assets];
  const skip = 50;
  const getAsset = { method: 'GET', path: '/api/v1/assets/{id}', ids: live, skip };
  const listQ = { method: 'GET', path: '/api/v1/assets?q=ab1' };
  const post = {
    method: 'POST',
    path: '/api/v1/assets',
    body: { name: 'Bench {n}', metadata: { vendor: 'Acme' } },
  };
  const patch = {
    method: 'PATCH',
    path: '/api/v1/assets/{id}',
    ids: live,
    skip,
    contentType: 'application/merge-patch+json',
    body: { description: 'patched {n}' },
  };
  const descendants = { method: 'GET', path: `/api/v1/locations/${root}/descendants` };
  const report = { method: 'GET', path: '/api/v1/reports/asset-locations' };
  const cases = [
    ['get', 'GET /assets/{id}', [getAsset]],
    ['me', 'GET /orgs/me', [{ method: 'GET', path: '/api/v1/orgs/me' }]],
    ['list', 'GET /assets', [{ method: 'GET', path: '/api/v1/assets' }]],
    ['listq', 'GET /assets?q=ab1', [listQ]],
    [
      'listfilter',
      'GET /assets?is_active=false',
      [{ method: 'GET', path: '/api/v1/assets?is_active=false' }],
    ],
    ['descendants', 'GET /locations/{id}/descendants', [descendants]],
    ['locations', 'GET /locations', [{ method: 'GET', path: '/api/v1/locations' }]],
    ['report', 'GET /reports/asset-locations', [report]],
    ['history', 'GET /assets/{id}/history', [{ method: 'GET', path: '/api/v1/assets/10/history' }]],
    ['post', 'POST /assets (auto key)', [post]],
    ['patch', 'PATCH /assets/{id}', [patch]],
  ];
  const mix = [
    { ...listQ, weight: 40 },
    { ...getAsset, weight: 20 },
    { ...post, weight: 13 },
    { ...patch, weight: 12 },
    { ...descendants, weight: 8 },
    { ...report, weight: 7 },
  ];
  return { cases, mix };
}
