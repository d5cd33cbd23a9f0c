// One GET against a configured registry: headers expanded from the environment, errors naming the registry and never a secret.
import { BlocksError, describeCause } from "../utils/errors.js";
import { expandEnv, type NamedRegistry } from "./registries-config.js";

const DEFAULT_TIMEOUT_MS = 30_000;
const MAX_REDIRECTS = 5;
/** The largest item `blocks registry build` writes is under 1 MB: a registry that sends more is not sending an item. */
const MAX_BYTES = 16 * 2 ** 20;

/**
 * Fetches and parses one JSON document of a registry. `template` is the registry's URL with `{name}`
 * already filled (its `${VAR}`s are not): it is what errors show.
 *
 * @example
 * await fetchRegistryJson(acme, "https://r.acme.dev/audit-log.json", 'the item "audit-log"');
 */
export async function fetchRegistryJson(registry: NamedRegistry, template: string, what: string): Promise<unknown> {
  const url = expandEnv(template, registry.name, "the url");
  const secrets = [...url.secrets];
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(registry.headers ?? {})) {
    const expanded = expandEnv(value, registry.name, `the header ${name}`);
    headers[name] = expanded.value;
    secrets.push(...expanded.secrets);
  }
  const fail = (why: string, suggestion: string, cause?: unknown) =>
    new BlocksError("REGISTRY_FETCH_FAILED", `Registry ${registry.name}: ${what} at ${template} ${why}.`, {
      ...(cause === undefined ? {} : { cause: redact(causeChain(cause), secrets) }),
      suggestion,
    });
  const timeoutMs = registry.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let response: Response;
  try {
    response = await follow(url.value, headers, AbortSignal.timeout(timeoutMs));
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "TimeoutError") {
      throw fail(
        `did not answer within ${timeoutMs} ms`,
        `Check that the registry is up, or raise "timeoutMs" for ${registry.name} in blocks.json.`,
      );
    }
    if (cause instanceof OffOrigin)
      throw fail(
        `redirects to another origin (${cause.origin}), where its headers are not sent`,
        "Point the registry's url at where the items are served.",
      );
    throw fail("cannot be reached", "Check the url in blocks.json and your network.", cause);
  }
  if (!response.ok) await response.body?.cancel();
  if (response.status === 401 || response.status === 403) {
    throw fail(
      `refused the credentials (HTTP ${response.status})`,
      `Check the token the headers of ${registry.name} in blocks.json name (the value is never shown).`,
    );
  }
  if (response.status === 404)
    throw fail("does not exist (HTTP 404)", `Run \`blocks search\` to see what ${registry.name} offers.`);
  if (!response.ok) throw fail(`answered HTTP ${response.status}`, "Try again later, or ask the registry's owners.");
  let text: string | undefined;
  try {
    text = await readLimited(response, MAX_BYTES);
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "TimeoutError")
      throw fail(
        `did not finish its answer within ${timeoutMs} ms`,
        `Raise "timeoutMs" for ${registry.name} in blocks.json.`,
      );
    throw fail("broke off its answer", "Try again; check the registry's server if it persists.", cause);
  }
  if (text === undefined)
    throw fail(
      `answered more than ${MAX_BYTES / 2 ** 20} MB`,
      "An item is a few hundred kB: check that the url points at the registry's items.",
    );
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw fail(
      "answered with something that is not JSON",
      "Check that the url points at the JSON items `blocks registry build` writes (a login page or proxy answer is not one).",
    );
  }
}

class OffOrigin extends Error {
  readonly origin: string;
  constructor(origin: string) {
    super(`redirect to ${origin}`);
    this.origin = origin;
  }
}

/** Follows redirects by hand, and only within the origin the headers were meant for. */
async function follow(url: string, headers: Record<string, string>, signal: AbortSignal): Promise<Response> {
  let current = new URL(url);
  for (let hop = 0; ; hop++) {
    const response = await fetch(current, { headers, signal, redirect: "manual" });
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || location === null || hop === MAX_REDIRECTS) return response;
    await response.body?.cancel();
    const next = new URL(location, current);
    if (next.origin !== current.origin) throw new OffOrigin(next.origin);
    current = next;
  }
}

/** The body as text, or undefined past `max` bytes (read no further). */
async function readLimited(response: Response, max: number): Promise<string | undefined> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    // Leaving the loop cancels the stream: nothing more is downloaded.
    if (size > max) return undefined;
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** fetch's own message is "fetch failed": the reason (ECONNREFUSED, a DNS failure) is its cause. */
function causeChain(cause: unknown): string {
  const inner = cause instanceof Error ? cause.cause : undefined;
  return [describeCause(cause), describeCause(inner)].filter(Boolean).join(": ");
}

/** Whatever a lower layer said, with every expanded value cut out. */
function redact(text: string, secrets: string[]): string {
  return secrets.filter(Boolean).reduce((result, secret) => result.replaceAll(secret, "[redacted]"), text);
}
