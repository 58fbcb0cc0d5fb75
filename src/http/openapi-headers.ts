/**
 * Response headers in the OpenAPI document, so generated clients type them: the service
 * sets them in hooks and error paths, not in the route schemas, so they are added to every
 * public operation's responses here (issue 9 item 8).
 */
type Json = Record<string, unknown>;

interface HeaderDeclaration {
  description: string;
  required: boolean;
  schema: Json;
}

const integer = { type: 'integer', minimum: 0 };

const EVERY_RESPONSE: Record<string, HeaderDeclaration> = {
  'x-request-id': {
    description: 'The id of this request; equals `error.request_id` on errors. Quote it in support requests.',
    required: true,
    schema: { type: 'string', format: 'uuid' },
  },
  'X-RateLimit-Limit': {
    description: "The rate-limit bucket's capacity. Absent only while the rate-limit store is unreachable.",
    required: false,
    schema: integer,
  },
  'X-RateLimit-Remaining': {
    description: 'Whole requests left in the bucket after this one.',
    required: false,
    schema: integer,
  },
  'X-RateLimit-Reset': {
    description: 'Seconds until the bucket is full again (not an epoch time).',
    required: false,
    schema: integer,
  },
};

const RETRY_AFTER: HeaderDeclaration = {
  description: 'Seconds to wait before retrying.',
  required: true,
  schema: { type: 'integer', minimum: 1 },
};

const BY_STATUS: Record<string, Record<string, HeaderDeclaration>> = {
  '201': {
    Location: {
      description: 'The path of the created resource.',
      required: true,
      schema: { type: 'string' },
    },
  },
  '405': {
    Allow: {
      description: 'The methods the path supports, comma-separated.',
      required: true,
      schema: { type: 'string' },
    },
  },
  '415': {
    'Accept-Encoding': {
      description:
        'On a body refused for its Content-Encoding: `identity`, the only coding accepted (send the body uncompressed).',
      required: false,
      schema: { type: 'string' },
    },
  },
  '429': { 'Retry-After': RETRY_AFTER },
  '503': { 'Retry-After': RETRY_AFTER },
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

/** The headers the document declares for one response status: what the tests hold responses to. */
export function declaredHeaders(status: string): Record<string, HeaderDeclaration> {
  return { ...EVERY_RESPONSE, ...BY_STATUS[status] };
}

/** Adds the response headers to every operation of the document (a @fastify/swagger transformObject). */
export function declareResponseHeaders<T extends Json>(doc: T): T {
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  for (const item of Object.values(paths)) {
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      const responses = op?.responses as Record<string, Json> | undefined;
      if (!responses) continue;
      for (const [status, response] of Object.entries(responses)) {
        // Copies: shared objects would become YAML anchors and aliases in openapi.yaml.
        response.headers = {
          ...(response.headers as Json | undefined),
          ...structuredClone(declaredHeaders(status)),
        };
      }
    }
  }
  return doc;
}
