// The `registries` of blocks.json: namespaced item URLs with headers whose `${VAR}`s come from the environment.
//
// "registries": {
//   "@acme": { "url": "https://r.acme.dev/{name}.json", "headers": { "Authorization": "Bearer ${ACME_TOKEN}" } },
//   "@oss": "https://blocks.example.org/r/{name}.json"
// }
// The config holds only the templates: expanded values live in memory for one request and are never
// written to disk, logs, errors or the lock.
import { BlocksError } from "../utils/errors.js";

export type RegistryConfig = {
  /** Item URL with `{name}`; may hold `${VAR}`s (a query token), expanded per request. */
  url: string;
  /** The registry's index (`registry.json`, as `blocks registry build` writes it). @default url with {name} = "registry" */
  index?: string;
  /** Sent with every request to this registry (and only to it); values may hold `${VAR}`s. */
  headers?: Record<string, string>;
  /** @default 30000 */
  timeoutMs?: number;
};

/** One configured registry, with the name it is addressed by (`@acme`). */
export type NamedRegistry = RegistryConfig & { name: string };

const NAMESPACE = /^@[a-z0-9][a-z0-9._-]*$/;
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
const VARIABLE = /\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/**
 * Validates blocks.json's `registries`, naming the registry and the field that is wrong.
 *
 * @example
 * checkRegistries({ "@acme": { url: "https://r.acme.dev/{name}.json" } }); // { "@acme": { url } }
 * checkRegistries({ acme: "https://..." }); // throws INVALID_CONFIG: names start with "@"
 */
export function checkRegistries(raw: unknown): Record<string, RegistryConfig> {
  if (raw === undefined) return {};
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw invalid(`"registries" must be an object of "@name": { "url": ... }.`);
  const registries: Record<string, RegistryConfig> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (!NAMESPACE.test(name))
      throw invalid(
        `the registry name ${JSON.stringify(name)} must start with "@" and use lower-case letters, digits, ".", "_" or "-" (e.g. "@acme").`,
      );
    registries[name] = checkRegistry(name, typeof value === "string" ? { url: value } : value);
  }
  return registries;
}

function checkRegistry(name: string, raw: unknown): RegistryConfig {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw invalid(`registry ${name} must be a URL string or { "url": ..., "headers"?: ... }.`);
  const { url, index, headers, timeoutMs, ...rest } = raw as Record<string, unknown>;
  const unknown = Object.keys(rest);
  if (unknown.length)
    throw invalid(
      `registry ${name} has the unknown field(s) ${unknown.map((key) => JSON.stringify(key)).join(", ")} (known: url, index, headers, timeoutMs).`,
    );
  if (typeof url !== "string" || !url.includes("{name}"))
    throw invalid(`registry ${name} needs a "url" with {name} in it, e.g. "https://r.acme.dev/{name}.json".`);
  checkUrl(name, "url", url);
  if (index !== undefined) {
    if (typeof index !== "string") throw invalid(`registry ${name}: "index" must be a URL string.`);
    checkUrl(name, "index", index);
  }
  if (headers !== undefined && (typeof headers !== "object" || headers === null || Array.isArray(headers))) {
    throw invalid(`registry ${name}: "headers" must be an object of header name -> string value.`);
  }
  for (const [header, value] of Object.entries(headers ?? {})) {
    if (!HEADER_NAME.test(header))
      throw invalid(`registry ${name}: ${JSON.stringify(header)} is not a valid header name.`);
    if (typeof value !== "string")
      throw invalid(`registry ${name}: the header ${header} must be a string (use "\${VAR}" for a secret).`);
  }
  if (
    timeoutMs !== undefined &&
    (typeof timeoutMs !== "number" || !Number.isInteger(timeoutMs) || timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS)
  ) {
    throw invalid(`registry ${name}: "timeoutMs" must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}.`);
  }
  const checked: RegistryConfig = { url };
  if (index !== undefined) checked.index = index;
  if (headers !== undefined) checked.headers = headers as Record<string, string>;
  if (timeoutMs !== undefined) checked.timeoutMs = timeoutMs;
  for (const url of [checked.url, checked.index ?? checked.url]) {
    if (checked.headers && Object.keys(checked.headers).length && !secureTransport(url)) {
      throw invalid(
        `registry ${name} sends headers over plain http to ${new URL(fill(url)).host}: use https (plain http only reaches localhost).`,
      );
    }
  }
  return checked;
}

/** Parses the URL with its placeholders filled by harmless text, so a bad template fails here and not mid-fetch. */
function checkUrl(name: string, field: string, template: string): void {
  let url: URL;
  try {
    url = new URL(fill(template));
  } catch {
    throw invalid(`registry ${name}: "${field}" is not a URL (${JSON.stringify(template)}).`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:")
    throw invalid(`registry ${name}: "${field}" must be an http(s) URL.`);
}

function fill(template: string): string {
  return template.replaceAll("{name}", "item").replace(VARIABLE, "x");
}

/** https, or http to this machine only: a bearer token never crosses a network in clear text. */
function secureTransport(template: string): boolean {
  const url = new URL(fill(template));
  return url.protocol === "https:" || ["localhost", "127.0.0.1", "[::1]"].includes(url.hostname);
}

/**
 * Replaces every `${VAR}` from the environment; a variable that is unset or empty is an error naming
 * the registry and the variable (never a value). `secrets` are the values put in, for redaction.
 *
 * @example
 * expandEnv("Bearer ${ACME_TOKEN}", "@acme", "the header Authorization"); // { value: "Bearer s3cr3t", secrets: ["s3cr3t"] }
 */
export function expandEnv(
  template: string,
  registry: string,
  where: string,
  env: NodeJS.ProcessEnv = process.env,
): { value: string; secrets: string[] } {
  const secrets: string[] = [];
  const value = template.replace(VARIABLE, (_, variable: string) => {
    const found = env[variable];
    if (!found) {
      throw new BlocksError(
        "MISSING_ENV_VAR",
        `Registry ${registry}: ${where} needs the environment variable ${variable}, which is not set.`,
        {
          suggestion: `Set ${variable} (for example in your shell or CI secrets) and run the command again; blocks.json keeps only its name.`,
        },
      );
    }
    secrets.push(found);
    return found;
  });
  return { value, secrets };
}

/**
 * The index URL of a registry: its `index`, else its item URL with "registry" for the name.
 *
 * @example
 * indexUrl({ name: "@acme", url: "https://r.acme.dev/{name}.json" }); // "https://r.acme.dev/registry.json"
 */
export function indexUrl(registry: NamedRegistry): string {
  return registry.index ?? registry.url.replaceAll("{name}", "registry");
}

function invalid(message: string): BlocksError {
  return new BlocksError("INVALID_CONFIG", `Invalid blocks.json: ${message}`, {
    suggestion: 'See "For teams: your own registry" in the blocks README for the shape of "registries".',
  });
}
