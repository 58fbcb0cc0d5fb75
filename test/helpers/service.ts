import { loadConfig } from '../../src/config.js';
import { type RunningService, startService } from '../../src/runtime.js';
import { TEST_SECRET_KEYS } from './secrets.js';

/**
 * The whole service in the test's process, as the suites run it: stored secrets sealed with
 * the tests' key (so the test's own services and CLI runs on the same database read them),
 * HTTP and the embedded broker on free loopback ports so that suites running at once never
 * collide, and no log output. `env` adds settings and wins over these; a setting given as
 * undefined is left unset (loadConfig skips it); with MQTT_URL the embedded broker does not
 * start and TAGTRAIL_MQTT_PORT goes unused. There is no database default: each suite
 * passes its own DATABASE_URL, or none for the embedded database in TAGTRAIL_DATA_DIR.
 * The caller stops the service. Not async on purpose: a setting loadConfig refuses throws at
 * the call, so a test expecting the start itself to reject cannot pass on a configuration error.
 */
export function startTestService(env: NodeJS.ProcessEnv = {}): Promise<RunningService> {
  return startService(
    loadConfig({
      TAGTRAIL_SECRET_KEYS: TEST_SECRET_KEYS,
      HOST: '127.0.0.1',
      PORT: '0',
      TAGTRAIL_MQTT_PORT: '0',
      LOG_LEVEL: 'silent',
      ...env,
    }),
  );
}
