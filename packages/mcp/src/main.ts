import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs } from 'node:util';
import {
  type CertwrightClient,
  CertwrightClientError,
  CLIENT_VERSION,
  clientOptionsFromEnv,
  createClient,
} from '@certwright/client';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { buildTools, createMcpServer, listedTool, type McpServerOptions } from './server.js';
import { DEFAULT_TOOLSETS, parseToolsets, TOOLSET_DESCRIPTIONS, TOOLSETS } from './toolsets.js';

const USAGE = `Usage: certwright-mcp [--toolsets <sets>] [--read-only] [--http <port>] [--host <address>]
       certwright-mcp --list-tools [--toolsets <sets>] [--read-only]

Serves the certwright REST API as MCP tools, resources and prompts: over stdio by default, or
over streamable HTTP at http://<host>:<port>/mcp with --http (loopback only; 0 picks a free port).

  --toolsets <sets>  comma-separated, or all: ${TOOLSETS.join(', ')}
                     (default ${DEFAULT_TOOLSETS.join(',')})
  --read-only        only the tools that change nothing
  --list-tools       print the chosen tools and the size of tools/list, then exit (no server needed)

Configuration (environment): SVC_SERVER_URL (https:// only), SVC_API_KEY or SVC_API_KEY_FILE,
SVC_SERVER_CA_BUNDLE_PATH, SVC_SERVER_TLS_INSECURE_SKIP_VERIFY. See docs/clients/mcp.md.
`;

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost']);

export interface McpMainIo {
  env: Record<string, string | undefined>;
  stderr: { write(text: string): unknown };
  /** Only --list-tools writes here: on stdio, stdout is the protocol's. */
  stdout?: { write(text: string): unknown };
}

/** Start-up: a configuration problem (an http:// URL first of all) is one line on stderr and exit code 2. */
export async function main(argv: string[], io: McpMainIo): Promise<number | { close(): Promise<void> }> {
  let flags: {
    http?: string;
    host?: string;
    help?: boolean;
    version?: boolean;
    toolsets?: string;
    'read-only'?: boolean;
    'list-tools'?: boolean;
  };
  let chosen: McpServerOptions;
  try {
    flags = parseArgs({
      args: argv,
      options: {
        http: { type: 'string' },
        host: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
        version: { type: 'boolean' },
        toolsets: { type: 'string' },
        'read-only': { type: 'boolean' },
        'list-tools': { type: 'boolean' },
      },
      strict: true,
    }).values;
    chosen = { toolsets: parseToolsets(flags.toolsets), readOnly: flags['read-only'] === true };
  } catch (error) {
    io.stderr.write(`certwright-mcp: ${(error as Error).message}\n${USAGE}`);
    return 2;
  }
  if (flags.help) {
    io.stderr.write(USAGE);
    return 0;
  }
  if (flags.version) {
    io.stderr.write(`${CLIENT_VERSION}\n`);
    return 0;
  }
  if (flags['list-tools']) {
    (io.stdout ?? io.stderr).write(toolList(chosen));
    return 0;
  }
  let client: CertwrightClient;
  try {
    const options = clientOptionsFromEnv(io.env);
    if (!options.baseUrl)
      throw new CertwrightClientError(
        'SVC_SERVER_URL is not set (the https:// URL of the certwright server)',
      );
    client = createClient({
      ...options,
      baseUrl: options.baseUrl,
      userAgent: `certwright-mcp/${CLIENT_VERSION}`,
      // stdout is the protocol channel: diagnostics go to stderr only.
      warn: (message) => io.stderr.write(`certwright-mcp: warning: ${message}\n`),
    });
  } catch (error) {
    io.stderr.write(`certwright-mcp: ${(error as Error).message}\n`);
    return 2;
  }

  if (flags.http === undefined) {
    const server = createMcpServer(client, chosen);
    await server.connect(new StdioServerTransport());
    return {
      close: async () => {
        await server.close();
        await client.close();
      },
    };
  }
  const host = flags.host ?? '127.0.0.1';
  const port = Number(flags.http);
  if (!LOOPBACK.has(host)) {
    io.stderr.write(
      `certwright-mcp: --host ${host} refused: the HTTP transport has no authentication of its own, so it listens on loopback only\n`,
    );
    return 2;
  }
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    io.stderr.write(`certwright-mcp: --http must be a port number (got ${JSON.stringify(flags.http)})\n`);
    return 2;
  }
  const http = await serveHttp(client, host, port, chosen);
  const address = http.address() as AddressInfo;
  io.stderr.write(
    `certwright-mcp: listening on http://${host.includes(':') ? `[${host}]` : host}:${address.port}/mcp\n`,
  );
  return {
    close: async () => {
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await client.close();
    },
  };
}

/** Streamable HTTP, stateless: every POST gets its own server and transport. */
async function serveHttp(
  client: CertwrightClient,
  host: string,
  port: number,
  options: McpServerOptions,
): Promise<HttpServer> {
  const http = createServer(async (req, res) => {
    if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') {
      res.writeHead(404).end();
      return;
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' }).end();
      return;
    }
    const { port: bound } = http.address() as AddressInfo;
    const server = createMcpServer(client, options);
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
      // A web page must not reach the tools through the user's browser (DNS rebinding).
      enableDnsRebindingProtection: true,
      allowedHosts: [`127.0.0.1:${bound}`, `localhost:${bound}`, `[::1]:${bound}`],
    });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res);
  });
  await new Promise<void>((resolve) => http.listen(port, host, resolve));
  return http;
}

/** `--list-tools`: what a host would be offered, and what it costs in its context. */
function toolList(options: McpServerOptions): string {
  const tools = buildTools(options);
  const bytes = Buffer.byteLength(JSON.stringify({ tools: tools.map(listedTool) }));
  const sets = options.toolsets ?? DEFAULT_TOOLSETS;
  const lines = [
    `toolsets: ${sets.join(', ')}${options.readOnly ? ' (read-only)' : ''}`,
    ...sets.map((s) => `  ${s}: ${TOOLSET_DESCRIPTIONS[s]}`),
    `${tools.length} tools, tools/list ${bytes} bytes`,
    ...tools.map(
      (t) =>
        `  ${t.name.padEnd(36)} ${t.annotations.readOnlyHint ? 'read       ' : t.annotations.destructiveHint ? 'destructive' : 'additive   '} ${t.title}`,
    ),
  ];
  return `${lines.join('\n')}\n`;
}
