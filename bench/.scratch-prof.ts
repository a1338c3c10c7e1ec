import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { fileURLToPath } from 'node:url';
import { createHandler } from '../packages/api/src/index.js';
import { createServices, SecretBox, SYSTEM_ACTOR, silentLogger, systemClock } from '../packages/core/src/index.js';
import { buildCertId, der, readCertificate } from '../packages/core/src/pki/index.js';
import { createPgliteStorage } from '../packages/storage-pg/src/index.js';
import { processCpuMs } from './support/proc-cpu.js';
import { listenTls } from './support/tls-listener.js';
const LOADER = fileURLToPath(new URL('./support/ocsp-load.mjs', import.meta.url));
const SECONDS = Number(process.argv[2] ?? 3);
const PROF = process.argv[3] === 'prof';
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
const listener = await listenTls(handler, 1);
const load = { host: '127.0.0.1', port: listener.port, tls: true, ca: listener.ca, path: `/.well-known/pki/ocsp/${issuer.id}`, der: Buffer.from(body).toString('base64'), certId: Buffer.from(certId).toString('base64') };
const session = new Session(); session.connect();
{ const c0 = processCpuMs(process.pid); await new Promise((r) => setTimeout(r, 3000)); console.log('idle CPU % over 3 s', (processCpuMs(process.pid) - c0) / 30); }
if (process.env.FLOOR) {
  const fixed = randomBytes(480);
  listener.server.removeAllListeners('request');
  listener.server.on('request', (req, res) => { req.resume(); req.on('end', () => { res.writeHead(200, { 'content-type': 'application/ocsp-response', 'content-length': String(fixed.length) }); res.end(fixed); }); });
}
for (const fresh of process.env.FLOOR ? [false] : [false, true]) {
  if (PROF) { await session.post('Profiler.enable'); await session.post('Profiler.start'); }
  const child = spawn(process.execPath, [LOADER, JSON.stringify({ ...load, fresh, connections: 32, seconds: SECONDS, warmup: 1 })], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = ''; child.stdout.on('data', (c) => { out += c; });
  const c0 = processCpuMs(process.pid); const t0 = Date.now();
  await new Promise((r) => child.on('exit', r));
  const cpu = processCpuMs(process.pid) - c0; const wall = Date.now() - t0;
  const r = JSON.parse(out);
  console.log(fresh ? 'fresh' : 'cached', Math.round(r.ok / r.ms * 1000), '/s', 'failed', r.failed, 'cpu', Math.round(cpu / wall * 100) + '%', 'µs/answer', Math.round(cpu * 1000 / (r.ok * (wall / r.ms))));
  if (PROF) { const { profile } = await session.post('Profiler.stop'); writeFileSync(`/tmp/ocsp-prof/${fresh ? 'fresh' : 'cached'}.cpuprofile`, JSON.stringify(profile)); }
}
await listener.close(); await storage.close();
