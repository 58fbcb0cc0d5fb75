import type { ErrorObject } from 'ajv';
import type { FieldCode, FieldError } from '../../errors.js';
import { INSTANT_RANGE, outOfRange } from '../timestamps.js';

/**
 * A query string reads `+` as a space, so an offset sent unescaped (`…T10:00:00+01:00`)
 * arrives as `…T10:00:00 01:00`; the hint says how to send it.
 */
const plusAsSpace = (value: unknown) =>
  typeof value === 'string' && /T\d{2}:\d{2}:\d{2}(\.\d+)? \d{2}:\d{2}$/.test(value)
    ? '; a + in a query string is read as a space: send it as %2B'
    : '';

export type HttpPart = 'body' | 'querystring' | 'params' | 'headers';

/** JSON type name of a value, as `params.received_type` reports it. */
export function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' || typeof value === 'bigint') return 'number';
  return typeof value;
}

/** A field's name from its keys: `['tags', 0, 'value']` → `tags[0].value` (an index is a number). */
export function fieldName(keys: readonly (string | number)[]): string {
  let out = '';
  for (const key of keys) out += typeof key === 'number' ? `[${key}]` : out === '' ? key : `.${key}`;
  return out;
}

/** `/tags/0/value` → `tags[0].value` */
function fieldPath(instancePath: string, child?: string): string {
  const parts = instancePath.split('/').slice(1);
  if (child !== undefined) parts.push(child);
  return fieldName(
    parts.map((raw) => {
      const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      return /^\d+$/.test(part) ? Number(part) : part;
    }),
  );
}

const TYPE_ARTICLE: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'an integer',
  boolean: 'a boolean',
  array: 'an array',
  object: 'an object',
  null: 'null',
};

function describeType(schemaType: unknown): string {
  const types = Array.isArray(schemaType) ? schemaType : [schemaType];
  return types.map((t) => TYPE_ARTICLE[String(t)] ?? String(t)).join(' or ');
}

function toFieldError(e: ErrorObject, part: HttpPart): FieldError {
  const parent = e.parentSchema as Record<string, unknown> | undefined;
  const custom = typeof parent?.['x-message'] === 'string' ? (parent['x-message'] as string) : undefined;
  const field = (code: FieldCode, name: string, message: string, params: Record<string, unknown> = {}) => ({
    field: name,
    code,
    message,
    params,
  });
  const name = fieldPath(e.instancePath);
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const missing = fieldPath(e.instancePath, String(p.missingProperty));
      return field('required', missing, `${missing} is required`);
    }
    case 'additionalProperties': {
      const extra = fieldPath(e.instancePath, String(p.additionalProperty));
      return part === 'querystring'
        ? field('unknown_field', extra, `unknown query parameter: ${extra}`)
        : field('unknown_field', extra, `${extra} is not a known field`);
    }
    case 'type': {
      if (e.data === null && parent?.['x-null-code'] === 'required') {
        return field('required', name, `${name} is required`);
      }
      const expectedRaw = Array.isArray(p.type) ? p.type : [p.type];
      const received = jsonType(e.data);
      if (expectedRaw.includes('integer') && received === 'number') {
        return field('invalid_value', name, `${name} must be an integer`, {
          expected_type: 'number',
          received_type: received,
        });
      }
      const expected = expectedRaw.map((t) => (t === 'integer' ? 'number' : t));
      const nullable = parent?.nullable === true;
      // A field of listed values (tag_type) lists them whatever was sent instead: API-SPEC Tag,
      // "Any other value returns 400, code invalid_value, with params.allowed_values".
      const listed = Array.isArray(parent?.enum) ? { allowed_values: parent.enum } : {};
      return field(
        'invalid_value',
        name,
        `${name} must be ${describeType(p.type)}${nullable ? ' or null' : ''}`,
        {
          ...listed,
          expected_type: expected.length === 1 ? expected[0] : expected,
          received_type: received,
        },
      );
    }
    case 'minLength':
      return field('too_short', name, `${name} must be at least ${p.limit} characters`, {
        min_length: p.limit,
      });
    case 'maxLength':
      return field('too_long', name, `${name} must be at most ${p.limit} characters`, {
        max_length: p.limit,
      });
    case 'minItems':
      return field('too_short', name, `${name} must have at least ${p.limit} items`, { min_items: p.limit });
    case 'maxItems':
      return field('too_long', name, `${name} must have at most ${p.limit} items`, { max_items: p.limit });
    case 'maximum':
      return field('too_large', name, `${name} must be at most ${p.limit}`, { max: p.limit });
    case 'minimum':
      return field('invalid_value', name, `${name} must be at least ${p.limit}`, { min: p.limit });
    case 'pattern':
      return field('invalid_value', name, custom ? `${name} ${custom}` : `${name} must match ${p.pattern}`, {
        pattern: p.pattern,
      });
    case 'enum':
      return field(
        'invalid_value',
        name,
        `${name} must be one of: ${(p.allowedValues as unknown[]).join(', ')}`,
        {
          allowed_values: p.allowedValues,
        },
      );
    case 'format':
      if (p.format === 'date-time' && typeof e.data === 'string' && outOfRange(e.data)) {
        const { min, max } = INSTANT_RANGE;
        return field('invalid_value', name, `${name} must be an instant from ${min} to ${max}`, {
          format: p.format,
          min,
          max,
        });
      }
      return field('invalid_value', name, `${name} must be an RFC 3339 timestamp${plusAsSpace(e.data)}`, {
        format: p.format,
      });
    case 'x-server-managed':
      return field(
        'read_only',
        name,
        `${name} ${custom ?? 'is set by the server; leave it out of this request'}`,
      );
    case 'x-not-sentinel':
      return field('invalid_value', name, `${name} must not be the zero instant or the Unix epoch`);
    case 'maxProperties':
      return field('too_long', name, `${name} must have at most ${p.limit} keys`, {
        max_properties: p.limit,
      });
    default:
      return field(
        'invalid_value',
        name,
        custom ? `${name} ${custom}` : `${name} ${e.message ?? 'is invalid'}`,
      );
  }
}

/**
 * A repeated query parameter is one parameter to the caller: `external_key[1]` is
 * reported as `external_key`, with the offending value's position in `params.index`.
 */
function asParameter(error: FieldError): FieldError {
  const m = /^([^[.]+)\[(\d+)\](.*)$/.exec(error.field);
  if (!m) return error;
  const [, name, index] = m;
  return {
    ...error,
    field: name!,
    message: error.message.replace(error.field, name!),
    params: { ...error.params, index: Number(index) },
  };
}

/**
 * A failure of decoding rather than of validation (API-SPEC Errors, Details 2): a value of
 * another JSON type than the field's (null aside, which is a value the field refuses), or a
 * timestamp that does not parse.
 */
function failsDecoding(error: FieldError): boolean {
  const { expected_type, received_type, format } = error.params as Record<string, unknown>;
  return (expected_type !== undefined && received_type !== 'null') || format === 'date-time';
}

/**
 * A body's field errors as the spec reports them: decoding and validation run in series,
 * so a body that fails to decode yields that single entry (the first such field), and only
 * a body that decodes has every validation failure listed.
 */
export function inSeries(fields: FieldError[]): FieldError[] {
  const failed = fields.find(failsDecoding);
  return failed ? [failed] : fields;
}

/** Ajv's errors as the spec's `fields[]`: one entry per offending field, first error wins. */
export function mapAjvErrors(errors: ErrorObject[], part: HttpPart): FieldError[] {
  const seen = new Map<string, FieldError>();
  // A server-managed field's refusal stands only when its value has the field's type.
  const ordered = [...errors].sort(
    (a, b) => Number(a.keyword === 'x-server-managed') - Number(b.keyword === 'x-server-managed'),
  );
  for (const e of ordered) {
    if (e.keyword === 'if' || e.keyword === 'anyOf' || e.keyword === 'oneOf' || e.keyword === 'not') continue;
    const mapped = part === 'querystring' ? asParameter(toFieldError(e, part)) : toFieldError(e, part);
    if (!seen.has(mapped.field)) seen.set(mapped.field, mapped);
  }
  return [...seen.values()];
}
