// Records the public surface of the `backplane` package (src/index.ts, src/testing.ts) in
// api/library.api.md with API Extractor, from declarations emitted to a temporary folder.
// `node scripts/library-report.mjs` writes the report; `--check` fails (exit 1) when it is stale.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Declarations of src/ in a temporary folder, imports named .js as an application resolves them. */
function emitDeclarations() {
  const out = mkdtempSync(join(tmpdir(), 'backplane-dts-'));
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  execFileSync(
    process.execPath,
    [tsc, '-p', join(root, 'tsconfig.build.json'), '--emitDeclarationOnly', '--declaration', '--sourceMap', 'false', '--outDir', out],
    { cwd: root, stdio: 'inherit' },
  );
  for (const file of readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((name) => name.endsWith('.d.ts'))) {
    const path = join(out, file);
    writeFileSync(
      path,
      readFileSync(path, 'utf8')
        .replace(/(from\s+'\.{1,2}\/[^']*)\.ts'/g, "$1.js'")
        .replace(/(import\('\.{1,2}\/[^']*)\.ts'\)/g, "$1.js')"),
    );
  }
  // API Extractor names the package from the package.json beside the entry.
  writeFileSync(join(out, 'package.json'), readFileSync(join(root, 'package.json')));
  writeFileSync(join(out, 'library.d.ts'), "export * from './index.js';\nexport * as testing from './testing.js';\n");
  return out;
}

export function libraryReport({ check }) {
  const out = emitDeclarations();
  try {
    // The repository's api-extractor.json, pointed at the emitted declarations.
    const config = JSON.parse(readFileSync(join(root, 'api-extractor.json'), 'utf8'));
    config.projectFolder = root;
    config.mainEntryPointFilePath = join(out, 'library.d.ts');
    config.apiReport = { ...config.apiReport, reportFolder: join(root, 'api'), reportTempFolder: out };
    config.compiler.overrideTsconfig.include = [join(out, 'library.d.ts')];
    writeFileSync(join(out, 'api-extractor.json'), JSON.stringify(config));
    const prepared = ExtractorConfig.loadFileAndPrepare(join(out, 'api-extractor.json'));
    let findings = 0;
    const messageCallback = (message) => {
      // A forgotten export or an undocumented member fails the report written as well as the check.
      findings += message.messageId.startsWith('ae-') && message.logLevel === 'warning' ? 1 : 0;
      message.handled = message.logLevel === 'none' || message.logLevel === 'verbose';
    };
    const result = Extractor.invoke(prepared, { localBuild: !check, showVerboseMessages: false, messageCallback });
    return { succeeded: result.succeeded && findings === 0, changed: result.apiReportChanged };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const check = process.argv.includes('--check');
  const { succeeded, changed } = libraryReport({ check });
  if (check && changed) {
    console.error('api/library.api.md is stale: run `npm run api:library` and commit it');
  }
  process.exit(succeeded && !(check && changed) ? 0 : 1);
}
