// One real instance in this process, as backplane/testing starts it for applications.
export { TEST_ENCRYPTION_KEY, startTestInstance } from '../../src/testing/instance.ts';
