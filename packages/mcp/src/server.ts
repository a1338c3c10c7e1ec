import {
  type CertwrightClient,
  CLIENT_VERSION,
  ConnectionError,
  operations,
  ProblemError,
} from '@certwright/client';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { inputOf, type ToolSpec, toolOf } from './tools.js';

/** Every REST operation as a tool, each with its compiled input validator. */
export function buildTools(): ToolSpec[] {
  return [...operations.values()].map(toolOf).sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * The MCP server: tools/list from the generated operation table; tools/call validates the
 * arguments against the tool's schema (nothing is sent otherwise) and calls the REST API.
 */
export function createMcpServer(client: CertwrightClient): Server {
  const tools = buildTools();
  const byName = new Map(tools.map((t) => [t.name, t]));
  // Formats are checked by the server; the schemas carry patterns where a format matters.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const validators = new Map<string, ValidateFunction>();
  const validator = (tool: ToolSpec) => {
    let v = validators.get(tool.name);
    if (!v) {
      v = ajv.compile(tool.inputSchema);
      validators.set(tool.name, v);
    }
    return v;
  };

  const server = new Server(
    { name: 'certwright', version: CLIENT_VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        'Tools of a certwright certificate lifecycle server. List before you change: find ids with the list_* ' +
        'tools. Tools marked destructive (revoke, retire, delete, archive, reassign) cannot be undone; confirm ' +
        'with the user first. Errors carry the server problem detail and name the invalid fields.',
    },
  );
  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: tools.map((t) => ({
      name: t.name,
      title: t.title,
      description: t.description,
      inputSchema: t.inputSchema,
      annotations: t.annotations,
    })),
  }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) return failure(`unknown tool ${request.params.name}`);
    const args = (request.params.arguments ?? {}) as Record<string, unknown>;
    const validate = validator(tool);
    if (!validate(args)) {
      const problems = (validate.errors ?? []).map(
        (e) =>
          `${e.instancePath ? e.instancePath.slice(1).replace(/\//g, '.') : 'arguments'} ${e.message}${e.keyword === 'additionalProperties' ? ` (${(e.params as { additionalProperty: string }).additionalProperty})` : ''}`,
      );
      return failure(`invalid arguments for ${tool.name}: ${problems.join('; ')}`, { errors: problems });
    }
    if (tool.name === 'retire_agent' && (args.force === true || args.force === 'true') && !args.reason) {
      return failure(
        'retire_agent: force requires reason (why the agent is retired despite its dependencies)',
      );
    }
    try {
      const answer = await client.callRaw(tool.operation.operationId, inputOf(tool, args));
      return success(tool, answer);
    } catch (error) {
      if (error instanceof ProblemError) {
        const p = error.problem;
        const fields = p.errors?.length
          ? ` (${p.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})`
          : '';
        return failure(`${p.status} ${p.title}: ${p.detail}${fields}`, { problem: p });
      }
      if (error instanceof ConnectionError) return failure(error.message, { connection: error.kind });
      return failure(error instanceof Error ? error.message : String(error));
    }
  });
  return server;
}

function failure(text: string, structured?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [{ type: 'text', text }],
    ...(structured ? { structuredContent: structured } : {}),
  };
}

/** Structured content for the host, and a short summary a model can read at a glance. */
function success(tool: ToolSpec, answer: unknown): CallToolResult {
  if (answer === undefined)
    return { content: [{ type: 'text', text: `${tool.name}: done` }], structuredContent: { ok: true } };
  const binary = answer as { contentType?: string; bytes?: Uint8Array };
  if (binary.bytes instanceof Uint8Array && typeof binary.contentType === 'string') {
    const textual = /pem|text|ndjson/.test(binary.contentType);
    const data = textual
      ? new TextDecoder().decode(binary.bytes)
      : Buffer.from(binary.bytes).toString('base64');
    return {
      content: [
        {
          type: 'text',
          text: textual
            ? data
            : `${binary.contentType}, ${binary.bytes.byteLength} bytes (base64 in structured content)`,
        },
      ],
      structuredContent: { content_type: binary.contentType, [textual ? 'text' : 'base64']: data },
    };
  }
  const structured =
    answer !== null && typeof answer === 'object' && !Array.isArray(answer)
      ? (answer as Record<string, unknown>)
      : { items: answer };
  return { content: [{ type: 'text', text: summary(tool, structured) }], structuredContent: structured };
}

function summary(tool: ToolSpec, value: Record<string, unknown>): string {
  if (Array.isArray(value.data) && typeof value.total === 'number') {
    const items = value.data as Record<string, unknown>[];
    const shown = items
      .slice(0, 20)
      .map((i) =>
        [i.id, i.name ?? i.common_name, i.status].filter((x) => x !== undefined && x !== null).join(' '),
      )
      .join('; ');
    // The certificate list estimates totals above 1,000 matches (docs/api/inventory.md).
    const about = value.total_estimated === true ? 'about ' : '';
    return `${items.length} of ${about}${value.total} (page ${value.page}, ${value.per_page} per page)${shown ? `: ${shown}` : ''}`;
  }
  const counts = Object.entries(value).filter(([, v]) => typeof v === 'number');
  if (typeof value.id === 'string') {
    return `${tool.name}: ${value.id}${value.name ? ` (${value.name})` : ''}${value.status ? `, status ${value.status}` : ''}`;
  }
  if (counts.length > 0) return `${tool.name}: ${counts.map(([k, v]) => `${k} ${v}`).join(', ')}`;
  const text = JSON.stringify(value);
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}
