/**
 * certwright-server run as its own process exactly as the CLI runs, plus the test-only opt-in no
 * variable reaches: the identity providers and ACME directories these tests start listen on
 * 127.0.0.1, which destinations an administrator names never reach otherwise
 * (docs/operations/outbound-connections.md).
 */
import { runCli } from '../../src/cli.js';

void runCli({ administratorLoopback: true });
