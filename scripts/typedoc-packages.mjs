// TypeDoc plugin for `pnpm docs:api`. The API site is built from one TypeScript program over
// every package's entry points (typedoc.json), which takes a tenth of the time of one program
// per package. TypeDoc would name each module after its path (`core/src/pki`); this names it
// after the import specifier a consumer writes (`@certwright/core/pki`), read from the
// `source` condition of the package's `exports`, and warns — failing the build, since
// warnings are errors there — about an export of a package that typedoc.json does not list.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { Converter } from 'typedoc';

/** Every published entry point: absolute source file → import specifier. */
function publishedEntryPoints(packagesDir) {
  const specifiers = new Map();
  for (const dir of readdirSync(packagesDir)) {
    const manifestPath = join(packagesDir, dir, 'package.json');
    if (!existsSync(manifestPath)) continue;
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
      if (typeof target !== 'object' || typeof target.source !== 'string') continue;
      const specifier = subpath === '.' ? manifest.name : `${manifest.name}${subpath.slice(1)}`;
      specifiers.set(resolve(packagesDir, dir, target.source), specifier);
    }
  }
  return specifiers;
}

export function load(app) {
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    const entryPoints = app.options.getValue('entryPoints').map((path) => resolve(path));
    const packagesDir = join(dirname(app.options.getValue('tsconfig')), 'packages');
    const specifiers = publishedEntryPoints(packagesDir);
    for (const [file, specifier] of specifiers) {
      if (!entryPoints.includes(file)) app.logger.warn(`typedoc.json lists no entry point for ${specifier}`);
    }
    for (const module of context.project.children ?? []) {
      const file = context.getSymbolFromReflection(module)?.declarations?.[0]?.getSourceFile().fileName;
      const specifier = file && specifiers.get(resolve(file));
      if (specifier) module.name = specifier;
      else app.logger.warn(`module ${module.name} is not an export of any package`);
    }
  });
}
