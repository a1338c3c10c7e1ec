import { createHash } from 'node:crypto';
import { ManualClock, MemoryEphemeralStore, silentLogger } from '@certwright/core';
import {
  createSelfSignedCertificate,
  exportPkcs8Der,
  generateKeyPair,
  pemEncode,
} from '@certwright/core/pki';
import { MdmChallengeVerifier } from '@certwright/protocols/scep';
import { beforeAll, describe, expect, it } from 'vitest';
import { runMintScepChallenge } from '../src/scep-challenge-cli.js';

let files: Map<string, string>;

beforeAll(async () => {
  const { privateKey } = await generateKeyPair('ECDSA-P256');
  const cert = createSelfSignedCertificate(
    {
      subject: 'CN=cli mdm signer',
      notBefore: new Date(Date.now() - 86_400_000),
      notAfter: new Date(Date.now() + 86_400_000),
      keyUsage: ['digitalSignature'],
    },
    privateKey,
  );
  files = new Map([
    ['/k.pem', pemEncode('PRIVATE KEY', exportPkcs8Der(privateKey))],
    ['/c.pem', pemEncode('CERTIFICATE', cert.der)],
  ]);
});

const read = async (path: string) => {
  const text = files.get(path);
  if (text === undefined) throw Object.assign(new Error('nope'), { code: 'ENOENT' });
  return text;
};

describe('certwright-mint-scep-challenge', () => {
  it('mints a challenge the verifier accepts for the names it was given', async () => {
    const result = await runMintScepChallenge(
      [
        '--key',
        '/k.pem',
        '--cert',
        '/c.pem',
        '--audience',
        'urn:certwright:scep:prof-x',
        '--cn',
        'dev-1',
        '--dns',
        'dev-1.example',
      ],
      read,
    );
    expect(result).toMatchObject({ code: 0, stderr: '' });
    const clock = new ManualClock(new Date());
    const verifier = new MdmChallengeVerifier(
      { clock, ephemeral: new MemoryEphemeralStore({ clock }), logger: silentLogger },
      { readTrustFile: read },
    );
    const verdict = await verifier.verify({
      profileId: 'prof-x',
      settings: {
        trust_bundle_path: '/c.pem',
        audience: null,
        max_lifetime_seconds: 3600,
        require_compliance: true,
      },
      challenge: result.stdout.trim(),
      csr: { commonNames: ['dev-1'], subjectAltNames: [{ type: 'dns', value: 'dev-1.example' }] },
      remoteAddress: '127.0.0.1',
    });
    expect(verdict.status).toBe('success');
    const header = JSON.parse(Buffer.from(result.stdout.split('.')[0]!, 'base64url').toString());
    expect(header['x5t#S256']).toBe(
      createHash('sha256')
        .update(Buffer.from(files.get('/c.pem')!.split('\n').slice(1, -2).join(''), 'base64'))
        .digest('base64url'),
    );
  });

  it('names what is missing or wrong, with exit code 2 for usage and 1 for unusable files', async () => {
    expect(await runMintScepChallenge(['--key', '/k.pem'], read)).toMatchObject({
      code: 2,
      stderr: expect.stringMatching(/^missing --cert, --audience/),
    });
    expect(
      (
        await runMintScepChallenge(
          ['--key', '/k.pem', '--cert', '/c.pem', '--audience', 'a', '--cn', 'x', '--lifetime', '0'],
          read,
        )
      ).code,
    ).toBe(2);
    expect(
      await runMintScepChallenge(
        ['--key', '/k.pem', '--cert', '/missing.pem', '--audience', 'a', '--cn', 'x'],
        read,
      ),
    ).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/does not exist/),
    });
    expect(
      await runMintScepChallenge(['--key', '/k.pem', '--cert', '/c.pem', '--audience', 'a'], read),
    ).toMatchObject({
      code: 1,
      stderr: expect.stringMatching(/names nothing/),
    });
  });
});
