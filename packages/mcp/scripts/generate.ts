import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateOutputSchemas } from './output-schemas.js';

const out = fileURLToPath(new URL('../src/generated/output-schemas.ts', import.meta.url));
writeFileSync(out, await generateOutputSchemas());
process.stdout.write('wrote src/generated/output-schemas.ts\n');
