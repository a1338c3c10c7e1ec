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
  ElicitResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describeChange } from './changes.js';
import { availablePrompts } from './prompts.js';
import { listResources, RESOURCE_TEMPLATES, readResource } from './resources.js';
import { inputOf, type ToolSpec, toolOf } from './tools.js';
import { CLASSES, DEFAULT_TOOLSETS, NEVER_TOOLS, type Toolset } from './toolsets.js';

export interface McpServerOptions {
  /** The toolsets offered (default: inventory and lifecycle). */
  toolsets?: readonly Toolset[];
  /** Only tools that change nothing. */
  readOnly?: boolean;
}

/** The tools of the chosen toolsets, each from one REST operation, sorted by name. */
export function buildTools(options: McpServerOptions = {}): ToolSpec[] {
  const sets = new Set(options.toolsets ?? DEFAULT_TOOLSETS);
  return [...operations.values()]
    .filter((op) => !NEVER_TOOLS.has(op.operationId))
    .filter((op) => {
      const tool = CLASSES[op.operationId];
      return tool !== undefined && sets.has(tool.toolset) && (!options.readOnly || tool.effect === 'read');
    })
    .map(toolOf)
    .sort((a, b) => a.name.localeCompare(b.name));
}

/** tools/list as a host receives it. */
export const listedTool = (t: ToolSpec) => ({
  name: t.name,
  title: t.title,
  description: t.description,
  inputSchema: t.inputSchema,
  outputSchema: t.outputSchema,
  annotations: t.annotations,
});

/**
 * The MCP server: tools of the chosen toolsets, validated before anything is sent, destructive
 * ones confirmed by the user; resources (certificates, issuer chains, the dashboard) and prompts.
 */
export function createMcpServer(client: CertwrightClient, options: McpServerOptions = {}): Server {
  const tools = buildTools(options);
  const byName = new Map(tools.map((t) => [t.name, t]));
  const sets = new Set(options.toolsets ?? DEFAULT_TOOLSETS);
  const withResources = sets.has('inventory');
  const prompts = availablePrompts(new Set(byName.keys()));
  // Formats are checked by the server; the schemas carry patterns where a format matters.
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
  const validators = new Map<string, ValidateFunction>();
  const validator = (tool: ToolSpec) => {
    let v = validators.get(tool.name);
    if (!v) {
      v = ajv.compile(tool.validationSchema);
      validators.set(tool.name, v);
    }
    return v;
  };

  const server = new Server(
    { name: 'certwright', version: CLIENT_VERSION },
    {
      capabilities: {
        tools: {},
        ...(withResources ? { resources: {} } : {}),
        ...(prompts.length > 0 ? { prompts: {} } : {}),
      },
      instructions:
        'Tools of a certwright certificate lifecycle server. List before you change: find ids with the list_* ' +
        'tools. Destructive tools (revoke, retire, delete, deactivate, reassign, overwrite) describe the change and ' +
        'ask the user to confirm it before anything happens. Errors carry the server problem detail and name the ' +
        'invalid fields.' +
        (withResources
          ? ' Resources: certwright://certificates/{id} (decoded summary and PEM), certwright://issuers/{id}/chain, certwright://dashboard.'
          : ''),
    },
  );

  /** Form elicitation: declared as such, or as the empty object of the first elicitation revision. */
  const canElicit = () => {
    const elicitation = server.getClientCapabilities()?.elicitation as Record<string, unknown> | undefined;
    return (
      elicitation !== undefined && (elicitation.form !== undefined || Object.keys(elicitation).length === 0)
    );
  };

  /**
   * undefined: go ahead; a result: nothing was changed, and this says why. A host that can ask
   * the user is asked through elicitation (confirm is then not enough); any other host gets the
   * description back and must call again with confirm: true.
   */
  const confirmation = async (
    tool: ToolSpec,
    args: Record<string, unknown>,
  ): Promise<CallToolResult | undefined> => {
    if (!canElicit()) {
      if (args.confirm === true) return undefined;
      const change = await describeChange(client, tool, args);
      return refusal(
        tool,
        change,
        `confirmation needed; nothing changed. Ask the user whether to go ahead with: ${change}. If they agree, call ${tool.name} again with the same arguments and confirm: true.`,
      );
    }
    const change = await describeChange(client, tool, args);
    const answer = await server.request(
      {
        method: 'elicitation/create',
        params: {
          mode: 'form',
          message: `${change}. Go ahead?`,
          requestedSchema: {
            type: 'object',
            properties: { confirm: { type: 'boolean', title: 'Go ahead', description: change } },
            required: ['confirm'],
          },
        },
      },
      ElicitResultSchema,
    );
    if (answer.action === 'accept' && answer.content?.confirm === true) return undefined;
    return refusal(tool, change, `not confirmed by the user (${answer.action}); nothing changed`);
  };

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: tools.map(listedTool) }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const tool = byName.get(request.params.name);
    if (!tool) return failure(`unknown tool ${request.params.name} (not in the toolsets this server offers)`);
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
      if (tool.effect === 'destructive') {
        const refused = await confirmation(tool, args);
        if (refused) return refused;
      }
      const answer = await client.callRaw(tool.operation.operationId, inputOf(tool, args));
      return success(tool, answer);
    } catch (error) {
      return problem(error);
    }
  });

  if (withResources) {
    server.setRequestHandler(ListResourcesRequestSchema, async (request) =>
      listResources(client, request.params?.cursor),
    );
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: RESOURCE_TEMPLATES,
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request) =>
      readResource(client, request.params.uri),
    );
  }
  if (prompts.length > 0) {
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({
      prompts: prompts.map(({ requires: _requires, render: _render, ...prompt }) => prompt),
    }));
    server.setRequestHandler(GetPromptRequestSchema, async (request) => {
      const prompt = prompts.find((p) => p.name === request.params.name);
      if (!prompt) throw new McpError(ErrorCode.InvalidParams, `unknown prompt ${request.params.name}`);
      return prompt.render(client, request.params.arguments ?? {});
    });
  }
  return server;
}

function problem(error: unknown): CallToolResult {
  if (error instanceof ProblemError) {
    const p = error.problem;
    const fields = p.errors?.length ? ` (${p.errors.map((e) => `${e.field}: ${e.message}`).join('; ')})` : '';
    return failure(`${p.status} ${p.title}: ${p.detail}${fields}`, { problem: p });
  }
  if (error instanceof ConnectionError) return failure(error.message, { connection: error.kind });
  return failure(error instanceof Error ? error.message : String(error));
}

/**
 * A tool error: its text for the model, and the details as JSON in a second text block. Not as
 * structured content: hosts check that against the tool's output schema, errors included.
 */
function failure(text: string, details?: Record<string, unknown>): CallToolResult {
  return {
    isError: true,
    content: [
      { type: 'text', text },
      ...(details ? [{ type: 'text' as const, text: JSON.stringify(details) }] : []),
    ],
  };
}

/** A destructive call that did not happen: what it would have changed, and how to go ahead. */
function refusal(tool: ToolSpec, change: string, text: string): CallToolResult {
  return failure(`${tool.name}: ${text}`, {
    confirmation_required: true,
    would_change: change,
    changed: false,
  });
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
