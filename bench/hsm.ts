/**
 * Key custody benchmark: signatures per second through the KeyCustody port for software keys
 * and for keys on a PKCS#11 token (SoftHSM2, a fresh token made here), and issuance per second
 * through the full pipeline with a token-held Local CA next to a software one.
 * Run: pnpm bench hsm  (not a test; no thresholds). Figures go to docs/operations/key-custody.md.
 */
import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import {
  type KeyCustody,
  SecretBox,
  SoftwareKeyCustody,
  SYSTEM_ACTOR,
  silentLogger,
  systemClock,
} from '../packages/core/src/index.js';
import {
  certificationRequestToPem,
  createCertificationRequest,
  generateKeyPair,
  type KeyAlgorithm,
  type SignMechanism,
} from '../packages/core/src/pki/index.js';
import { createServices } from '../packages/core/src/services/index.js';
import { Pkcs11KeyCustody } from '../packages/key-custody-pkcs11/src/custody.js';
import { createSoftHsmToken } from '../packages/key-custody-pkcs11/src/softhsm.js';
import { createPgliteStorage } from '../packages/storage-pg/src/index.js';

const rows: [string, string][] = [];
const report = (name: string, perSec: number) => {
  rows.push([name, `${perSec.toFixed(0)} /s  (${(1000 / perSec).toFixed(3)} ms each)`]);
  console.error(`${name}: ${perSec.toFixed(0)}/s`);
};

async function signatures(
  kind: string,
  custody: KeyCustody,
  algorithm: KeyAlgorithm,
  mechanism: SignMechanism,
) {
  const label = `bench ${algorithm}`;
  await custody.createKey({ algorithm, label, extractable: kind === 'software' });
  const key = await custody.signingKey(label);
  const data = randomBytes(512);
  for (let i = 0; i < 50; i++) key.sign(mechanism, data);
  const n = algorithm.startsWith('RSA') ? 1000 : 5000;
  const t = performance.now();
  for (let i = 0; i < n; i++) key.sign(mechanism, data);
  report(`${mechanism} signature through the port, ${kind}`, (n / (performance.now() - t)) * 1000);
}

async function pipeline(kind: string, keyCustody: KeyCustody | undefined, n: number) {
  const storage = await createPgliteStorage(
    { memory: true },
    { secretBox: new SecretBox(randomBytes(32)), clock: systemClock },
  );
  await storage.migrate();
  const services = createServices({
    storage,
    clock: systemClock,
    logger: silentLogger,
    ...(keyCustody ? { keyCustody } : {}),
  });
  const owner = await services.owners.create(SYSTEM_ACTOR, { name: 'bench' });
  const team = await services.teams.create(SYSTEM_ACTOR, { name: 'bench' });
  const issuer = await services.issuers.create(SYSTEM_ACTOR, {
    name: `bench ${kind}`,
    type: 'Local',
    config: { key_algorithm: 'ECDSA-P256', ...(keyCustody ? { key_custody: 'pkcs11' } : {}) },
  });
  await services.pki.lifecycle.caChain(issuer.id);
  const leafKey = await generateKeyPair('ECDSA-P256');
  const ids: string[] = [];
  const csrs: string[] = [];
  for (let i = 0; i < n + 10; i++) {
    const c = await services.certificates.create(SYSTEM_ACTOR, {
      name: `b-${i}`,
      common_name: `host${i}.bench.test`,
      renewal_policy_id: 'rp-default',
      issuer_id: issuer.id,
      owner_id: owner.id,
      team_id: team.id,
    });
    ids.push(c.id);
    csrs.push(
      certificationRequestToPem(
        createCertificationRequest({
          subject: [{ type: 'CN', value: `host${i}.bench.test` }],
          privateKey: leafKey.privateKey,
        }),
      ),
    );
  }
  for (let i = 0; i < 10; i++)
    await services.pki.lifecycle.issue(SYSTEM_ACTOR, ids[i]!, { csr_pem: csrs[i] });
  const t = performance.now();
  for (let i = 10; i < ids.length; i++)
    await services.pki.lifecycle.issue(SYSTEM_ACTOR, ids[i]!, { csr_pem: csrs[i] });
  report(
    `leaf issuance, full pipeline on PGlite (CSR → stored version), ECDSA-P256 CA, ${kind}`,
    (n / (performance.now() - t)) * 1000,
  );
  await storage.close();
}

const token = createSoftHsmToken('certwright-bench');
const hsm = Pkcs11KeyCustody.open({ module: token.module, tokenLabel: token.tokenLabel, pin: token.pin });
try {
  const software = new SoftwareKeyCustody();
  await signatures('software', software, 'ECDSA-P256', 'ECDSA-SHA256');
  await signatures('SoftHSM2', hsm, 'ECDSA-P256', 'ECDSA-SHA256');
  await signatures('software', software, 'RSA-2048', 'RSA-PKCS1-SHA256');
  await signatures('SoftHSM2', hsm, 'RSA-2048', 'RSA-PKCS1-SHA256');
  const n = Number(process.argv[2] ?? '1000');
  await pipeline('software keys', undefined, n);
  await pipeline('SoftHSM2 token', hsm, n);
} finally {
  await hsm.close();
  token.dispose();
}

console.log(
  `\nKey custody (${cpus()[0]?.model ?? 'cpu'}, ${cpus().length} cores, Node ${process.version})\n`,
);
console.log('| measurement | rate |\n| --- | --- |');
for (const [name, value] of rows) console.log(`| ${name} | ${value} |`);
