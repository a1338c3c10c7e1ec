/**
 * certwright-mcp through the SDK's own client: over stdio (the bin as a subprocess) and over
 * streamable HTTP, against a real certwright-server over TLS 1.3 on 127.0.0.1.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createClient, operations } from '@certwright/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildDocument } from '../../client/scripts/openapi-source.js';
import {
  API_KEY,
  startStubServer,
  startTestServer,
  type TestServer,
} from '../../client/test/support/server.js';
import { createMcpServer, toolNameOf } from '../src/index.js';

const BIN = fileURLToPath(new URL('../src/bin.ts', import.meta.url));
const NODE_ARGS = ['--conditions=source', '--import', 'tsx', BIN];

let server: TestServer;
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
  stdio = new Client({ name: 'certwright-test', version: '1.0.0' });
  await stdio.connect(
    new StdioClientTransport({ command: process.execPath, args: NODE_ARGS, env: env(), stderr: 'pipe' }),
  );
  tools = (await stdio.listTools()).tools;
});
afterAll(async () => {
  await stdio?.close();
  server?.stop();
});

const call = async (client: Client, name: string, args: Record<string, unknown>) =>
  (await client.callTool({ name, arguments: args })) as CallToolResult;
const tool = (name: string) => {
  const found = tools.find((t) => t.name === name);
  expect(found, name).toBeDefined();
  return found as Tool;
};

describe('tools over stdio', () => {
  it('lists one tool per REST operation of the OpenAPI document', async () => {
    const document = await buildDocument();
    const ids = Object.values(document.paths).flatMap((item) =>
      Object.values(item).map((operation) => (operation as { operationId: string }).operationId),
    );
    const names = new Set(tools.map((t) => t.name));
    for (const id of ids) {
      const op = operations.get(id);
      expect(op, `${id} is not in the generated table`).toBeDefined();
      expect(names, id).toContain(toolNameOf(op!));
    }
    expect(tools).toHaveLength(ids.length);
  });

  it('has the tools and inputs the interface fixes', () => {
    const retire = tool('retire_agent');
    expect(Object.keys(retire.inputSchema.properties ?? {})).toEqual(
      expect.arrayContaining(['id', 'force', 'reason']),
    );
    expect(retire.annotations?.destructiveHint).toBe(true);
    for (const name of [
      'svc_bulk_revoke_certificates',
      'svc_bulk_renew_certificates',
      'svc_bulk_reassign_certificates',
    ]) {
      expect(tool(name).inputSchema.properties).toHaveProperty('certificate_ids');
    }
    expect(tool('svc_bulk_revoke_certificates').annotations?.destructiveHint).toBe(true);
    expect(tool('svc_bulk_reassign_certificates').annotations?.destructiveHint).toBe(true);
    expect(tool('create_policy').inputSchema.required).toEqual(expect.arrayContaining(['name', 'type']));
    const update = tool('update_policy');
    expect(update.inputSchema.properties).toHaveProperty('severity');
    expect(update.inputSchema.required ?? []).not.toContain('severity');
    expect(tool('create_certificate').inputSchema.required).toEqual(
      expect.arrayContaining(['renewal_policy_id', 'owner_id']),
    );
    expect(tool('create_target').inputSchema.required).toEqual(
      expect.arrayContaining(['agent_id', 'name', 'type']),
    );
    const list = tool('list_certificates');
    expect(list.annotations).toMatchObject({ readOnlyHint: true, destructiveHint: false });
    expect(list.description).toMatch(/Read-only/);
  });

  it('creates certificates and revokes them in bulk', async () => {
    const ids: string[] = [];
    for (const i of [0, 1]) {
      const created = await call(stdio, 'create_certificate', {
        name: `mcp-${process.pid}-${i}`,
        common_name: `mcp-${process.pid}-${i}.example.test`,
        owner_id: 'own-default',
        team_id: 'team-default',
        renewal_policy_id: 'rp-default',
        issuer_id: 'iss-local',
      });
      expect(created.isError, JSON.stringify(created.content)).toBeFalsy();
      expect(created.structuredContent).toMatchObject({ status: 'Pending' });
      expect((created.content[0] as { text: string }).text).toMatch(/^create_certificate: \S+ \(mcp-/);
      ids.push((created.structuredContent as { id: string }).id);
    }
    const listed = await call(stdio, 'list_certificates', { search: `mcp-${process.pid}` });
    expect(listed.structuredContent).toMatchObject({ total: 2 });
    expect((listed.content[0] as { text: string }).text).toMatch(/^2 of 2 \(page 1/);

    const revoked = await call(stdio, 'svc_bulk_revoke_certificates', {
      certificate_ids: ids,
      reason: 'superseded',
    });
    expect(revoked.isError, JSON.stringify(revoked.content)).toBeFalsy();
    expect(revoked.structuredContent).toMatchObject({ total_matched: 2, total_failed: 0 });
    const after = await call(stdio, 'get_certificate', { id: ids[0] });
    expect(after.structuredContent).toMatchObject({ status: 'Revoked' });
  });

  it('answers a server problem as a tool error carrying the detail', async () => {
    const missing = await call(stdio, 'get_certificate', { id: 'cert-nope' });
    expect(missing.isError).toBe(true);
    expect((missing.content[0] as { text: string }).text).toMatch(/^404 /);
    expect(missing.structuredContent).toMatchObject({ problem: { status: 404, error: 'not_found' } });
  });
});

describe('arguments are checked before anything is sent', () => {
  it('rejects invalid arguments by the schema, and retire_agent force without reason', async () => {
    const stub = await startStubServer(() => ({ status: 204 }));
    const client = createClient({ baseUrl: stub.url, caBundlePath: stub.caPath });
    const mcp = new Client({ name: 'certwright-test', version: '1.0.0' });
    const [a, b] = InMemoryTransport.createLinkedPair();
    const server = createMcpServer(client);
    await server.connect(a);
    await mcp.connect(b);
    try {
      const missing = await call(mcp, 'create_certificate', { name: 'x' });
      expect(missing.isError).toBe(true);
      expect((missing.content[0] as { text: string }).text).toMatch(
        /invalid arguments for create_certificate: .*renewal_policy_id/,
      );
      const wrongType = await call(mcp, 'list_certificates', { per_page: 'many' });
      expect(wrongType.isError).toBe(true);
      const unknown = await call(mcp, 'get_certificate', { id: 'x', surprise: 1 });
      expect((unknown.content[0] as { text: string }).text).toMatch(/surprise/);
      const retire = await call(mcp, 'retire_agent', { id: 'agent-1', force: true });
      expect((retire.content[0] as { text: string }).text).toMatch(/force requires reason/);
      expect(stub.requests).toHaveLength(0);

      const sent = await call(mcp, 'retire_agent', { id: 'agent-1', force: true, reason: 'gone' });
      expect(sent.isError).toBeFalsy();
      expect(stub.requests.map((r) => `${r.method} ${r.url}`)).toEqual([
        'DELETE /api/v1/agents/agent-1?force=true&reason=gone',
      ]);
    } finally {
      await mcp.close();
      await server.close();
      await client.close();
      await stub.close();
    }
  });
});

describe('start-up and the streamable HTTP transport', () => {
  it('refuses an http:// server URL at start-up, naming the upgrade guide', async () => {
    const result = await new Promise<{ code: number; err: string }>((resolve) => {
      execFile(
        process.execPath,
        NODE_ARGS,
        { env: { ...env(), SVC_SERVER_URL: 'http://127.0.0.1:8443' } },
        (error, _out, err) => resolve({ code: typeof error?.code === 'number' ? error.code : 0, err }),
      );
    });
    expect(result.code).toBe(2);
    expect(result.err.trim().split('\n')).toHaveLength(1);
    expect(result.err).toMatch(/docs\/clients\/https-upgrade\.md/);
  });

  it('lists tools and calls one over streamable HTTP', async () => {
    const child: ChildProcess = spawn(process.execPath, [...NODE_ARGS, '--http', '0'], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let text = '';
        child.stderr?.on('data', (d) => {
          text += d;
          const match = /listening on (http:\/\/\S+)/.exec(text);
          if (match) resolve(match[1] as string);
        });
        child.once('exit', () => reject(new Error(`certwright-mcp exited: ${text}`)));
      });
      const http = new Client({ name: 'certwright-test', version: '1.0.0' });
      await http.connect(new StreamableHTTPClientTransport(new URL(url)));
      try {
        const listed = await http.listTools();
        expect(listed.tools.map((t) => t.name)).toContain('svc_bulk_revoke_certificates');
        const version = await call(http, 'get_version', {});
        expect(version.isError).toBeFalsy();
        expect(version.structuredContent).toHaveProperty('version');
      } finally {
        await http.close();
      }
    } finally {
      child.kill('SIGTERM');
    }
  });
});
