import { Ajv } from 'ajv';
import { isSentinelInstant, parseRfc3339 } from '../timestamps.js';

/**
 * The validator for every route. No coercion and no removal of unknown keys: query and
 * path values are converted by our own strict rules first (coerce.ts), and an unknown key
 * must be reported, not dropped.
 */
export function createAjv(): Ajv {
  const ajv = new Ajv({
    allErrors: true,
    verbose: true,
    strict: false,
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: true,
  });
  // Documentation formats: the integer bounds and patterns do the checking.
  ajv.addFormat('int64', { type: 'number', validate: () => true });
  ajv.addFormat('uuid', /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i);
  ajv.addFormat('date-time', { type: 'string', validate: (s: string) => parseRfc3339(s) !== null });
  ajv.addKeyword({
    keyword: 'x-not-sentinel',
    type: 'string',
    schemaType: 'boolean',
    errors: true,
    validate: (enabled: boolean, data: string) => {
      if (!enabled) return true;
      const millis = parseRfc3339(data);
      return millis === null || !isSentinelInstant(millis);
    },
  });
  // A field of the read shape sent where the server sets it (a create's id or timestamps):
  // known, so not unknown_field, and refused as read_only once its value has the field's type.
  ajv.addKeyword({
    keyword: 'x-server-managed',
    schemaType: 'boolean',
    errors: true,
    validate: (enabled: boolean) => !enabled,
  });
  return ajv;
}
