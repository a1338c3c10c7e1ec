import { createRequire } from 'node:module';
import { Agent } from 'node:https';
import { createHandler } from '../packages/api/src/index.js';
import { createServices, SYSTEM_ACTOR, silentLogger, systemClock } from '../packages/core/src/index.js';
import { createCertificationRequest, generateKeyPair } from '../packages/core/src/pki/index.js';
import { openBenchStorage } from './support/engines.js';
import { listenTls } from './support/tls-listener.js';
import { AcmeBenchClient } from './support/acme-client.js';
const pg = createRequire(new URL('../packages/storage-pg/package.json', import.meta.url))('pg');
const log: string[] = [];
const orig = pg.Client.prototype.query;
pg.Client.prototype.query = function (q: any, ...rest: any[]) {
  log.push(typeof q === 'string' ? q : q?.text ?? String(q));
  return orig.call(this, q, ...rest);
};
const { s: storage, cleanup } = await openBenchStorage('postgres', 'cw-bench-acmetrace');
await storage.migrate();
const services = createServices({ storage, clock: systemClock, logger: silentLogger });
await services.profiles.update(SYSTEM_ACTOR, 'prof-default', { acme: { enabled: true, auth_mode: 'trust_authenticated', rate_limits: { orders_per_account_per_hour: null, accounts_per_ip_per_hour: null } } });
await services.pki.lifecycle.caChain('iss-local');
const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { enrollment: 0 } });
const traced: typeof handler = async (req, t) => { log.push(`==== ${req.method} ${new URL(req.url).pathname}`); return handler(req, t); };
const l = await listenTls(traced, 1);
const agent = new Agent({ keepAlive: true, maxSockets: 1, ca: l.ca });
const client = new AcmeBenchClient({ directoryUrl: `https://127.0.0.1:${l.port}/acme/directory`, agent });
const acct = await client.newAccount((await generateKeyPair('ECDSA-P256')).privateKey);
for (let i = 0; i < 3; i++) {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  const name = `t${i}.acme.bench.example.com`;
  if (i === 2) log.length = 0;
  await client.issue(acct, name, createCertificationRequest({ subject: `CN=${name}`, privateKey, subjectAltNames: [{ type: 'dns', value: name }] }));
}
console.log(log.map((s) => s.replace(/\s+/g, ' ').slice(0, 220)).join('\n'));
console.log('queries:', log.filter((s) => !s.startsWith('====')).length);
agent.destroy(); await l.close(); await storage.close(); await cleanup();
