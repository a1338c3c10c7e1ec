import { randomBytes } from 'node:crypto';
import { createHandler } from '../packages/api/src/index.js';
import { createServices, SecretBox, SYSTEM_ACTOR, silentLogger, systemClock } from '../packages/core/src/index.js';
import { buildCertId, der, readCertificate, OID } from '../packages/core/src/pki/index.js';
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
const body = der.sequence(der.sequence(der.sequence(der.sequence(certId))));
const handler = createHandler({ auth: { type: 'none' }, services, rateLimits: { pki: 0 } });
const raw = ['Host', '127.0.0.1', 'Content-Type', 'application/ocsp-request', 'Content-Length', String(body.length)];
const head = { method: 'POST', url: `https://127.0.0.1/.well-known/pki/ocsp/${issuer.id}`, headers: { get: (n: string) => { const i = raw.findIndex((x, j) => j % 2 === 0 && x.toLowerCase() === n); return i < 0 ? null : raw[i + 1]!; } } };
const fresh = () => der.sequence(der.sequence(der.sequence(der.sequence(certId)), der.explicit(2, der.sequence(der.extension(OID.idPkixOcspNonce, false, der.octetString(randomBytes(16)))))));
for (const [label, make] of [['cached', () => body], ['fresh', fresh]] as const) {
  for (let round = 0; round < 3; round++) {
    const N = 5000;
    const bodies = Array.from({ length: N }, make);
    const c0 = process.cpuUsage();
    for (let i = 0; i < N; i++) await handler.direct.answer(head, bodies[i]!, { remoteAddress: '127.0.0.1' });
    const c = process.cpuUsage(c0);
    console.log(label, 'direct.answer µs/call', ((c.user + c.system) / N).toFixed(1));
  }
}
const { parseOcspRequest } = await import('../packages/core/src/pki/index.js');
let c0 = process.cpuUsage(); for (let i = 0; i < 20000; i++) parseOcspRequest(body); console.log('parse µs', ((process.cpuUsage(c0).user) / 20000).toFixed(2));
c0 = process.cpuUsage(); for (let i = 0; i < 20000; i++) await services.pki.revocationStatus.respond(issuer.id, parseOcspRequest(body)); console.log('respond cached µs', ((process.cpuUsage(c0).user) / 20000).toFixed(2));
await storage.close();
