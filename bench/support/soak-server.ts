/**
 * certwright-server for `bench/soak.ts`, run as its own process exactly as the CLI runs
 * (configuration from SVC_* variables, signals, drain), plus the test-only webhook opt-in no
 * variable reaches: the soak's webhook receiver listens on 127.0.0.1 under the name
 * `receiver.test`, and an allowlist entry naming 127.0.0.1 admits it
 * (docs/notifications/webhooks.md, "Private-address protection").
 */
import { staticResolver } from '../../packages/core/src/net/index.js';
import { runCli } from '../../packages/server/src/cli.js';

void runCli({
  webhooks: { loopback: 'when-listed', resolve: staticResolver({ 'receiver.test': '127.0.0.1' }) },
});
