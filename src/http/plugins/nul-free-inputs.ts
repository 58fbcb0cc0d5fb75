import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type FieldError, validationError } from '../../errors.js';
import { fieldName } from '../validation/ajv-errors.js';

const NUL = '\u0000';

/** A value found in a request part, with how to name it: its parent and its key there. */
interface Node {
  value: unknown;
  parent: Node | undefined;
  key: string | number | undefined;
}

/** `items[0].tag` for the path of keys from the part's root, as ajv-errors names fields. */
function nameOf(node: Node): string {
  const keys: (string | number)[] = [];
  for (let n: Node | undefined = node; n?.key !== undefined; n = n.parent) keys.push(n.key);
  return fieldName(keys.reverse());
}

/** JSON's containers only: a streamed upload's body is a stream, and none of its business. */
const isPlainObject = (value: unknown): value is Record<string, unknown> => {
  if (typeof value !== 'object' || value === null) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
};

/**
 * One field error per string (or object key) of `root` that holds a NUL, in document
 * order. Walks with a stack, not recursion: a body may nest deeper than the call stack.
 */
export function nulFields(root: unknown, part: 'body' | 'querystring' | 'params'): FieldError[] {
  const fields: FieldError[] = [];
  const stack: Node[] = [{ value: root, parent: undefined, key: undefined }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    const { value } = node;
    if (typeof value === 'string') {
      if (value.includes(NUL)) fields.push(entry(node, part, 'must not contain U+0000'));
      continue;
    }
    const children: Node[] = [];
    if (Array.isArray(value)) {
      value.forEach((child, i) => {
        children.push({ value: child, parent: node, key: i });
      });
    } else if (isPlainObject(value)) {
      for (const [key, child] of Object.entries(value)) {
        const at = { value: child, parent: node, key };
        if (key.includes(NUL)) fields.push(entry(at, part, 'must not contain U+0000 in its name'));
        else children.push(at);
      }
    }
    // Reversed onto the stack, so they come off it in document order.
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]!);
  }
  return fields;
}

function entry(node: Node, part: string, rule: string): FieldError {
  // A repeated query parameter is one parameter to the caller, as ajv-errors reports it.
  if (part === 'querystring' && typeof node.key === 'number' && node.parent?.parent?.key === undefined) {
    const name = String(node.parent?.key);
    return { field: name, code: 'invalid_value', message: `${name} ${rule}`, params: { index: node.key } };
  }
  const name = nameOf(node);
  return { field: name, code: 'invalid_value', message: `${name} ${rule}`, params: {} };
}

const onWebApp = (request: FastifyRequest) => {
  const { config } = request.routeOptions;
  return config.internal === true && !config.methodNotAllowed;
};

/**
 * PostgreSQL cannot store U+0000 in text, so a NUL in any string an /internal/ route takes
 * would fail in the database (a 500, or a dropped connection read as an outage) instead of
 * as the caller's mistake. Checked here for the body, the query and the path of every such
 * route, whatever its schema says, so a route added later is covered without remembering
 * it. The public API keeps its per-field schema rules (API-SPEC), so it is left alone.
 */
export function registerNulFreeInputs(app: FastifyInstance): void {
  app.addHook('preValidation', (request, _reply, done) => {
    if (!onWebApp(request)) return done();
    const fields = [
      ...nulFields(request.params, 'params'),
      ...nulFields(request.query, 'querystring'),
      ...nulFields(request.body, 'body'),
    ];
    done(fields.length > 0 ? validationError(fields) : undefined);
  });
}
