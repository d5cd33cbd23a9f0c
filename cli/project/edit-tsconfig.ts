// Adds a `paths` alias to tsconfig.json when the user accepts one at `init`, only if the file is plain JSON.
import { readFile } from "node:fs/promises";

/**
 * tsconfig.json's text with the alias added, to write once the user confirms; null when the file has comments or
 * trailing commas we could not keep.
 *
 * @example
 * const text = await withPathsAlias("/app/tsconfig.json", "@/*", "./src/*"); // then writeProjectFile(file, text)
 */
export async function withPathsAlias(file: string, key: string, target: string): Promise<string | null> {
  let config: { compilerOptions?: { paths?: Record<string, string[]> } };
  try {
    config = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return null;
  }
  config.compilerOptions ??= {};
  config.compilerOptions.paths = { ...config.compilerOptions.paths, [key]: [target] };
  return `${JSON.stringify(config, null, 2)}\n`;
}
