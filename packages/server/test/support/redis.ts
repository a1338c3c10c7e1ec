import { connect } from 'node:net';

/**
 * Why Redis tests are skipped, or undefined when 127.0.0.1:6379 answers. With
 * SVC_TEST_REQUIRE_SERVICES=1 an unreachable Redis is a failure instead.
 */
export function redisSkipReason(): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const socket = connect(6379, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(undefined);
    });
    socket.once('error', (error: Error) => {
      const reason = `Redis at 127.0.0.1:6379 unreachable: ${error.message}`;
      if (process.env.SVC_TEST_REQUIRE_SERVICES === '1') {
        reject(new Error(`SVC_TEST_REQUIRE_SERVICES=1 but ${reason}`));
      } else resolve(reason);
    });
  });
}
