import { once } from 'node:events';
import { createWriteStream, writeFileSync } from 'node:fs';
import {
  type BinaryBody,
  type CertwrightClient,
  CLIENT_VERSION,
  createClient,
  type OperationSpec,
  operations,
  type RawInput,
} from '@certwright/client';
import { Command, CommanderError, Option } from 'commander';
import { completionScript } from './completion.js';
import { type ConnectionFlags, readConfigFile, resolveClientOptions } from './config.js';
import { BULK, confirmBulk, previewBulk, previewHeadline } from './confirm.js';
import { EXIT, exitCodeOf, messageOf, UsageError } from './exit-codes.js';
import { type FlagSpec, flagsOf, parseValue, readBodyOption } from './inputs.js';
import { type CommandName, commandTable } from './naming.js';
import { BASELINE, type OneShotOptions, oneShotCertificate, signCsr } from './oneshot.js';
import { type Format, parseFormat, render, rowsOf, shownColumns } from './output.js';
import { createProgress } from './progress.js';
import { resolveNames } from './references.js';
import { parseInstant, validityDays } from './times.js';

export interface CliIo {
  stdout: { write(data: string | Uint8Array): unknown; isTTY?: boolean };
  stderr: { write(data: string): unknown; isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Standard input, read whole (for `--body-file -`). */
  stdin: () => string;
  /** Asks a question on the terminal and resolves to the line typed; absent when stdin is not a terminal. */
  ask?: (question: string) => Promise<string>;
}

const GROUP_DESCRIPTIONS: Record<string, string> = {
  certs: 'certificates: inventory, issuance, renewal, revocation, export and bulk operations',
  agents: 'deployment agents: registration, retirement and the agent protocol',
  policies: 'policy rules and their violations',
  'renewal-policies': 'when and how certificates renew',
  issuers: 'certificate issuers (the local CA and external CAs)',
  profiles: 'certificate profiles (key types, validity, allowed names)',
  targets: 'deployment targets of agents',
  jobs: 'issuance, renewal and deployment jobs',
  notifications: 'notification events and their delivery',
  owners: 'certificate owners',
  teams: 'teams',
  audit: 'the tamper-evident audit trail',
  acme: 'ACME server administration (external account binding keys)',
  est: 'EST server administration',
  dashboard: 'inventory summary',
  webhooks: 'webhook endpoints: management, test sends, deliveries and the private-address allowlist',
  scep: 'SCEP: the profiles this server serves (administration) and probes of other SCEP servers',
  system: 'server version, authentication (users, roles, sessions, OIDC, break-glass) and OpenAPI document',
  'health-checks': 'TLS endpoint health checks: what each endpoint serves, and its history',
  discovery: 'certificates found by agents and network scans, scans and scan targets',
};

/** Long work the command line reports with a progress bar and may split (`--batch-size`). */
const BATCHED_FIELD = 'certificate_ids';
const ISSUING = new Set(['issueCertificate', 'renewCertificate']);

/** Flags that are not fields of the operation: a duration or time turned into the field the server reads. */
const EXTRA_FLAGS: Record<
  string,
  {
    flag: string;
    value: string;
    description: string;
    apply(input: RawInput, text: string, now: number): void;
  }[]
> = {
  listCertificates: [
    {
      flag: 'expires-within',
      value: 'duration',
      description:
        'certificates whose latest version expires within this long from now (30d, 720h); expired ones included',
      apply: (input, text, now) => {
        input.query = {
          ...input.query,
          expires_before: parseInstant('--expires-within', text, 'future', now),
        };
      },
    },
  ],
  ...Object.fromEntries(
    ['issueCertificate', 'renewCertificate'].map((id) => [
      id,
      [
        {
          flag: 'not-after',
          value: 'duration|time',
          description:
            'validity: a duration (720h, 90d) or an RFC 3339 time, as whole days (sets validity_days)',
          apply: (input: RawInput, text: string, now: number) => {
            input.body = { ...(input.body as object), validity_days: validityDays('--not-after', text, now) };
          },
        },
      ],
    ]),
  ),
};

/** Rules the server also enforces, checked here so nothing is sent at all. */
const PRE_SEND: Record<string, (input: RawInput, name: string) => void> = {
  retireAgent: (input, name) => {
    if (input.query?.force === true && !input.query?.reason) {
      throw new UsageError(
        `${name}: --force needs --reason <text> (why the agent is retired despite its dependencies)`,
      );
    }
  },
};

const isPaged = (op: OperationSpec) =>
  op.method === 'GET' &&
  op.queryParams.some((p) => p.name === 'page') &&
  op.queryParams.some((p) => p.name === 'per_page');
/** JSON answers (`application/json`, `application/problem+json`); NDJSON is a stream of lines, not JSON. */
const isJson = (contentType: string) => /^application\/(?:[\w.-]+\+)?json$/.test(contentType);
const binaryTypes = (op: OperationSpec) =>
  op.success.flatMap((s) => s.contentTypes).filter((t) => !isJson(t));

function example(op: OperationSpec, name: CommandName, flags: FlagSpec[]): string[] {
  const args = op.pathParams.map((p) =>
    p.name === 'id' ? `${name.group.replace(/s$/, '')}-123` : `<${p.name}>`,
  );
  const required = flags
    .filter((f) => f.required)
    .map((f) => `--${f.flag} ${f.kind === 'boolean' ? '' : exampleValue(f)}`.trim());
  const base = ['certwright', name.group, name.command, ...args, ...required].join(' ');
  const lines = [`  $ ${base}`];
  if (isPaged(op)) lines.push(`  $ ${base} --per-page 100 -o json`, `  $ ${base} --all -o yaml`);
  else if (op.body) lines.push(`  $ ${base} --body-file input.json -o json`);
  else lines.push(`  $ ${base} -o json`);
  return lines;
}

function exampleValue(flag: FlagSpec): string {
  if (flag.choices?.[0]) return flag.choices[0];
  if (flag.kind === 'number') return '1';
  if (flag.kind === 'list') return 'a,b';
  if (flag.kind === 'json') return `'{}'`;
  if (flag.name.endsWith('_id')) return `${flag.name.replace(/_id$/, '').replace(/_/g, '-')}-123`;
  return '<text>';
}

/** Builds the whole command tree: one command per REST operation, grouped by resource. */
export function buildProgram(io: CliIo, onExit: (code: number) => void): Command {
  const program = new Command('certwright');
  program
    .description('Command line of the certwright certificate lifecycle service (HTTPS only).')
    .version(CLIENT_VERSION, '-V, --version', 'print the command line version')
    .option('--server <url>', 'server base URL, https:// only (env SVC_SERVER_URL)')
    .option('--api-key-file <path>', 'file holding the API key (env SVC_API_KEY or SVC_API_KEY_FILE)')
    .option('--ca-bundle <path>', 'PEM CA bundle trusted for the server (env SVC_SERVER_CA_BUNDLE_PATH)')
    .option(
      '--insecure-skip-verify',
      'development only: do not verify the server certificate (env SVC_SERVER_TLS_INSECURE_SKIP_VERIFY)',
    )
    .option(
      '--config <path>',
      'config file (env CERTWRIGHT_CONFIG; default ~/.config/certwright/config.yaml)',
    )
    .option(
      '-o, --output <format>',
      "table (default), json, yaml, jsonpath=<expr> ('{.data[*].id}') or template=<text> ('{{range .data}}{{.name}}{{\"\\n\"}}{{end}}')",
    )
    .option('--columns <fields>', 'table columns, comma-separated (id,name,status,owner,expires_at)')
    .showSuggestionAfterError()
    // Listed as their usage says (`get <id>`), though the parser takes arguments as optional.
    .configureHelp({
      subcommandTerm: (cmd) =>
        [[cmd.name(), ...cmd.aliases()].join('|'), cmd.commands.length > 0 ? '' : cmd.usage()]
          .filter(Boolean)
          .join(' '),
    })
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
      outputError: (text, write) => write(`certwright: ${text.replace(/^error: /, '')}`),
    })
    .addHelpText(
      'after',
      '\nExamples:\n  $ export SVC_SERVER_URL=https://localhost:8443 SVC_API_KEY_FILE=data/admin-api-key\n' +
        '  $ certwright certificate www.example.com www.crt www.key --san example.com --not-after 720h\n' +
        '  $ certwright certs list --expires-within 30d --columns name,status,owner,expires_at\n' +
        '  $ certwright agents retire agent-123 --force --reason "host decommissioned"\n' +
        '\nExit codes: 0 ok, 1 other failure, 2 usage or configuration, 3 authentication or permission,\n' +
        '4 not found, 5 conflict, 6 connection or TLS failure, 7 server error, 8 request refused (400, 429 …).\n',
    );

  const ops = [...operations.values()];
  const names = commandTable(ops);
  const groups = new Map<string, Command>();
  const tree = new Map<string, Map<string, string[]>>();
  const leaf = (group: string) => {
    let command = groups.get(group);
    if (!command) {
      command = program.command(group).description(GROUP_DESCRIPTIONS[group] ?? `${group} operations`);
      if (group === 'certs') command.alias('certificates');
      groups.set(group, command);
      tree.set(group, new Map());
    }
    return command;
  };
  const variants = new Map<string, { op: OperationSpec; flag: string; description: string }[]>();
  for (const op of ops) {
    const name = names.get(op.operationId) as CommandName;
    if (name.variantOf) {
      const key = `${name.group} ${name.variantOf.command}`;
      variants.set(key, [
        ...(variants.get(key) ?? []),
        { op, flag: name.variantOf.flag, description: name.variantOf.description },
      ]);
    }
  }

  for (const op of ops) {
    const name = names.get(op.operationId) as CommandName;
    if (name.variantOf) continue;
    const flags = flagsOf(op);
    const chosen = variants.get(`${name.group} ${name.command}`) ?? [];
    const command = leaf(name.group).command(name.command);
    const describe = [op.summary, op.admin ? '(admin only)' : ''].filter(Boolean).join(' ');
    command.description(describe || op.operationId);
    // Optional for the parser, so a missing argument is reported together with missing flags.
    for (const p of op.pathParams) command.argument(`[${p.name}]`, p.description || p.name);
    if (op.pathParams.length > 0)
      command.usage(`${op.pathParams.map((p) => `<${p.name}>`).join(' ')} [options]`);
    for (const flag of flags) {
      // The one value the schema allows is sent without asking for it.
      if (flag.fixed !== undefined) continue;
      const option = new Option(
        flag.kind === 'boolean'
          ? `--${flag.flag}`
          : `--${flag.flag} <${flag.kind === 'list' ? 'values' : flag.kind === 'secret-file' ? 'path' : 'value'}>`,
        `${flag.description}${flag.required ? ' (required)' : ''}`,
      );
      if (flag.choices) option.choices(flag.choices);
      if (flag.kind === 'list')
        option.argParser((v: string, previous: string[] | undefined) => [...(previous ?? []), v]);
      command.addOption(option);
    }
    for (const v of chosen) command.option(`--${v.flag}`, v.description);
    if (op.body) {
      command.option('--body <json>', 'the JSON body; flags override its fields');
      command.option(
        '--body-file <path>',
        'read the JSON body from a file (- for standard input); flags override its fields',
      );
    }
    if (isPaged(op)) command.option('--all', 'fetch every page and print them as one list');
    if (binaryTypes(op).length > 0)
      command.option('--out <file>', `write the ${binaryTypes(op).join(' or ')} answer to a file`);
    const batched = (op.body?.schema as { properties?: Record<string, unknown> } | undefined)?.properties?.[
      BATCHED_FIELD
    ];
    if (batched) command.option('--batch-size <n>', 'send certificate_ids in batches of this many', '1000');
    if (ISSUING.has(op.operationId))
      command.option('--wait', 'wait until the certificate is no longer pending');
    const extras = EXTRA_FLAGS[op.operationId] ?? [];
    for (const extra of extras) command.option(`--${extra.flag} <${extra.value}>`, extra.description);
    if (BULK[op.operationId]) {
      command.option('--dry-run', 'list what would change, change nothing');
      command.option('-y, --yes', 'go ahead without asking (a terminal asks; a script must pass this)');
    }
    command.addHelpText(
      'after',
      `\nExamples:\n${example(op, name, flags).join('\n')}\n\nOperation: ${op.operationId} (${op.method} ${op.path})\n`,
    );
    tree
      .get(name.group)
      ?.set(name.command, [
        ...flags.map((f) => `--${f.flag}`),
        ...chosen.map((v) => `--${v.flag}`),
        ...(op.body ? ['--body', '--body-file'] : []),
        ...(isPaged(op) ? ['--all'] : []),
        ...extras.map((e) => `--${e.flag}`),
        ...(BULK[op.operationId] ? ['--dry-run', '--yes'] : []),
      ]);

    command.action(async (...args: unknown[]) => {
      const cmd = args[args.length - 1] as Command;
      const local = cmd.opts() as Record<string, unknown>;
      const globals = cmd.optsWithGlobals() as ConnectionFlags & Record<string, unknown>;
      const variant = chosen.find((v) => local[camel(v.flag)] === true);
      const target = variant?.op ?? op;
      const label = `${name.group} ${name.command}`;
      const input = buildInput(
        target,
        flags,
        op.pathParams.map((_, i) => args[i] as string | undefined),
        local,
        io,
      );
      const now = Date.now();
      for (const extra of extras) {
        const text = local[camel(extra.flag)];
        if (typeof text === 'string') extra.apply(input, text, now);
      }
      PRE_SEND[target.operationId]?.(input, label);
      const session = connect(globals, io);
      const { client } = session;
      try {
        if (BULK[target.operationId]) {
          const preview = await previewBulk(client, target.operationId, input);
          if (local.dryRun === true) {
            if (!preview)
              throw new UsageError(`${label}: no criteria to list (the server would refuse the request)`);
            await printAnswer(client, preview.selected, session, undefined, io);
            io.stderr.write(`${previewHeadline(preview)}; nothing changed (--dry-run)\n`);
            onExit(EXIT.ok);
            return;
          }
          if (preview && preview.will_change > 0) await confirmBulk(label, preview, local.yes === true, io);
        }
        if (binaryTypes(target).length > 0 && !target.success.some((x) => x.contentTypes.some(isJson))) {
          await download(client, target, input, local.out as string | undefined, io);
        } else {
          await printAnswer(
            client,
            await execute(client, target, input, local, io),
            session,
            local.out as string | undefined,
            io,
          );
        }
        onExit(EXIT.ok);
      } finally {
        await client.close();
      }
    });
  }

  addOneShotCommands(program, io, onExit);
  const topLevel = new Map(
    ['certificate', 'sign'].map((name) => {
      const command = program.commands.find((c) => c.name() === name) as Command;
      return [name, command.options.map((o) => o.long as string)];
    }),
  );

  program
    .command('completion')
    .description('print a shell completion script')
    .argument('<shell>', 'bash, zsh or fish')
    .addHelpText(
      'after',
      '\nExamples:\n  $ eval "$(certwright completion bash)"\n  $ certwright completion zsh > ~/.zfunc/_certwright\n' +
        '  $ certwright completion fish > ~/.config/fish/completions/certwright.fish\n',
    )
    .action((shell: string) => {
      io.stdout.write(
        completionScript(shell, {
          groups: tree,
          commands: topLevel,
          globalFlags: [
            '--server',
            '--api-key-file',
            '--ca-bundle',
            '--insecure-skip-verify',
            '--config',
            '--output',
            '--columns',
          ],
        }),
      );
      onExit(EXIT.ok);
    });
  for (const group of groups.values()) {
    group.addHelpText(
      'after',
      `\nExamples:\n  $ certwright ${group.name()} ${group.commands[0]?.name() ?? ''} --help\n`,
    );
  }
  return program;
}

const camel = (flag: string) => flag.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

function buildInput(
  op: OperationSpec,
  flags: FlagSpec[],
  positional: (string | undefined)[],
  local: Record<string, unknown>,
  io: CliIo,
): RawInput {
  const input: RawInput = {};
  const missing: string[] = op.pathParams.filter((_, i) => !positional[i]).map((p) => `<${p.name}>`);
  if (op.pathParams.length > 0) {
    input.path = Object.fromEntries(op.pathParams.map((p, i) => [p.name, positional[i]]));
  }
  const options = local as { body?: string; bodyFile?: string };
  const body = op.body ? (readBodyOption(options, io.stdin) ?? {}) : undefined;
  if (options.body !== undefined) {
    const secret = flags.find((f) => f.kind === 'secret-file' && body?.[f.name] !== undefined);
    if (secret)
      throw new UsageError(
        `${secret.name} in --body would be visible to every user of this machine: use --${secret.flag} or --body-file`,
      );
  }
  const query: Record<string, unknown> = {};
  const context = { now: Date.now(), stdin: io.stdin };
  for (const flag of flags) {
    const raw = local[camel(flag.flag)];
    if (raw === undefined) {
      if (flag.fixed !== undefined && flag.where === 'body' && body) body[flag.name] ??= flag.fixed;
      continue;
    }
    const value = parseValue(flag, raw, context);
    if (flag.where === 'query') query[flag.name] = value;
    else (body as Record<string, unknown>)[flag.name] = value;
  }
  for (const flag of flags) {
    if (!flag.required) continue;
    const present = flag.where === 'query' ? query[flag.name] !== undefined : body?.[flag.name] !== undefined;
    if (!present) missing.push(`--${flag.flag}`);
  }
  if (missing.length > 0) {
    const fromBody = flags.some((f) => f.where === 'body' && missing.includes(`--${f.flag}`));
    throw new UsageError(
      `missing ${missing.join(', ')}${fromBody ? ' (a field may come from --body or --body-file instead)' : ''}`,
    );
  }
  if (Object.keys(query).length > 0) input.query = query;
  if (body !== undefined && (Object.keys(body).length > 0 || op.body?.required)) input.body = body;
  return input;
}

async function execute(
  client: CertwrightClient,
  op: OperationSpec,
  input: RawInput,
  local: Record<string, unknown>,
  io: CliIo,
): Promise<unknown> {
  const tty = io.stdout.isTTY === true;
  if (local.all === true) {
    const progress = createProgress(io.stderr, tty, 'fetching');
    const items: unknown[] = [];
    for await (const page of client.pages(op.operationId as never, input as never)) {
      const p = page as unknown as { data: unknown[]; total: number };
      items.push(...p.data);
      progress.update(items.length, p.total);
    }
    progress.done();
    return items;
  }
  const ids = (input.body as Record<string, unknown> | undefined)?.[BATCHED_FIELD];
  const size = Number(local.batchSize ?? 0);
  if (Array.isArray(ids) && local.batchSize !== undefined) {
    if (!Number.isInteger(size) || size < 1) throw new UsageError('--batch-size must be a positive integer');
    if (ids.length > size) {
      const progress = createProgress(io.stderr, tty, op.operationId);
      let merged: Record<string, unknown> = {};
      for (let start = 0; start < ids.length; start += size) {
        const batch = {
          ...input,
          body: { ...(input.body as object), [BATCHED_FIELD]: ids.slice(start, start + size) },
        };
        merged = mergeResults(
          merged,
          (await client.callRaw(op.operationId, batch)) as Record<string, unknown>,
        );
        progress.update(Math.min(ids.length, start + size), ids.length);
      }
      progress.done();
      return merged;
    }
  }
  const answer = await client.callRaw(op.operationId, input);
  if (local.wait === true && ISSUING.has(op.operationId))
    return waitForCertificate(client, String(input.path?.id), io);
  return answer;
}

/** Batches of one bulk operation, summed: counts add up, lists concatenate. */
function mergeResults(into: Record<string, unknown>, next: Record<string, unknown>): Record<string, unknown> {
  const out = { ...into };
  for (const [key, value] of Object.entries(next)) {
    const prior = out[key];
    if (typeof value === 'number' && typeof prior === 'number') out[key] = prior + value;
    else if (Array.isArray(value) && Array.isArray(prior)) out[key] = [...prior, ...value];
    else out[key] = value;
  }
  return out;
}

const PENDING = new Set(['Pending', 'RenewalInProgress']);

async function waitForCertificate(client: CertwrightClient, id: string, io: CliIo): Promise<unknown> {
  const progress = createProgress(io.stderr, io.stdout.isTTY === true, 'waiting for issuance');
  for (let polls = 0; ; polls++) {
    const cert = (await client.callRaw('getCertificate', { path: { id } })) as { status?: string };
    if (!PENDING.has(String(cert.status))) {
      progress.done();
      return cert;
    }
    progress.update(polls, undefined, String(cert.status));
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

/** A PEM, DER, PKCS#12 or NDJSON answer streamed to a file or stdout, with progress on a terminal. */
async function download(
  client: CertwrightClient,
  op: OperationSpec,
  input: RawInput,
  out: string | undefined,
  io: CliIo,
): Promise<void> {
  const answer = await client.download(op.operationId, input);
  const textual = /pem|text|ndjson/.test(answer.contentType);
  if (!out && !textual && io.stdout.isTTY) {
    await answer.body.cancel();
    throw new UsageError(
      `the answer is binary (${answer.contentType}): pass --out <file> or redirect standard output`,
    );
  }
  // On stdout the bytes themselves are the output: no bar over them.
  const progress = createProgress(io.stderr, out !== undefined && io.stdout.isTTY === true, 'downloading');
  const sink = out ? createWriteStream(out) : undefined;
  const reader = answer.body.getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.byteLength;
      if (sink) {
        if (!sink.write(value)) await once(sink, 'drain');
      } else io.stdout.write(value);
      progress.update(bytes, answer.contentLength, 'bytes');
    }
  } finally {
    progress.done();
    if (sink)
      await new Promise<void>((resolve, reject) =>
        sink.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
  }
  if (out) io.stderr.write(`wrote ${bytes} bytes (${answer.contentType}) to ${out}\n`);
}

interface Session {
  client: CertwrightClient;
  format: Format;
  columns?: string[];
}

/** The client and the output settings of one command, from flags, environment and config file. */
function connect(globals: ConnectionFlags & Record<string, unknown>, io: CliIo): Session {
  const file = readConfigFile(globals, io.env);
  const format = parseFormat(globals.output ?? (typeof file.output === 'string' ? file.output : undefined));
  const columns =
    typeof globals.columns === 'string'
      ? globals.columns
          .split(',')
          .map((c) => c.trim())
          .filter((c) => c !== '')
      : undefined;
  const client = createClient({
    ...resolveClientOptions(globals, io.env, file),
    userAgent: `certwright-cli/${CLIENT_VERSION}`,
    warn: (message) => io.stderr.write(`certwright: warning: ${message}\n`),
  });
  return { client, format, ...(columns?.length ? { columns } : {}) };
}

/** A JSON answer in the chosen format (a table names referenced records), or bytes as they came. */
async function printAnswer(
  client: CertwrightClient,
  answer: unknown,
  session: Session,
  out: string | undefined,
  io: CliIo,
): Promise<void> {
  const binary = answer as BinaryBody | undefined;
  if (binary && binary.bytes instanceof Uint8Array && typeof binary.contentType === 'string') {
    if (out) {
      writeFileSync(out, binary.bytes);
      io.stderr.write(`wrote ${binary.bytes.byteLength} bytes (${binary.contentType}) to ${out}\n`);
      return;
    }
    const textual = /pem|text|ndjson/.test(binary.contentType);
    if (!textual && io.stdout.isTTY) {
      throw new UsageError(
        `the answer is binary (${binary.contentType}): pass --out <file> or redirect standard output`,
      );
    }
    io.stdout.write(binary.bytes);
    return;
  }
  if (
    session.format.kind !== 'table' ||
    answer === undefined ||
    answer === null ||
    typeof answer !== 'object'
  ) {
    io.stdout.write(render(answer, session.format));
    return;
  }
  const columns = shownColumns(answer, session.columns);
  const names = await resolveNames(client, rowsOf(answer), columns);
  io.stdout.write(
    render(answer, session.format, { ...(session.columns ? { columns: session.columns } : {}), names }),
  );
}

const ONE_SHOT_FLAGS = (command: Command) =>
  command
    .option('--name <name>', "the certificate record's name (default: the common name)")
    .option('--profile <id>', 'certificate profile id (key types, validity, allowed names)')
    .option(
      '--not-after <duration|time>',
      'validity: a duration (720h, 90d) or an RFC 3339 time, as whole days',
    )
    .option('--owner-id <id>', `owner (default ${BASELINE.owner_id})`)
    .option('--team-id <id>', `team (default ${BASELINE.team_id})`)
    .option('--issuer-id <id>', `issuer (default ${BASELINE.issuer_id}, the Local CA)`)
    .option('--renewal-policy-id <id>', `renewal policy (default ${BASELINE.renewal_policy_id})`)
    .option('--chain <file>', 'where to write the CA chain (default <crt>.chain.pem beside the certificate)')
    .option('--bundle', 'write the chain after the certificate in <crt> as well (what most servers load)')
    .option('--force', 'replace files that exist');

/** `certificate` and `sign`: the one-command flows of `step ca certificate` and `step ca sign`. */
function addOneShotCommands(program: Command, io: CliIo, onExit: (code: number) => void): void {
  const run = async (
    cmd: Command,
    missing: string[],
    work: (client: CertwrightClient, options: OneShotOptions) => Promise<unknown>,
  ) => {
    if (missing.length > 0) throw new UsageError(`missing ${missing.join(', ')}`);
    const session = connect(cmd.optsWithGlobals() as ConnectionFlags & Record<string, unknown>, io);
    try {
      const result = await work(session.client, cmd.opts() as OneShotOptions);
      io.stdout.write(render(result, session.format, session.columns ? { columns: session.columns } : {}));
      onExit(EXIT.ok);
    } finally {
      await session.client.close();
    }
  };
  const warn = (message: string) => io.stderr.write(`certwright: warning: ${message}\n`);

  const certificate = program
    .command('certificate')
    .description('make a key here, have the server issue its certificate, write certificate, chain and key')
    .argument('[subject]', 'the common name (and first SAN unless --san is given)')
    .argument('[crt]', 'file to write the certificate to')
    .argument('[key]', 'file to write the private key to (PKCS#8 PEM, mode 0600)')
    .usage('<subject> <crt> <key> [options]')
    .option(
      '--san <names>',
      'subject alternative names: DNS names, IP addresses, e-mail addresses, URIs (repeat or comma-separate)',
      (v: string, previous: string[] | undefined) => [...(previous ?? []), v],
    )
    .option(
      '--key-algorithm <algorithm>',
      'ECDSA-P256 (default), ECDSA-P384, Ed25519, RSA-2048, RSA-3072, RSA-4096; on Node.js 24 ML-DSA-44/65/87, SLH-DSA-SHA2-128S …',
    );
  ONE_SHOT_FLAGS(certificate)
    .addHelpText(
      'after',
      '\nExamples:\n  $ certwright certificate www.example.com www.crt www.key --san www.example.com,example.com\n' +
        '  $ certwright certificate api.internal api.crt api.key --profile prof-web --not-after 720h --bundle\n' +
        '\nThe key never leaves this machine: the server signs a CSR made for it. Nothing is written\n' +
        'unless the certificate was issued, and existing files are kept unless --force.\n',
    )
    .action(
      async (
        subject: string | undefined,
        crt: string | undefined,
        key: string | undefined,
        _o,
        cmd: Command,
      ) => {
        const missing = [
          ...(subject ? [] : ['<subject>']),
          ...(crt ? [] : ['<crt>']),
          ...(key ? [] : ['<key>']),
        ];
        await run(cmd, missing, (client, options) =>
          oneShotCertificate(
            client,
            subject as string,
            crt as string,
            key as string,
            { ...options, ...(options.san ? { san: splitList(options.san) } : {}) },
            warn,
          ),
        );
      },
    );

  const sign = program
    .command('sign')
    .description('have the server issue a certificate for a CSR file, write certificate and chain')
    .argument('[csr]', 'the PKCS#10 request (PEM); its common name and SANs name the certificate')
    .argument('[crt]', 'file to write the certificate to')
    .usage('<csr> <crt> [options]');
  ONE_SHOT_FLAGS(sign)
    .addHelpText(
      'after',
      '\nExamples:\n  $ certwright sign www.csr www.crt\n  $ certwright sign device.csr device.crt --profile prof-devices --not-after 90d\n',
    )
    .action(async (csr: string | undefined, crt: string | undefined, _o, cmd: Command) => {
      const missing = [...(csr ? [] : ['<csr>']), ...(crt ? [] : ['<crt>'])];
      await run(cmd, missing, (client, options) =>
        signCsr(client, csr as string, crt as string, options, warn),
      );
    });
}

const splitList = (values: string[]) =>
  values
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');

/** Runs the command line; resolves to the exit code. Errors are one line on stderr, never a stack. */
export async function runCli(argv: string[], io: CliIo): Promise<number> {
  let code: number = EXIT.ok;
  const program = buildProgram(io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (error) {
    if (error instanceof CommanderError) {
      // Help and version end here too, with exit code 0; commander already wrote its message.
      return error.exitCode === 0 ? EXIT.ok : EXIT.usage;
    }
    io.stderr.write(`certwright: ${messageOf(error)}\n`);
    return exitCodeOf(error);
  }
}
