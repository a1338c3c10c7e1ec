// Local micro-benchmark (not committed): the direct entry's pieces in a loop, no network.
import { randomBytes } from 'node:crypto';
import { createHandler } from '../packages/api/src/index.js';
import { createServices, SecretBox, SYSTEM_ACTOR, silentLogger, systemClock } from '../packages/core/src/index.js';
import { buildCertId, der, parseOcspRequest, readCertificate, DEFAULT_OCSP_REQUEST_LIMITS } from '../packages/core/src/pki/index.js';
import { createPgliteStorage } from '../packages/storage-pg/src/index.js';

const storage = await createPgliteStorage({ memory: true }, { secretBox: new SecretBox(randomBytes(32)), clock: systemClock });
await storage.migrate();
const services = createServices({ storage, clock: systemClock, logger: silentLogger });
const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'bench' });
const team = await services.teams.create(SYSTEM_ACTOR, { name: 'bench' });
const issuer = await services.issuers.create(SYSTEM_ACTOR, { name: 'bench ocsp', type: 'Local', config: { key_algorithm: 'ECDSA-P256' } });
const cert = await services.certificates.create(SYSTEM_ACTOR, { name: 'ocsp', common_name: 'ocsp.bench.test', renewal_policy_id: 'rp-default', issuer_id: issuer.id, owner_id: owner.id, team_id: team.id });
const issued = await services.pki.lifecycle.issue(SYSTEM_ACTOR, cert.id, {});
const [issuingPem] = await services.pki.lifecycle.caChain(issuer.id);
const certId = buildCertId(readCertificate(issuingPem!), issued.version!.serial_number, 'sha1').der;
const body = Buffer.from(der.sequence(der.sequence(der.sequence(der.sequence(certId)))));
const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { pki: Number(process.env.PKI_LIMIT ?? 0) } });
const url = `https://127.0.0.1:4443/.well-known/pki/ocsp/${issuer.id}`;
const raw = ['Host', '127.0.0.1', 'Content-Type', 'application/ocsp-request', 'Content-Length', String(body.length)];
const head = { method: 'POST', url, headers: { get(n: string) { const w = n.toLowerCase(); for (let i = 0; i < raw.length; i += 2) if (raw[i]!.toLowerCase() === w) return raw[i + 1]!; return null; } } };
const transport = { remoteAddress: '127.0.0.1' };
async function time(name: string, n: number, f: () => unknown) {
  for (let i = 0; i < n / 10; i++) await f();
  const t = process.cpuUsage(); const w = performance.now();
  for (let i = 0; i < n; i++) await f();
  const c = process.cpuUsage(t);
  console.log(name.padEnd(40), (((c.user + c.system)) / n).toFixed(2), 'µs cpu', (((performance.now() - w) * 1000) / n).toFixed(2), 'µs wall');
}
const parsed = parseOcspRequest(body, DEFAULT_OCSP_REQUEST_LIMITS);
const N = Number(process.argv[2] ?? 200000);
console.log('issuer id', issuer.id);
await time('direct.answer (cached)', N, () => handler.direct.answer(head, body, transport));
await time('direct.bodyLimit', N, () => handler.direct.bodyLimit('POST', new URL(url).pathname));
await time('parseOcspRequest', N, () => parseOcspRequest(body, DEFAULT_OCSP_REQUEST_LIMITS));
await time('revocationStatus.respond (cached)', N, () => services.pki.revocationStatus.respond(issuer.id, parsed));
await time('new URL', N, () => new URL(url).pathname);
await time('direct.answer (cached) again', N, () => handler.direct.answer(head, body, transport));
await storage.close();
