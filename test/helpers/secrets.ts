import { SecretBox } from '../../src/secrets/secret-box.js';

/** The key the tests' services seal stored secrets with: every instance of a test shares it. */
export const TEST_SECRET_KEY = Buffer.alloc(32, 7);

/** The tests' box: secrets are sealed, as in a deployment with a key. */
export const TEST_SECRETS = new SecretBox([TEST_SECRET_KEY]);

/** TEST_SECRET_KEY as TAGTRAIL_SECRET_KEYS takes it: for services and CLI runs sharing a test's database. */
export const TEST_SECRET_KEYS = TEST_SECRET_KEY.toString('base64');
