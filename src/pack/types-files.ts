import { missingFile, type PackageFacts } from './diagnose.js';
import type { PackCheck } from './report.js';

/**
 * The types files package.json declares, each with where: `types`,
 * `typings`, and every `types`/`typings` condition of `exports`
 * (`exports["."].import.types`). Pattern targets (`./*.d.ts`) are left out:
 * they name no one file.
 */
export function declaredTypes(
  manifest: PackageFacts['manifest'],
): Array<{ file: string; where: string }> {
  const out: Array<{ file: string; where: string }> = [];
  const m = manifest as Record<string, unknown>;
  for (const key of ['types', 'typings']) {
    if (typeof m[key] === 'string') out.push({ file: m[key] as string, where: `\`${key}\`` });
  }
  const walk = (value: unknown, where: string, underTypes: boolean): void => {
    if (typeof value === 'string') {
      if (underTypes && !value.includes('*')) out.push({ file: value, where });
    } else if (Array.isArray(value)) {
      for (const [i, v] of value.entries()) walk(v, `${where}[${i}]`, underTypes);
    } else if (typeof value === 'object' && value !== null) {
      for (const [k, v] of Object.entries(value)) {
        walk(v, `${where}[${JSON.stringify(k)}]`, underTypes || k === 'types' || k === 'typings');
      }
    }
  };
  walk(m.exports, 'exports', false);
  return out;
}

const inTarball = (file: string) => file.replace(/\\/g, '/').replace(/^(?:\.\/)+/, '');

/**
 * Every declared types file is in the tarball: checked from the file list,
 * with no TypeScript, so a package without it is checked too. No check when
 * the package declares none.
 */
export function checkTypesFiles(facts: PackageFacts): PackCheck[] {
  const declared = declaredTypes(facts.manifest);
  if (declared.length === 0) return [];
  const missing = declared.filter((d) => !facts.files.has(inTarball(d.file)));
  const name = 'types files';
  if (missing.length === 0) return [{ kind: 'types', name, ok: true, ms: 0 }];
  const first = missing[0] as { file: string; where: string };
  const diagnosis = missingFile(inTarball(first.file), facts, `the types of ${first.where}`);
  return [
    {
      kind: 'types',
      name,
      ok: false,
      problem: `package.json names types files that are not in the tarball: ${missing
        .map((d) => `${inTarball(d.file)} (${d.where})`)
        .join(', ')}`,
      ...diagnosis,
      ms: 0,
    },
  ];
}
