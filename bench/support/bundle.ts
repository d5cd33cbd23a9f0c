// Bundles a TypeScript entry of the bench into one JavaScript file, as a user's production build would run it.
import { build } from "esbuild";

const built = new Map<string, Promise<unknown>>();

/**
 * Once per process and output file. Not run through tsx: tsx keeps function names with a `__name()`
 * call per closure created, a cost of the dev tool (several µs per request on our code) that neither
 * the bare routes nor the peers' compiled packages pay.
 */
export function bundle(entry: string, outfile: string): Promise<unknown> {
  let done = built.get(outfile);
  if (!done) {
    done = build({
      entryPoints: [entry],
      outfile,
      bundle: true,
      packages: "external",
      platform: "node",
      format: "esm",
      target: "node20",
      logLevel: "warning",
    });
    built.set(outfile, done);
  }
  return done;
}
