export {
  connectRedis,
  type RedisClient,
  type RedisConnectionOptions,
  toCertwrightError,
} from './connection.js';
export { RedisEphemeralStore, type RedisEphemeralStoreOptions } from './ephemeral.js';
export { RedisQueue, type RedisQueueOptions } from './queue.js';
