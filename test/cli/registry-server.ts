// A private registry for the CLI tests: a team's own blocks built by `blocks registry build`, served on loopback behind a bearer token.
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { runRegistryBuild } from "../../cli/commands/registry.js";

export type PrivateRegistry = {
  /** http://127.0.0.1:<port> */
  origin: string;
  token: string;
  /** The team's registry folder (registry.json and one folder per block), as `registry build --registry` takes it. */
  source: string;
  /** Items served as they are under /custom/<name>.json (hostile or cyclic ones a build would never write). */
  custom: Map<string, unknown>;
  /** Every request: path and headers. */
  requests: Array<{ path: string; headers: IncomingHttpHeaders }>;
  close(): Promise<void>;
};

/** The team's blocks: audit-log depends on its sibling tenant-guard (by the bare name `registry build` writes) and on the shipped logger. */
const BLOCKS: Record<string, { description: string; registryDependencies?: string[]; files: Record<string, string> }> =
  {
    "audit-log": {
      description: "Append-only audit log of payment decisions",
      registryDependencies: ["tenant-guard", "logger"],
      files: {
        "index.ts": "export function audit(event: string): string {\n  return `audit: ${event}`;\n}\n",
        "README.md": "# audit-log\n\nAn audit log.\n",
      },
    },
    "tenant-guard": {
      description: "Refuses requests whose tenant does not own the account",
      files: { "index.ts": "export function sameTenant(a: string, b: string): boolean {\n  return a === b;\n}\n" },
    },
  };

/**
 * Builds the team registry with `blocks registry build` and serves it: /r/<name>.json (and /r/registry.json)
 * need `Authorization: Bearer <token>`; /slow/ never answers; /stalls/ stops mid-answer; /huge/ answers 17 MB; /html/ answers a login page;
 * /redirect/ sends to another origin; /custom/<name>.json serves `custom` items.
 *
 * @example
 * const registry = await servePrivateRegistry();
 * // blocks.json: { "registries": { "@acme": { "url": `${registry.origin}/r/{name}.json`, "headers": { "Authorization": "Bearer ${ACME_TOKEN}" } } } }
 */
export async function servePrivateRegistry(): Promise<PrivateRegistry> {
  const folder = mkdtempSync(path.join(tmpdir(), "blocks-team-registry-"));
  const source = path.join(folder, "registry");
  mkdirSync(source);
  writeFileSync(path.join(source, "registry.json"), JSON.stringify({ version: 1, frameworks: {} }));
  for (const [name, block] of Object.entries(BLOCKS)) {
    mkdirSync(path.join(source, name));
    const { files, ...declaration } = block;
    writeFileSync(path.join(source, name, "block.json"), JSON.stringify({ name, ...declaration }));
    for (const [file, content] of Object.entries(files)) writeFileSync(path.join(source, name, file), content);
  }
  const out = path.join(folder, "r");
  await runRegistryBuild({ out, registry: source, name: "acme", silent: true });

  const token = `tok-${randomUUID()}`;
  const custom = new Map<string, unknown>();
  const requests: PrivateRegistry["requests"] = [];
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? "/", "http://127.0.0.1");
    requests.push({ path: url.pathname, headers: request.headers });
    const name = path.basename(url.pathname, ".json");
    if (request.headers.authorization !== `Bearer ${token}`)
      return void response.writeHead(401).end('{"error":"unauthorized"}');
    if (url.pathname.startsWith("/slow/")) return;
    if (url.pathname.startsWith("/stalls/"))
      return void response.writeHead(200, { "content-type": "application/json" }).write('{"name":');
    if (url.pathname.startsWith("/huge/"))
      return void response.writeHead(200, { "content-type": "application/json" }).end(`"${"a".repeat(17 * 2 ** 20)}"`);
    if (url.pathname.startsWith("/html/"))
      return void response.writeHead(200, { "content-type": "text/html" }).end("<html>Sign in</html>");
    if (url.pathname.startsWith("/redirect/"))
      return void response.writeHead(302, { location: `http://localhost:1/${name}.json` }).end();
    if (url.pathname.startsWith("/custom/") && custom.has(name))
      return void response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(custom.get(name)));
    try {
      const body = url.pathname.startsWith("/r/") ? readFileSync(path.join(out, `${name}.json`)) : undefined;
      if (body) return void response.writeHead(200, { "content-type": "application/json" }).end(body);
    } catch {
      // a name the registry does not have: 404 below
    }
    response.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  const origin = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
  return {
    origin,
    token,
    source,
    custom,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      rmSync(folder, { recursive: true, force: true });
    },
  };
}

/**
 * Adds `registries` to the project's blocks.json.
 *
 * @example
 * configureRegistries(dir, { "@acme": { url: `${origin}/r/{name}.json`, headers: { Authorization: "Bearer ${ACME_TOKEN}" } } });
 */
export function configureRegistries(dir: string, registries: Record<string, unknown>): void {
  const file = path.join(dir, "blocks.json");
  writeFileSync(file, `${JSON.stringify({ ...JSON.parse(readFileSync(file, "utf8")), registries }, null, 2)}\n`);
}
