// Adds a `paths` alias to tsconfig.json when the user accepts one at `init`, only if the file is plain JSON.
import { readFile } from "node:fs/promises";
import { writeProjectFile } from "../utils/files.js";

/**
 * Returns false (and changes nothing) when the file has comments or trailing commas we could not keep.
 *
 * @example
 * await addPathsAlias("/app/tsconfig.json", "@/*", "./src/*"); // true
 */
export async function addPathsAlias(file: string, key: string, target: string): Promise<boolean> {
  let config: { compilerOptions?: { paths?: Record<string, string[]> } };
  try {
    config = JSON.parse(await readFile(file, "utf8"));
  } catch {
    return false;
  }
  config.compilerOptions ??= {};
  config.compilerOptions.paths = { ...config.compilerOptions.paths, [key]: [target] };
  await writeProjectFile(file, `${JSON.stringify(config, null, 2)}\n`);
  return true;
}
