import type { OpenApiDocument } from './document.js';

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};
const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => ESCAPES[c] as string);

/** A self-contained page (no external scripts) listing every operation and its schemas. */
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
<html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(info.title)}</title>
<style>body{font-family:system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem}
section{border-top:1px solid #ddd;padding:.5rem 0}pre{background:#f6f6f6;padding:.75rem;overflow:auto}
h2{font-size:1.05rem}</style></head>
<body><h1>${escapeHtml(info.title)} ${escapeHtml(info.version)}</h1><p>${escapeHtml(info.description)}
The machine-readable document is <code>GET /api/v1/openapi.json</code>.</p>
${sections.join('\n')}
</body></html>`;
}
