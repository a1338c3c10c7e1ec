import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateAll } from './openapi-source.js';

const out = fileURLToPath(new URL('../src/generated/', import.meta.url));
for (const [name, text] of Object.entries(await generateAll())) {
  writeFileSync(`${out}${name}`, text);
  process.stdout.write(`wrote src/generated/${name}\n`);
}
