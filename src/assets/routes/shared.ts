/** What every assets route shares: the list path and the scopes. */
export const ASSETS_PATH = '/api/v1/assets';
export const ASSET_PATH = `${ASSETS_PATH}/:asset_id`;

/** Reads of one asset and every write: list filters there are invalid_context (list rule 6). */
export const READ_ONE = { scopes: ['assets:read'], listPath: ASSETS_PATH };
export const WRITE = { scopes: ['assets:write'], listPath: ASSETS_PATH };

export const OPENAPI_TAG = 'assets';
