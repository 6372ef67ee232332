import type { serverForms as ServerForms } from './commands.js';

/**
 * The server forms of `enqueue` and `verify` (dist/cli/server.js), loaded
 * only for a server dir: a mock's `shimkit enqueue` stays as small as it
 * was. Only the type of commands.ts is imported here, so that module (and
 * the core it bundles) is read from disk when a server dir asks for it.
 */
export async function serverForms(): Promise<typeof ServerForms> {
  const module = (await import(
    new URL('./server.js', import.meta.url).href
  )) as typeof import('./commands.js');
  return module.serverForms;
}
