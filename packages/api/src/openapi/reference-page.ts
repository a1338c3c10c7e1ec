import type { OpenApiDocument } from './document.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/**
 * A self-contained page listing every operation and its schemas: no script and no style, inline
 * or not, so it renders under the console's Content-Security-Policy (served with it).
 */
export function renderReferencePage(doc: OpenApiDocument): string {
  const sections: string[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, raw] of Object.entries(operations)) {
      const op = raw as {
        summary: string;
        operationId: string;
        security?: unknown[];
        requestBody?: unknown;
        parameters?: unknown[];
        responses: unknown;
      };
      const auth = op.security && op.security.length === 0 ? 'no authentication' : 'Bearer API key';
      const details = {
        parameters: op.parameters,
        requestBody: op.requestBody,
        responses: op.responses,
      };
      sections.push(`<section id="${escapeHtml(op.operationId)}">
<h2><code>${escapeHtml(method.toUpperCase())} ${escapeHtml(path)}</code></h2>
<p>${escapeHtml(op.summary)} <em>(${auth})</em></p>
<details><summary>Schemas</summary><pre>${escapeHtml(JSON.stringify(details, null, 2))}</pre></details>
</section>`);
    }
  }
  const info = doc.info as { title: string; version: string; description: string };
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title)}</title></head>
<body><h1>${escapeHtml(info.title)} ${escapeHtml(info.version)}</h1><p>${escapeHtml(info.description)}
The machine-readable document is <code>GET /api/v1/openapi.json</code>.</p>
${sections.join('\n')}
</body></html>`;
}
