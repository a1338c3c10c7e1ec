/**
 * SCEP's own part of an enrollment, in-process (not a test; no thresholds): GetCACaps,
 * GetCACert and a PKCSReq PKIOperation through the composed handler's direct entry (the one
 * the server's listener calls), with the enrollment pipeline replaced by one that returns the
 * same certificate each time — so what is measured is SCEP's layer alone: profile lookup,
 * CMS parse, the two verifications, the RA's decryption, the challenge check (remembered),
 * the CertRep's signature and envelope, and the handler around them. No sockets.
 *
 *   node --conditions=source --import tsx bench/scep-operation.ts [n=2000] [warmup=1000]
 *
 * Prints the main thread's CPU (process.cpuUsage, user + system) per enrollment's three
 * requests over the n measured ones (BENCH_SCEP_PROFILE=<dir>: a V8 CPU profile of them);
 * every PKIMessage is built before the window (a fresh senderNonce each, as the replay check
 * asks). Figures in docs/protocols/scep.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createHandler } from '../packages/api/src/index.js';
import {
  createServices,
  type EnrollmentService,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
  type TransportContext,
} from '../packages/core/src/index.js';
import {
  buildScepRequest,
  createCertificationRequest,
  createSelfSignedCertificate,
  generateKeyPair,
  parseCertsOnly,
  pemEncode,
  readCertRep,
} from '../packages/core/src/pki/index.js';
import { openBenchStorage } from './support/engines.js';

const n = Number(process.argv[2] ?? '2000');
const warmup = Number(process.argv[3] ?? '1000');
const CHALLENGE = 'bench challenge';

const { s: storage, cleanup } = await openBenchStorage('pglite', 'cw-bench-scep-op');
await storage.migrate();
const key = await generateKeyPair('RSA-2048');
const now = Date.now();
const self = createSelfSignedCertificate(
  {
    subject: [{ type: 'CN', value: 'device.scep.bench.test' }],
    notBefore: new Date(now - 60_000),
    notAfter: new Date(now + 86_400_000),
  },
  key.privateKey,
).der;
// The pipeline's answer: a certificate (the device's own self-signed one will do for the CertRep).
const certificatePem = pemEncode('CERTIFICATE', self);
const issuance = {
  enroll: async () => ({ certificatePem }),
} as unknown as Pick<EnrollmentService, 'enroll'>;
const services = createServices({ storage, clock: systemClock, logger: silentLogger });
await services.profiles.update(SYSTEM_ACTOR, 'prof-default', {
  scep: { enabled: true, challenge_password: CHALLENGE },
});
const handler = createHandler({
  auth: { type: 'none' },
  services,
  scep: { issuance },
  rateLimits: { enrollment: 0 },
});
const direct = handler.direct!;
const transport: TransportContext = { remoteAddress: '127.0.0.1' };
const headers = { get: (name: string) => (name === 'content-type' ? 'application/x-pki-message' : null) };
const base = 'http://127.0.0.1:8080/scep';

async function call(
  method: string,
  query: string,
  body: Uint8Array = new Uint8Array(0),
): Promise<Uint8Array> {
  const answer = await direct.answer(
    { method, url: `${base}?operation=${query}`, pathname: '/scep', headers },
    body,
    transport,
  );
  if (!answer || answer instanceof Response || answer.status !== 200) {
    throw new Error(`${query}: ${answer instanceof Response ? answer.status : answer?.status}`);
  }
  return answer.body;
}

const certs = parseCertsOnly(await call('GET', 'GetCACert'));
const ra = certs[certs.length - 1]!;
const csr = createCertificationRequest({
  subject: [{ type: 'CN', value: 'device.scep.bench.test' }],
  privateKey: key.privateKey,
  challengePassword: CHALLENGE,
});
const messages = Array.from({ length: n + warmup }, () =>
  buildScepRequest({
    messageType: 'PKCSReq',
    transactionId: randomBytes(8).toString('hex'),
    senderNonce: randomBytes(16),
    content: csr,
    signer: { certificate: self, privateKey: key.privateKey },
    recipient: ra,
    contentEncryption: 'aes-256-cbc',
  }),
);

async function enrollment(i: number): Promise<void> {
  await call('GET', 'GetCACaps');
  await call('GET', 'GetCACert');
  await call('POST', 'PKIOperation', messages[i]!);
}

// Every reply must be a SUCCESS: a FAILURE would measure the refusal path instead.
{
  const first = await call('POST', 'PKIOperation', messages[0]!);
  const rep = readCertRep(first, { ra, requester: { certificate: self, privateKey: key.privateKey } });
  if (rep.status !== 'SUCCESS') throw new Error(`the PKCSReq was refused: ${JSON.stringify(rep)}`);
}
for (let i = 1; i < warmup; i++) await enrollment(i);
// BENCH_SCEP_PROFILE=<dir>: a V8 CPU profile of the measured window alone.
const profileDir = process.env.BENCH_SCEP_PROFILE;
const session = profileDir ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
}
const load = loadavg()[0]!;
const cpu0 = process.cpuUsage();
for (let i = warmup; i < warmup + n; i++) await enrollment(i);
const cpu = process.cpuUsage(cpu0);
if (session) {
  const { profile } = await session.post('Profiler.stop');
  mkdirSync(profileDir!, { recursive: true });
  writeFileSync(join(profileDir!, `scep-operation-${process.pid}.cpuprofile`), JSON.stringify(profile));
}
console.log(
  `SCEP's own part, ${n} enrollments after ${warmup}: ${((cpu.user + cpu.system) / 1000 / n).toFixed(3)} ms CPU each (main thread; load ${load.toFixed(1)} → ${loadavg()[0]!.toFixed(1)})`,
);
await storage.close();
await cleanup();
