import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import { authRoutes } from '../accounts/internal-routes/auth.js';
import { sessionRoutes } from '../accounts/internal-routes/session.js';
import { assetViewRoutes } from '../assets/internal-routes/views.js';
import { assetWriteRoutes } from '../assets/internal-routes/writes.js';
import { handheldRoutes } from '../ingest/internal-routes/handheld.js';
import { readerRoutes } from '../ingest/internal-routes/readers.js';
import type { InternalServices } from '../internal-services.js';
import { keyRoutes } from '../keys/internal-routes/keys.js';
import { locationViewRoutes } from '../locations/internal-routes/views.js';
import { reportRoutes } from '../tracking/internal-routes/report.js';
import { registerInternalAuth } from './plugins/internal-auth.js';

/**
 * The web app's back end (docs/web-app.md): the session hook on the root instance, so it
 * sees every /internal/ route registered after it. Call before the routes are registered.
 */
export function registerInternalSurface(app: FastifyInstance, services: InternalServices): void {
  registerInternalAuth(app, services);
}

/** Every /internal/ route; registered with the resource routes. */
export const internalRoutes =
  (s: InternalServices): FastifyPluginAsync =>
  async (app) => {
    for (const routes of [
      authRoutes,
      sessionRoutes,
      keyRoutes,
      readerRoutes,
      handheldRoutes,
      locationViewRoutes,
      assetViewRoutes,
      assetWriteRoutes,
      reportRoutes,
    ]) {
      await app.register(routes(s));
    }
  };
