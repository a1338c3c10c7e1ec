/**
 * certwright-mcp through the SDK's own client: over stdio (the bin as a subprocess) and over
 * streamable HTTP, against a real certwright-server over TLS 1.3 on 127.0.0.1. The SDK client
 * checks every structured result against the tool's output schema, so each call here checks
 * that too.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { type CertwrightClient, createClient } from '@certwright/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  type CallToolResult,
  ElicitRequestSchema,
  type ElicitResult,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  API_KEY,
  startStubServer,
  startTestServer,
  type TestServer,
} from '../../client/test/support/server.js';
import { createMcpServer, TOOLSETS } from '../src/index.js';

const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const NODE_ARGS = ['--conditions=source', '--import', 'tsx', BIN];

let server: TestServer;
let api: CertwrightClient;
let stdio: Client;
let tools: Tool[];
const env = () => ({
  PATH: process.env.PATH ?? '',
  SVC_SERVER_URL: server.url,
  SVC_API_KEY: API_KEY,
  SVC_SERVER_CA_BUNDLE_PATH: server.caPath,
});

beforeAll(async () => {
  server = await startTestServer();
  api = createClient({ baseUrl: server.url, apiKey: API_KEY, caBundlePath: server.caPath });
  stdio = new Client({ name: 'certwright-test', version: '1.0.0' });
  await stdio.connect(
    new StdioClientTransport({ command: process.execPath, args: NODE_ARGS, env: env(), stderr: 'pipe' }),
  );
  tools = (await stdio.listTools()).tools;
});
afterAll(async () => {
  await stdio?.close();
  await api?.close();
  server?.stop();
});

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const text = (result: CallToolResult) => (result.content[0] as { text: string }).text;
/** The JSON a tool error carries after its text. */
const details = (result: CallToolResult) => JSON.parse((result.content[1] as { text: string }).text);

let seq = 0;
async function createCertificate(client: Client, tag: string): Promise<string> {
  const created = await call(client, 'create_certificate', {
    name: `mcp-${process.pid}-${tag}-${seq}`,
    common_name: `mcp-${process.pid}-${tag}-${seq++}.example.test`,
    owner_id: 'own-default',
    team_id: 'team-default',
    renewal_policy_id: 'rp-default',
    issuer_id: 'iss-local',
  });
  expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
  return (created.structuredContent as { id: string }).id;
}

/** Issued by the tool, or by the server's issuance worker first: either way Active in the end. */
async function issued(client: Client, id: string): Promise<void> {
  const answer = await call(client, 'issue_certificate', { id, key_algorithm: 'ECDSA-P256' });
  if (answer.isError) expect(text(answer)).toMatch(/^409 /);
  for (let polls = 0; polls < 300; polls++) {
    if ((await api.getCertificate({ path: { id } })).status === 'Active') return;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`${id} never became Active`);
}

describe('the default toolset over stdio', () => {
  it('offers at most 40 tools, each with an output schema, and none of the agent protocol', () => {
    expect(tools.length).toBeGreaterThan(20);
    expect(tools.length).toBeLessThanOrEqual(40);
    const names = tools.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['list_certificates', 'svc_bulk_revoke_certificates']));
    for (const name of [
      'agent_heartbeat',
      'agent_work',
      'cleanup_demo_residue',
      'get_open_api',
      'retire_agent',
    ])
      expect(names).not.toContain(name);
    for (const tool of tools) expect(tool.outputSchema?.type, tool.name).toBe('object');
  });

  it('creates certificates, lists them, and answers a server problem as a tool error carrying it', async () => {
    const ids = [await createCertificate(stdio, 'list'), await createCertificate(stdio, 'list')];
    const listed = await call(stdio, 'list_certificates', { search: `mcp-${process.pid}-list` });
    expect(listed.structuredContent).toMatchObject({ total: 2 });
    expect(text(listed)).toMatch(/^2 of 2 \(page 1/);
    expect(ids).toHaveLength(2);

    const missing = await call(stdio, 'get_certificate', { id: 'cert-nope' });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toMatch(/^404 /);
    expect(missing.structuredContent).toBeUndefined();
    expect(details(missing)).toMatchObject({ problem: { status: 404, error: 'not_found' } });
  });

  it('a destructive tool without confirmation changes nothing, and says what would change', async () => {
    const id = await createCertificate(stdio, 'revoke');
    const before = await api.getCertificate({ path: { id } });
    const refused = await call(stdio, 'revoke_certificate', { id, reason: 'superseded' });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/^revoke_certificate: confirmation needed; nothing changed\. Ask the user/);
    expect(text(refused)).toContain(`${id} "${before.name}"`);
    expect(text(refused)).toMatch(/confirm: true/);
    expect(details(refused)).toMatchObject({ confirmation_required: true, changed: false });
    expect((await api.getCertificate({ path: { id } })).status).toBe(before.status);

    const bulk = await call(stdio, 'svc_bulk_revoke_certificates', {
      certificate_ids: [id],
      reason: 'superseded',
    });
    expect(bulk.isError).toBe(true);
    expect(text(bulk)).toMatch(/1 certificate by id/);
    expect((await api.getCertificate({ path: { id } })).status).toBe(before.status);

    const done = await call(stdio, 'svc_bulk_revoke_certificates', {
      certificate_ids: [id],
      reason: 'superseded',
      confirm: true,
    });
    expect(done.isError, text(done)).toBeFalsy();
    expect(done.structuredContent).toMatchObject({ total_matched: 1, total_failed: 0 });
    expect((await api.getCertificate({ path: { id } })).status).toBe('Revoked');
  });

  it('reads a certificate as a resource: a decoded summary, then the PEM', async () => {
    const id = await createCertificate(stdio, 'resource');
    await issued(stdio, id);
    const { resourceTemplates } = await stdio.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual([
      'certwright://certificates/{id}',
      'certwright://issuers/{id}/chain',
    ]);
    const { resources } = await stdio.listResources();
    expect(resources[0]?.uri).toBe('certwright://dashboard');
    expect(resources.map((r) => r.uri)).toContain(`certwright://certificates/${id}`);

    const read = await stdio.readResource({ uri: `certwright://certificates/${id}` });
    const content = read.contents[0] as { uri: string; mimeType: string; text: string };
    expect(content).toMatchObject({ uri: `certwright://certificates/${id}`, mimeType: 'text/plain' });
    expect(content.text).toMatch(new RegExp(`^Certificate ${id} "mcp-`));
    expect(content.text).toMatch(/Status: Active/);
    expect(content.text).toMatch(/Owner: Default owner \(own-default\)/);
    expect(content.text).toMatch(/Subject: CN=mcp-\d+-resource-\d+\.example\.test/);
    expect(content.text).toMatch(/Valid: .* \(expires in \d+ days\)/);
    expect(content.text).toMatch(/Subject alternative names: DNS:mcp-/);
    expect(content.text).toMatch(/Key: ECDSA, 256 bits/);
    expect(content.text).toMatch(/-----BEGIN CERTIFICATE-----[\s\S]+-----END CERTIFICATE-----\n$/);

    const chain = await stdio.readResource({ uri: 'certwright://issuers/iss-local/chain' });
    expect((chain.contents[0] as { text: string }).text).toMatch(/^-----BEGIN CERTIFICATE-----/);
    const dashboard = await stdio.readResource({ uri: 'certwright://dashboard' });
    expect(JSON.parse((dashboard.contents[0] as { text: string }).text)).toHaveProperty('certificates');
    await expect(stdio.readResource({ uri: 'certwright://certificates/mc-none' })).rejects.toThrow(
      /resource not found/,
    );
  });

  it('offers the three prompts; explain_certificate embeds the certificate', async () => {
    const { prompts } = await stdio.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([
      'expiring_certificates',
      'explain_certificate',
      'renew_policy_flagged',
    ]);
    const expiring = await stdio.getPrompt({ name: 'expiring_certificates', arguments: { days: '7' } });
    const instructions = (expiring.messages[0]?.content as { text: string } | undefined)?.text ?? '';
    expect(instructions).toMatch(/within the next 7 days/);
    expect(instructions).toMatch(/list_certificates with expires_after "\d{4}-.*Z", expires_before "\d{4}-/);
    await expect(
      stdio.getPrompt({ name: 'expiring_certificates', arguments: { days: 'soon' } }),
    ).rejects.toThrow(/days must be a whole number/);

    const id = await createCertificate(stdio, 'explain');
    const explain = await stdio.getPrompt({ name: 'explain_certificate', arguments: { id } });
    expect(explain.messages[0]?.content).toMatchObject({
      type: 'resource',
      resource: { uri: `certwright://certificates/${id}`, mimeType: 'text/plain' },
    });
    expect((explain.messages[1]?.content as { text: string } | undefined)?.text).toMatch(
      /^Explain this certificate/,
    );
  });
});

describe('a host that supports elicitation', () => {
  let mcp: Client;
  const asked: string[] = [];
  let reply: ElicitResult = { action: 'decline' };
  beforeAll(async () => {
    mcp = new Client(
      { name: 'certwright-test', version: '1.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    mcp.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return reply;
    });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createMcpServer(api).connect(a);
    await mcp.connect(b);
    await mcp.listTools();
  });
  afterAll(() => mcp?.close());

  it('asks the user, and changes nothing unless they accept (confirm: true is not enough)', async () => {
    const id = await createCertificate(mcp, 'elicit');
    const name = (await api.getCertificate({ path: { id } })).name;
    const declined = await call(mcp, 'archive_certificate', { id, confirm: true });
    expect(declined.isError).toBe(true);
    expect(text(declined)).toMatch(/not confirmed by the user \(decline\); nothing changed/);
    expect(asked.at(-1)).toMatch(new RegExp(`^Archive a certificate: ${id} "${name}".*\\. Go ahead\\?$`));
    expect((await api.getCertificate({ path: { id } })).status).not.toBe('Archived');

    reply = { action: 'accept', content: { confirm: false } };
    expect((await call(mcp, 'archive_certificate', { id })).isError).toBe(true);
    expect((await api.getCertificate({ path: { id } })).status).not.toBe('Archived');

    reply = { action: 'accept', content: { confirm: true } };
    const archived = await call(mcp, 'archive_certificate', { id });
    expect(archived.isError, text(archived)).toBeFalsy();
    expect((await api.getCertificate({ path: { id } })).status).toBe('Archived');
    expect(asked).toHaveLength(3);
  });

  it('names the fields an update would change', async () => {
    const id = await createCertificate(mcp, 'update');
    reply = { action: 'cancel' };
    await call(mcp, 'update_certificate', { id, environment: 'production' });
    expect(asked.at(-1)).toMatch(/changes environment null → "production"/);
  });
});

describe('arguments are checked before anything is sent', () => {
  it('rejects invalid arguments by the schema, and retire_agent force without reason', async () => {
    const stub = await startStubServer(() => ({ status: 204 }));
    const client = createClient({ baseUrl: stub.url, caBundlePath: stub.caPath });
    const mcp = new Client({ name: 'certwright-test', version: '1.0.0' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const mcpServer = createMcpServer(client, { toolsets: TOOLSETS });
    await mcpServer.connect(a);
    await mcp.connect(b);
    try {
      const missing = await call(mcp, 'create_certificate', { name: 'x' });
      expect(missing.isError).toBe(true);
      expect(text(missing)).toMatch(/invalid arguments for create_certificate: .*renewal_policy_id/);
      expect((await call(mcp, 'list_certificates', { per_page: 'many' })).isError).toBe(true);
      expect(text(await call(mcp, 'list_certificates', { per_page: 501 }))).toMatch(
        /per_page must be <= 500/,
      );
      expect(text(await call(mcp, 'get_certificate', { id: 'x', surprise: 1 }))).toMatch(/surprise/);
      expect(text(await call(mcp, 'retire_agent', { id: 'agent-1', force: true }))).toMatch(
        /force requires reason/,
      );
      expect(text(await call(mcp, 'agent_heartbeat', { id: 'agent-1' }))).toMatch(
        /unknown tool agent_heartbeat/,
      );
      expect(stub.requests).toHaveLength(0);

      const sent = await call(mcp, 'retire_agent', {
        id: 'agent-1',
        force: true,
        reason: 'gone',
        confirm: true,
      });
      expect(sent.isError).toBeFalsy();
      expect(stub.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        'DELETE /api/v1/agents/agent-1?force=true&reason=gone',
      ]);
    } finally {
      await mcp.close();
      await mcpServer.close();
      await client.close();
      await stub.close();
    }
  });
});

function runBin(
  args: string[],
  extra: Record<string, string> = {},
): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...NODE_ARGS, ...args],
      { env: { PATH: process.env.PATH ?? '', ...extra } },
      (error, out, err) => resolve({ code: typeof error?.code === 'number' ? error.code : 0, out, err }),
    );
  });
}

describe('start-up and the streamable HTTP transport', () => {
  it('refuses an http:// server URL and an unknown toolset at start-up', async () => {
    const http = await runBin([], { ...env(), SVC_SERVER_URL: 'http://127.0.0.1:8443' });
    expect(http.code).toBe(2);
    expect(http.err.trim().split('\n')).toHaveLength(1);
    expect(http.err).toMatch(/docs\/clients\/https-upgrade\.md/);
    const toolset = await runBin(['--toolsets', 'inventory,certs'], env());
    expect(toolset.code).toBe(2);
    expect(toolset.err).toMatch(/^certwright-mcp: --toolsets: unknown certs/);
  });

  it('lists the chosen tools and the size of tools/list without any configuration', async () => {
    const listed = await runBin(['--list-tools', '--toolsets', 'audit,fleet', '--read-only']);
    expect(listed.code, listed.err).toBe(0);
    expect(listed.out).toMatch(/^toolsets: audit, fleet \(read-only\)\n/);
    expect(listed.out).toMatch(/\n\d+ tools, tools\/list \d+ bytes\n/);
    expect(listed.out).toMatch(/ {2}export_audit +read +Export audit\n/);
    expect(listed.out).not.toMatch(/retire_agent/);
  });

  it('lists tools, reads a certificate and refuses an unconfirmed change over streamable HTTP', async () => {
    const id = await createCertificate(stdio, 'http');
    const child: ChildProcess = spawn(process.execPath, [...NODE_ARGS, '--http', '0'], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let output = '';
        child.stderr?.on('data', (d) => {
          output += d;
          const match = /listening on (http:\/\/\S+)/.exec(output);
          if (match) resolve(match[1] as string);
        });
        child.once('exit', () => reject(new Error(`certwright-mcp exited: ${output}`)));
      });
      const http = new Client(
        { name: 'certwright-test', version: '1.0.0' },
        { capabilities: { elicitation: {} } },
      );
      await http.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        const listed = await http.listTools();
        expect(listed.tools.length).toBeLessThanOrEqual(40);
        expect(listed.tools.map((t) => t.name)).toContain('svc_bulk_revoke_certificates');
        const version = await call(http, 'get_version', {});
        expect(version.isError).toBeFalsy();
        expect(version.structuredContent).toHaveProperty('version');
        const read = await http.readResource({ uri: `certwright://certificates/${id}` });
        expect((read.contents[0] as { text: string }).text).toMatch(new RegExp(`^Certificate ${id} `));
        // Each request is its own stateless exchange: the server cannot ask back, so confirm: true it is.
        const refused = await call(http, 'delete_certificate', { id });
        expect(text(refused)).toMatch(/confirmation needed; nothing changed/);
        expect((await api.getCertificate({ path: { id } })).id).toBe(id);
      } finally {
        await http.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
  });
});
