import { Type } from '@sinclair/typebox';
import { PageQuery } from './common.js';

/** `q` of the /internal/ lists: a substring of the searchable text, no control characters. */
export const SearchQ = Type.String({
  maxLength: 255,
  pattern: '^[^\\x00-\\x1F\\x7F]*$',
  'x-message': 'must not contain control characters',
});

/** `limit`, `offset` and `q`. */
export const SearchPageQuery = Type.Object(
  { ...PageQuery, q: Type.Optional(SearchQ) },
  { additionalProperties: false },
);

export const PageOnlyQuery = Type.Object(PageQuery, { additionalProperties: false });
