import { describeEphemeralContract, describeQueueContract } from '@certwright/core/testing';
import { afterAll } from 'vitest';
import { RedisEphemeralStore, RedisQueue } from '../src/index.js';
import { deletePrefix, REDIS_URL, runPrefix, sleep, testRedis } from './support.js';

const { client, skip } = await testRedis();
const prefix = runPrefix('contracts');

afterAll(async () => {
  if (!client) return;
  await deletePrefix(client, prefix);
  client.destroy();
});

const connected = () => {
  if (!client) throw new Error(`Redis at ${REDIS_URL} is unreachable and SVC_TEST_REQUIRE_SERVICES=1`);
  return client;
};

// Redis keeps time itself, so the suites let time pass with real (short) sleeps.
describeEphemeralContract(
  'redis',
  async () => ({ store: new RedisEphemeralStore(connected(), { prefix }), advance: sleep }),
  { skip },
);

describeQueueContract(
  'redis',
  async () => ({ queue: new RedisQueue(connected(), { prefix }), now: () => new Date(), advance: sleep }),
  { skip },
);
