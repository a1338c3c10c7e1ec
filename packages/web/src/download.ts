import { request } from './api';

/** Fetches a file from the API (with the caller's credentials) and hands it to the browser as a download. */
export async function download(url: string, filename: string): Promise<void> {
  const response = await request('GET', url);
  const blob = await response.blob();
  const href = URL.createObjectURL(blob);
  const anchor = document.createElement('a');
  anchor.href = href;
  anchor.download = filename;
  document.body.append(anchor);
  anchor.click();
  anchor.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}
