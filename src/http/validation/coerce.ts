/**
 * Query strings and path segments arrive as text. This converts them by the route's
 * schema with strict rules (integers are plain decimal digits, booleans are exactly
 * `true`/`false`, repeatable parameters become arrays) and leaves anything else as it
 * came, so the validator reports it with the right field code.
 */
type Schema = { type?: unknown; items?: Schema; properties?: Record<string, Schema> };

type Converter = (value: unknown) => unknown;

const DECIMAL = /^-?\d+$/;

function scalarConverter(type: unknown): Converter {
  if (type === 'integer' || type === 'number') {
    return (v) => (typeof v === 'string' && DECIMAL.test(v) ? Number(v) : v);
  }
  if (type === 'boolean') {
    return (v) => (v === 'true' ? true : v === 'false' ? false : v);
  }
  return (v) => v;
}

function converterFor(schema: Schema): Converter {
  if (schema.type === 'array') {
    const item = scalarConverter(schema.items?.type);
    return (v) => (Array.isArray(v) ? v : [v]).map(item);
  }
  const scalar = scalarConverter(schema.type);
  // A scalar parameter sent more than once: the first value is the one honoured.
  return (v) => scalar(Array.isArray(v) ? v[0] : v);
}

export type ObjectCoercer = (input: Record<string, unknown>) => Record<string, unknown>;

export function buildCoercer(schema: Schema | undefined): ObjectCoercer | undefined {
  if (!schema?.properties) return undefined;
  const converters = new Map(Object.entries(schema.properties).map(([k, s]) => [k, converterFor(s)]));
  return (input) => {
    const out: Record<string, unknown> = {};
    for (const [key, value] of Object.entries(input)) {
      const convert = converters.get(key);
      const converted = convert ? convert(value) : value;
      // `out.__proto__ = v` would set the prototype (hiding the key from the unknown-key
      // check, or lending an array's methods as parameters); the key stays a plain property.
      if (key === '__proto__') {
        Object.defineProperty(out, key, {
          value: converted,
          enumerable: true,
          writable: true,
          configurable: true,
        });
      } else out[key] = converted;
    }
    return out;
  };
}
