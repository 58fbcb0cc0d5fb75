import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';

/** The Fastify instance the location route files register on (TypeBox provider). */
export type LocationApp = Parameters<FastifyPluginAsyncTypebox>[0];

export const LIST_PATH = '/api/v1/locations';
export const ITEM_PATH = '/api/v1/locations/:location_id';
export const READ = ['locations:read'];
export const WRITE = ['locations:write'];
export const TAGS = ['locations'];

/** Detail, write (the collection POST included) and tree routes: list filters sent to them name the list endpoint. */
export const detailConfig = (scopes: string[]) => ({ scopes, listPath: LIST_PATH });
