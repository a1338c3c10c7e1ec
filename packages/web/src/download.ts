import { request } from './api';

/** Hands a blob to the browser as a download named `filename`. */
export function saveFile(blob: Blob, filename: string): void {
  const href = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = href;
  anchor.download = filename;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

/** Fetches a file from the API (with the caller's credentials) and hands it to the browser as a download. */
export async function download(url: string, filename: string): Promise<void> {
  const response = await request('GET', url);
  saveFile(await response.blob(), filename);
}

/** The DER bytes of the first certificate of a PEM text (the page already holds the PEM). */
export function pemToDer(pem: string): Uint8Array<ArrayBuffer> {
  const body = /-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/.exec(pem)?.[1] ?? '';
  const binary = atob(body.replace(/\s+/g, ''));
  const bytes = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i += 1) bytes[i] = binary.charCodeAt(i);
  return bytes;
}

/** A file name from a record's name: letters, digits, dot, dash and underscore. */
export const fileNameOf = (name: string): string =>
  name.replace(/[^A-Za-z0-9._-]+/g, '_').slice(0, 100) || 'certificate';
