import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readConfigFile, resolveClientOptions } from '../src/config.js';

describe('settings: a flag, then the environment, then the config file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'cw-cli-config-'));
  writeFileSync(join(dir, 'flag-key'), 'from-flag\n');
  writeFileSync(join(dir, 'file-key'), 'from-file\n');
  const file = {
    server: 'https://file.example:8443',
    api_key_file: join(dir, 'file-key'),
    ca_bundle: '/file/ca.pem',
    insecure_skip_verify: true,
  };

  it('takes each setting from the first source that gives it', () => {
    expect(resolveClientOptions({}, {}, file)).toEqual({
      baseUrl: 'https://file.example:8443',
      apiKey: 'from-file',
      caBundlePath: '/file/ca.pem',
      insecureSkipVerify: true,
    });
    const env = {
      SVC_SERVER_URL: 'https://env.example:8443',
      SVC_API_KEY: 'from-env',
      SVC_SERVER_CA_BUNDLE_PATH: '/env/ca.pem',
      SVC_SERVER_TLS_INSECURE_SKIP_VERIFY: 'false',
    };
    expect(resolveClientOptions({}, env, file)).toEqual({
      baseUrl: 'https://env.example:8443',
      apiKey: 'from-env',
      caBundlePath: '/env/ca.pem',
    });
    expect(
      resolveClientOptions(
        { server: 'https://flag.example:8443', apiKeyFile: join(dir, 'flag-key'), caBundle: '/flag/ca.pem' },
        env,
        file,
      ),
    ).toMatchObject({
      baseUrl: 'https://flag.example:8443',
      apiKey: 'from-flag',
      caBundlePath: '/flag/ca.pem',
    });
  });

  it('refuses a missing server URL, an unknown key and a file that is not a mapping', () => {
    expect(() => resolveClientOptions({}, {}, {})).toThrow(/no server URL/);
    writeFileSync(join(dir, 'unknown.yaml'), 'server: https://x\napi_secret: y\n');
    expect(() => readConfigFile({ config: join(dir, 'unknown.yaml') }, {})).toThrow(/unknown key api_secret/);
    writeFileSync(join(dir, 'list.yaml'), '- a\n- b\n');
    expect(() => readConfigFile({ config: join(dir, 'list.yaml') }, {})).toThrow(/must be a mapping/);
    expect(() => readConfigFile({ config: join(dir, 'missing.yaml') }, {})).toThrow(/ENOENT/);
    expect(readConfigFile({}, { XDG_CONFIG_HOME: join(dir, 'none') })).toEqual({});
  });
});
