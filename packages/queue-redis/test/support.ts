import { randomUUID } from 'node:crypto';
import { connectRedis, type RedisClient } from '../src/index.js';

export const REDIS_URL = process.env.SVC_TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

/**
 * Connects to the test Redis, or explains why the suites will be skipped. With
 * SVC_TEST_REQUIRE_SERVICES=1 (CI) an unreachable Redis is never a reason to skip: the suites
 * run and fail.
 */
export async function testRedis(): Promise<{ client?: RedisClient; skip?: string }> {
  try {
    return { client: await connectRedis({ url: REDIS_URL, connectTimeoutMs: 2_000 }) };
  } catch (error) {
    if (process.env.SVC_TEST_REQUIRE_SERVICES === '1') return {};
    return { skip: `Redis at ${REDIS_URL} is unreachable (${(error as Error).message})` };
  }
}

/** A key prefix unique to this test run, so runs sharing one Redis never see each other's keys. */
export const runPrefix = (label: string) => `certwright-test:${label}:${randomUUID()}:`;

/** Deletes every key under the prefix (SCAN, never KEYS, so a shared Redis is not blocked). */
export async function deletePrefix(client: RedisClient, prefix: string): Promise<void> {
  const escaped = prefix.replace(/[*?[\]\\]/g, '\\$&');
  for await (const keys of client.scanIterator({ MATCH: `${escaped}*`, COUNT: 500 })) {
    if (keys.length > 0) await client.del(keys);
  }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
