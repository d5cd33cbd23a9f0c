// Express keeps only the concrete `req.baseUrl` ("/accounts/acc_1"): this finds the mount templates it came from (named -express so `add` copies it with the Express adapter only).

/** The parts of Express 5's router (the `router` package, 2.x) this reads: every mount layer keeps its path and matchers. */
export type RouterLayer = {
  rawPath?: unknown;
  route?: unknown;
  matchers?: Array<(path: string) => { path: string } | false>;
  handle?: { stack?: RouterLayer[] };
};

/**
 * The template of `baseUrl` ("/accounts/:accountId"), walking the mounts in the order Express tries
 * them, or `undefined` when no chain of mounts spells it (a router Express does not know, or a path
 * rewritten on the way).
 *
 * @example
 * mountTemplate(req.app.router.stack, "/accounts/acc_1"); // "/accounts/:accountId"
 */
export function mountTemplate(stack: RouterLayer[] | undefined, baseUrl: string): string | undefined {
  if (baseUrl === "") return "";
  for (const layer of stack ?? []) {
    if (layer.route !== undefined || !layer.handle?.stack || !layer.matchers) continue;
    for (const [i, matcher] of layer.matchers.entries()) {
      const match = matcher(baseUrl);
      if (!match || match.path === "" || match.path === "/") continue;
      const rest = mountTemplate(layer.handle.stack, baseUrl.slice(match.path.replace(/\/$/, "").length));
      if (rest === undefined) continue;
      const raw = Array.isArray(layer.rawPath) ? (layer.rawPath as unknown[])[i] : layer.rawPath;
      return `${String(raw).replace(/\/$/, "")}${rest}`;
    }
  }
  return undefined;
}
