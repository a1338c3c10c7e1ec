import { type KeyObject, X509Certificate } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { basename, dirname, extname, join } from 'node:path';
import { type CertwrightClient, ProblemError } from '@certwright/client';
import {
  certificationRequestToPem,
  createCertificationRequest,
  exportPkcs8Pem,
  generateKeyPair,
  KEY_ALGORITHMS,
  type KeyAlgorithm,
  parseCertificationRequest,
  type SubjectAltName,
} from '@certwright/core/pki';
import { UsageError } from './exit-codes.js';
import { validityDays } from './times.js';

/** The records every installation has (docs/clients/cli.md), used when a flag names none. */
export const BASELINE = {
  owner_id: 'own-default',
  team_id: 'team-default',
  renewal_policy_id: 'rp-default',
  issuer_id: 'iss-local',
} as const;

export interface OneShotOptions {
  name?: string;
  san?: string[];
  profile?: string;
  notAfter?: string;
  keyAlgorithm?: string;
  ownerId?: string;
  teamId?: string;
  issuerId?: string;
  renewalPolicyId?: string;
  chain?: string;
  bundle?: boolean;
  force?: boolean;
}

export interface OneShotResult {
  certificate_id: string;
  name: string;
  common_name: string;
  sans: string[];
  serial_number: string;
  not_after: string;
  certificate_file: string;
  chain_file: string;
  key_file?: string;
}

interface Version {
  id: string;
  serial_number: string;
  not_after: string;
  cert_pem: string;
  chain_pem: string;
}

/** `web.crt` → `web.chain.crt`; `web` → `web.chain.pem`. */
export function defaultChainPath(crt: string): string {
  const ext = extname(crt);
  return join(dirname(crt), `${basename(crt, ext)}.chain${ext || '.pem'}`);
}

const sanOf = (value: string): SubjectAltName =>
  isIP(value) !== 0
    ? { type: 'ip', value }
    : value.includes('://')
      ? { type: 'uri', value }
      : value.includes('@')
        ? { type: 'email', value }
        : { type: 'dns', value };

function refuseExisting(paths: string[], force: boolean | undefined): void {
  if (force) return;
  const present = paths.filter((p) => existsSync(p));
  if (present.length > 0)
    throw new UsageError(
      `${present.join(', ')} exist${present.length === 1 ? 's' : ''}: pass --force to replace`,
    );
}

function keyAlgorithmOf(value: string | undefined): KeyAlgorithm {
  const algorithm = value ?? 'ECDSA-P256';
  if (!(KEY_ALGORITHMS as readonly string[]).includes(algorithm))
    throw new UsageError(
      `--key-algorithm must be one of ${KEY_ALGORITHMS.join(', ')} (got ${JSON.stringify(value)})`,
    );
  return algorithm as KeyAlgorithm;
}

/**
 * `certwright certificate <subject> <crt> <key>`: the key is made here and never leaves this
 * machine; the server signs a CSR for it. Files are written only once the certificate exists.
 */
export async function oneShotCertificate(
  client: CertwrightClient,
  subject: string,
  crt: string,
  keyFile: string,
  options: OneShotOptions,
  warn: (message: string) => void,
): Promise<OneShotResult> {
  const chain = options.chain ?? defaultChainPath(crt);
  refuseExisting([crt, keyFile, chain], options.force);
  const algorithm = keyAlgorithmOf(options.keyAlgorithm);
  const days = options.notAfter ? validityDays('--not-after', options.notAfter, Date.now()) : undefined;
  const sans = options.san && options.san.length > 0 ? options.san : [subject];
  const { privateKey } = await generateKeyPair(algorithm);
  const csrPem = certificationRequestToPem(
    createCertificationRequest({
      subject: [{ type: 'CN', value: subject }],
      privateKey,
      subjectAltNames: sans.map(sanOf),
    }),
  );
  const result = await createAndIssue(client, { subject, sans, csrPem, days, options }, warn);
  writeOutputs(result.version, crt, chain, options, privateKey, keyFile);
  return summary(result, subject, sans, crt, chain, keyFile);
}

/** `certwright sign <csr> <crt>`: a certificate for a CSR made elsewhere (its key stays there). */
export async function signCsr(
  client: CertwrightClient,
  csrFile: string,
  crt: string,
  options: OneShotOptions,
  warn: (message: string) => void,
): Promise<OneShotResult> {
  const chain = options.chain ?? defaultChainPath(crt);
  refuseExisting([crt, chain], options.force);
  let text: string;
  try {
    text = readFileSync(csrFile, 'utf8');
  } catch (error) {
    throw new UsageError(`cannot read ${csrFile} (${(error as { code?: string }).code ?? 'unreadable'})`);
  }
  let request: ReturnType<typeof parseCertificationRequest>;
  try {
    request = parseCertificationRequest(text);
  } catch (error) {
    throw new UsageError(`${csrFile} is not a usable CSR: ${(error as Error).message}`);
  }
  const sans = request.subjectAltNames.flatMap((n) => ('value' in n ? [n.value] : []));
  const cn = request.subject.rdns.flat().find((a) => a.type === 'CN')?.value;
  const subject = cn ?? sans[0];
  if (!subject) throw new UsageError(`${csrFile} names neither a common name nor a subject alternative name`);
  const days = options.notAfter ? validityDays('--not-after', options.notAfter, Date.now()) : undefined;
  const csrPem = certificationRequestToPem(request.der);
  const result = await createAndIssue(client, { subject, sans, csrPem, days, options }, warn);
  writeOutputs(result.version, crt, chain, options);
  return summary(result, subject, sans, crt, chain);
}

async function createAndIssue(
  client: CertwrightClient,
  r: { subject: string; sans: string[]; csrPem: string; days: number | undefined; options: OneShotOptions },
  warn: (message: string) => void,
): Promise<{ certificate: { id: string; name: string }; version: Version }> {
  const { options } = r;
  const certificate = (await client.callRaw('createCertificate', {
    body: {
      name: options.name ?? r.subject,
      common_name: r.subject,
      sans: r.sans,
      owner_id: options.ownerId ?? BASELINE.owner_id,
      team_id: options.teamId ?? BASELINE.team_id,
      issuer_id: options.issuerId ?? BASELINE.issuer_id,
      renewal_policy_id: options.renewalPolicyId ?? BASELINE.renewal_policy_id,
      ...(options.profile ? { profile_id: options.profile } : {}),
      source: 'API',
    },
  })) as { id: string; name: string };
  const body = { csr_pem: r.csrPem, ...(r.days ? { validity_days: r.days } : {}) };
  let answer: { version?: Version };
  try {
    answer = (await client.callRaw('issueCertificate', { path: { id: certificate.id }, body })) as {
      version?: Version;
    };
  } catch (error) {
    // The server's issuance worker issues new Pending certificates with a key of its own; when it
    // came first, a renewal with this CSR gives the certificate the key made here.
    if (!(error instanceof ProblemError) || error.status !== 409) throw error;
    answer = (await client.callRaw('renewCertificate', { path: { id: certificate.id }, body })) as {
      version?: Version;
    };
    warn(
      `the server issued ${certificate.id} with a key of its own before this request; renewed it with this CSR`,
    );
  }
  if (!answer.version?.cert_pem)
    throw new UsageError(
      `${certificate.id}: the server did not issue a certificate for this CSR (its profile waits for an agent)`,
    );
  return { certificate, version: answer.version };
}

function writeOutputs(
  version: Version,
  crt: string,
  chain: string,
  options: OneShotOptions,
  privateKey?: KeyObject,
  keyFile?: string,
): void {
  const leaf = version.cert_pem.endsWith('\n') ? version.cert_pem : `${version.cert_pem}\n`;
  const cas =
    version.chain_pem === '' || version.chain_pem.endsWith('\n')
      ? version.chain_pem
      : `${version.chain_pem}\n`;
  // Never write a key that does not belong to the certificate next to it.
  if (privateKey && !new X509Certificate(leaf).checkPrivateKey(privateKey))
    throw new Error('the issued certificate does not carry the key made for it; nothing was written');
  const flag = options.force ? 'w' : 'wx';
  if (privateKey && keyFile) {
    writeFileSync(keyFile, exportPkcs8Pem(privateKey), { mode: 0o600, flag });
    chmodSync(keyFile, 0o600);
  }
  writeFileSync(crt, options.bundle ? leaf + cas : leaf, { mode: 0o644, flag });
  writeFileSync(chain, cas, { mode: 0o644, flag });
}

function summary(
  result: { certificate: { id: string; name: string }; version: Version },
  subject: string,
  sans: string[],
  crt: string,
  chain: string,
  keyFile?: string,
): OneShotResult {
  return {
    certificate_id: result.certificate.id,
    name: result.certificate.name,
    common_name: subject,
    sans,
    serial_number: result.version.serial_number,
    not_after: result.version.not_after,
    certificate_file: crt,
    chain_file: chain,
    ...(keyFile ? { key_file: keyFile } : {}),
  };
}
