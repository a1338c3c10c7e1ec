import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { isCertwrightError } from '@certwright/core';
import {
  MDM_CHALLENGE_ALGORITHMS,
  type MdmChallengeAlgorithm,
  mintScepChallenge,
} from '@certwright/protocols/scep';

export const MINT_USAGE = `usage: certwright-mint-scep-challenge --key mdm-key.pem --cert mdm-cert.pem --audience AUD
         [--cn NAME] [--dns NAME]... [--ip ADDR]... [--email ADDR]... [--uri URI]...
         [--compliant true|false|omit] [--lifetime SECONDS] [--issuer ISS] [--sub DEVICE-ID]
         [--jti ID] [--alg ${MDM_CHALLENGE_ALGORITHMS.join('|')}]

Prints a signed SCEP device-management challenge (docs/protocols/scep-mdm.md) to put in a
CSR's challengePassword, e.g. \`scepclient -challenge "$(certwright-mint-scep-challenge …)"\`.
The certificate must be in the profile's mdm.trust_bundle_path; the audience is the profile's
mdm.audience, or urn:certwright:scep:<profile id> when it names none. The CSR must carry
exactly the names given here. --compliant defaults to true.`;

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The command, without a process: argv in, exit code and output out. */
export async function runMintScepChallenge(
  argv: readonly string[],
  read: (path: string) => Promise<string> = (path) => readFile(path, 'utf8'),
): Promise<CliResult> {
  let values: ReturnType<typeof parse>['values'];
  try {
    values = parse(argv).values;
  } catch (error) {
    return { code: 2, stdout: '', stderr: `${(error as Error).message}\n${MINT_USAGE}\n` };
  }
  if (values.help) return { code: 0, stdout: `${MINT_USAGE}\n`, stderr: '' };
  const missing = (['key', 'cert', 'audience'] as const).filter((name) => !values[name]?.length);
  if (missing.length > 0) {
    return { code: 2, stdout: '', stderr: `missing --${missing.join(', --')}\n${MINT_USAGE}\n` };
  }
  const compliant = values.compliant ?? 'true';
  if (!['true', 'false', 'omit'].includes(compliant)) {
    return { code: 2, stdout: '', stderr: '--compliant must be true, false or omit\n' };
  }
  const lifetime = values.lifetime === undefined ? 600 : Number(values.lifetime);
  if (!Number.isInteger(lifetime) || lifetime < 1) {
    return { code: 2, stdout: '', stderr: '--lifetime must be a positive whole number of seconds\n' };
  }
  if (values.alg !== undefined && !(MDM_CHALLENGE_ALGORITHMS as readonly string[]).includes(values.alg)) {
    return { code: 2, stdout: '', stderr: `--alg must be one of ${MDM_CHALLENGE_ALGORITHMS.join(', ')}\n` };
  }
  try {
    const [key, certificate] = await Promise.all([read(values.key!), read(values.cert!)]);
    const audience = values.audience!;
    const token = mintScepChallenge({
      key,
      certificate,
      audience: audience.length === 1 ? audience[0]! : audience,
      ...(values.issuer ? { issuer: values.issuer } : {}),
      claims: {
        ...(values.cn !== undefined ? { cn: values.cn } : {}),
        dns: values.dns ?? [],
        ip: values.ip ?? [],
        email: values.email ?? [],
        uri: values.uri ?? [],
        ...(compliant === 'omit' ? {} : { compliant: compliant === 'true' }),
        ...(values.sub !== undefined ? { sub: values.sub } : {}),
      },
      lifetimeSeconds: lifetime,
      ...(values.jti ? { jti: values.jti } : {}),
      ...(values.alg ? { algorithm: values.alg as MdmChallengeAlgorithm } : {}),
    });
    return { code: 0, stdout: `${token}\n`, stderr: '' };
  } catch (error) {
    const why = isCertwrightError(error)
      ? error.message
      : (error as { code?: string }).code === 'ENOENT'
        ? 'a key or certificate file does not exist'
        : String((error as Error).message ?? error);
    return { code: 1, stdout: '', stderr: `certwright-mint-scep-challenge: ${why}\n` };
  }
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    strict: true,
    allowPositionals: false,
    options: {
      key: { type: 'string' },
      cert: { type: 'string' },
      audience: { type: 'string', multiple: true },
      issuer: { type: 'string' },
      cn: { type: 'string' },
      dns: { type: 'string', multiple: true },
      ip: { type: 'string', multiple: true },
      email: { type: 'string', multiple: true },
      uri: { type: 'string', multiple: true },
      compliant: { type: 'string' },
      lifetime: { type: 'string' },
      sub: { type: 'string' },
      jti: { type: 'string' },
      alg: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}
