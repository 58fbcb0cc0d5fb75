import fc from 'fast-check';

/**
 * Requests generated from the OpenAPI document (test/foundation/openapi-fuzz.test.ts). Most
 * follow an operation's schemas, near their bounds, so that the routes' own rules and the
 * database are reached; the others break one thing the way a client does (a wrong type, a
 * missing or unknown field, a null, text where a number goes, characters a pattern
 * refuses, a repeated or bare parameter), or send any JSON at all.
 */

export type Schema = {
  $ref?: string;
  type?: string;
  nullable?: boolean;
  enum?: unknown[];
  pattern?: string;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  format?: string;
  items?: Schema;
  properties?: Record<string, Schema>;
  required?: string[];
  anyOf?: Schema[];
  oneOf?: Schema[];
  readOnly?: boolean;
  const?: unknown;
};

export interface Parameter {
  name: string;
  in: 'query' | 'path' | 'header';
  required?: boolean;
  schema: Schema;
}

type Resolve = (schema: Schema) => Schema;

/** What requests are generated against: how `$ref`s resolve, and ids of records that exist. */
export interface Generation {
  resolve: Resolve;
  ids: readonly number[];
}

/** Resolves `#/components/schemas/X` references against the document. */
export function resolver(doc: { components?: { schemas?: Record<string, Schema> } }): Resolve {
  return (schema) => {
    if (!schema.$ref) return schema;
    const name = schema.$ref.replace('#/components/schemas/', '');
    const target = doc.components?.schemas?.[name];
    if (!target) throw new Error(`unresolved ${schema.$ref}`);
    return target;
  };
}

/** Text a client may send anywhere: empty, spaces, control characters, other scripts, long. */
const oddText = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    ' a ',
    '\u0000',
    'a\nb',
    '\t',
    'ü',
    '𝒳',
    '💡',
    '\u200b',
    '%',
    '%00',
    "'; --",
    'null',
  ),
  fc.string({ maxLength: 20 }),
  fc.string({ unit: 'grapheme', maxLength: 10 }),
  fc.nat({ max: 3000 }).map((n) => 'x'.repeat(n)),
);

/** Numbers at and beyond the bounds an id or a page parameter has. */
const edgeNumbers = fc.constantFrom(
  0,
  -1,
  1,
  2,
  50,
  100,
  101,
  1000,
  2147483647,
  2147483648,
  2 ** 53,
  1.5,
  -0.0,
);

/** Any value in place of one the schema describes. */
const brokenValue: fc.Arbitrary<unknown> = fc.oneof(
  oddText,
  edgeNumbers,
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 2 }),
);

function validString(s: Schema): fc.Arbitrary<string> {
  if (s.enum) return fc.constantFrom(...(s.enum as string[]));
  if (s.format === 'date-time') {
    return fc
      .date({
        min: new Date('1971-01-01T00:00:00Z'),
        max: new Date('2099-01-01T00:00:00Z'),
        noInvalidDate: true,
      })
      .map((d) => d.toISOString());
  }
  const max = s.maxLength ?? 255;
  if (s.pattern) {
    const pattern = fc.stringMatching(new RegExp(s.pattern));
    return fc.oneof(
      // Not filtered to the length bounds: a pattern's strings are mostly short, and waiting
      // for one of a minimum length can take minutes; one out of bounds is a 400 to check too.
      pattern.map((v) => v.slice(0, max)),
      // At the length limit (letters and digits satisfy every pattern of the document).
      fc.constant('K'.repeat(max)),
    );
  }
  return fc.string({ minLength: s.minLength ?? 0, maxLength: Math.min(max, 40) });
}

/** Fields and parameters named `*_id` mostly take one of `ids`. */
function integerFor(s: Schema, name: string, ids: readonly number[]): fc.Arbitrary<number> {
  const any = fc.integer({ min: s.minimum ?? -1000, max: Math.min(s.maximum ?? 1000, 1000) });
  if (!name.endsWith('_id') || ids.length === 0) return any;
  return fc.oneof({ arbitrary: fc.constantFrom(...ids), weight: 4 }, { arbitrary: any, weight: 1 });
}

/** A JSON value valid for `schema` (the routes' own rules, such as a window's order, may still refuse it). */
function validValue(schema: Schema, g: Generation, depth = 0, name = ''): fc.Arbitrary<unknown> {
  const s = g.resolve(schema);
  if (s.const !== undefined) return fc.constant(s.const);
  const branches = s.anyOf ?? s.oneOf;
  if (branches) return fc.oneof(...branches.map((b) => validValue(b, g, depth + 1, name)));
  const plain = (() => {
    switch (s.type) {
      case 'string':
        return validString(s);
      case 'integer':
        return integerFor(s, name, g.ids);
      case 'number':
        return fc.double({ noNaN: true, noDefaultInfinity: true });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array':
        return depth > 3
          ? fc.constant([])
          : fc.array(validValue(s.items ?? {}, g, depth + 1), { maxLength: 3 });
      case 'object':
        return depth > 3 ? fc.constant({}) : validObject(s, g, depth);
      default:
        return fc.jsonValue({ maxDepth: 2 });
    }
  })();
  return s.nullable
    ? fc.oneof({ arbitrary: plain, weight: 4 }, { arbitrary: fc.constant(null), weight: 1 })
    : plain;
}

function validObject(s: Schema, g: Generation, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const properties = Object.entries(s.properties ?? {}).filter(([, p]) => !g.resolve(p).readOnly);
  if (properties.length === 0) {
    return fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), fc.jsonValue({ maxDepth: 2 }), {
      maxKeys: 4,
    });
  }
  const required = new Set(s.required ?? []);
  // Optional properties now and then, the server's own (sent back unchanged, or refused) rarely,
  // so that most bodies the schema allows are also ones the route takes.
  const fields = properties.map(([name, p]) =>
    fc.tuple(
      fc
        .noBias(fc.integer({ min: 0, max: 99 }))
        .map((n) => required.has(name) || n < (SERVER_FIELDS.has(name) ? 5 : 35)),
      validValue(p, g, depth + 1, name),
    ),
  );
  return fc.tuple(...fields).map((chosen) => {
    const body: Record<string, unknown> = {};
    chosen.forEach(([send, value], i) => {
      if (send) body[properties[i]![0]] = value;
    });
    return body;
  });
}

/** Fields a record's answer carries that a client sends back only unchanged. */
const SERVER_FIELDS = new Set([
  'id',
  'created_at',
  'updated_at',
  'deleted_at',
  'tags',
  'external_key',
  'location_id',
  'location_external_key',
  'parent_external_key',
]);

/** A request body: valid, valid but for one thing, or any JSON. */
export function bodyFor(schema: Schema, g: Generation): fc.Arbitrary<unknown> {
  const s = g.resolve(schema);
  const valid = validValue(s, g);
  const names = Object.keys(s.properties ?? {});
  if (s.type !== 'object' || names.length === 0) {
    return fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: brokenValue, weight: 1 });
  }
  const oneBroken = fc
    .tuple(
      valid,
      fc.constantFrom(...names, 'unknown_field', 'id', 'created_at', 'Name'),
      brokenValue,
      fc.boolean(),
    )
    .map(([body, name, value, drop]) => {
      const copy = { ...(body as Record<string, unknown>) };
      if (drop && name in copy) delete copy[name];
      else copy[name] = name in (s.properties ?? {}) && g.resolve(s.properties![name]!).readOnly ? 1 : value;
      return copy;
    });
  return fc.oneof(
    { arbitrary: valid, weight: 4 },
    { arbitrary: oneBroken, weight: 3 },
    { arbitrary: fc.jsonValue({ maxDepth: 2 }), weight: 1 },
  );
}

/** A parameter's value as text, valid for its schema. */
function validText(schema: Schema, name: string, ids: readonly number[]): fc.Arbitrary<string> {
  if (schema.const !== undefined) return fc.constant(String(schema.const));
  const branches = schema.anyOf ?? schema.oneOf;
  if (branches) return fc.oneof(...branches.map((b) => validText(b, name, ids)));
  switch (schema.type) {
    case 'integer':
      return integerFor({ minimum: 0, ...schema }, name, ids).map(String);
    case 'boolean':
      return fc.constantFrom('true', 'false');
    case 'string':
      return validString(schema);
    default:
      return fc.string({ maxLength: 10 });
  }
}

/** Text for a parameter that is near its schema or breaks it. */
const brokenText = fc.oneof(
  oddText,
  edgeNumbers.map(String),
  fc.constantFrom('1e2', '0x10', '+5', '05', ' 5', '5 ', '1,2', 'TRUE', 'yes', '1', '0'),
);

/**
 * A query string for the operation's parameters: some of them with valid values, or
 * that with one thing broken (a value, an unknown or misspelt key, a bare key, a
 * single-valued parameter repeated).
 */
export function queryFor(parameters: Parameter[], g: Generation): fc.Arbitrary<string> {
  const query = parameters.filter((p) => p.in === 'query');
  const groups = query.map((p) => {
    const schema = g.resolve(p.schema);
    const many = schema.type === 'array';
    const item = many ? g.resolve(schema.items ?? {}) : schema;
    return fc
      .option(fc.array(validText(item, p.name, g.ids), { minLength: 1, maxLength: many ? 3 : 1 }), {
        freq: 2,
      })
      .map((values) => (values ?? []).map((v) => [p.name, v] as [string, string]));
  });
  const names = query.length > 0 ? query.map((p) => p.name) : ['limit'];
  const breakage = fc.oneof(
    fc.tuple(fc.constant('value'), fc.constantFrom(...names), brokenText),
    fc.tuple(
      fc.constant('unknown'),
      fc.constantFrom('unknown', 'LIMIT', 'limit[]', '', 'q '),
      fc.constant('1'),
    ),
    fc.tuple(fc.constant('bare'), fc.constantFrom(...names), fc.constant('')),
    fc.tuple(fc.constant('repeat'), fc.constantFrom(...names), fc.constant('1')),
  );
  return fc
    .tuple(
      fc.tuple(...groups),
      fc.oneof({ arbitrary: fc.constant(null), weight: 2 }, { arbitrary: breakage, weight: 1 }),
    )
    .map(([chosen, broken]) => {
      const pairs = chosen.flat();
      const encode = ([k, v]: [string, string]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`;
      const parts = pairs.map(encode);
      if (broken) {
        const [kind, name, value] = broken;
        if (kind === 'value') parts.push(encode([name, value]));
        else if (kind === 'unknown') parts.push(encode([name, value]));
        else if (kind === 'bare') parts.push(encodeURIComponent(name));
        else parts.push(encode([name, value]), encode([name, value]));
      }
      return parts.length === 0 ? '' : `?${parts.join('&')}`;
    });
}

/** A path parameter: an id that exists, one that does not, or text that is no id at all. */
export function pathValue(existing: readonly number[]): fc.Arbitrary<string> {
  return fc.oneof(
    { arbitrary: fc.constantFrom(...existing).map(String), weight: 8 },
    { arbitrary: edgeNumbers.map(String), weight: 2 },
    { arbitrary: fc.constantFrom('abc', '1.0', '1e3', '-', '%20', '00001', '+1', 'null', '1;2'), weight: 1 },
    { arbitrary: fc.string({ minLength: 1, maxLength: 12 }).map(encodeURIComponent), weight: 1 },
  );
}

/** The query parameters a JSON schema of a query string (a route's `querystring`) describes. */
export function parametersOf(querystring: Schema | undefined): Parameter[] {
  return Object.entries(querystring?.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    schema,
  }));
}
