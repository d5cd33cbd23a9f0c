// Problems in the client's language: Accept-Language negotiated against your translations of titles and details.

/** What a translation may replace, and the language it is in (sent as Content-Language). */
export type LocalizedText = { title?: string | undefined; detail?: string | undefined; language?: string | undefined };

/** The handler's `localize` option: a problem and the request's Accept-Language in, replacements out. */
export type Localize = (
  problem: { code: string; status: number; title: string; detail: string },
  acceptLanguage: string | undefined,
) => LocalizedText | undefined;

/** Translations by language tag, then by problem code (or status, as "404"). */
export type ProblemCatalog = Readonly<Record<string, Readonly<Record<string, { title?: string; detail?: string }>>>>;

/**
 * A `localize` over a catalog: the best language the client accepts (RFC 9110 §12.5.4 weights;
 * "de-CH" falls back to "de"), then the code's entry, else the status's. Nothing matches: the
 * problem stays as it is.
 *
 * @example
 * const localize = localizeFrom({ de: { CARD_DECLINED: { title: "Karte abgelehnt" }, "404": { title: "Nicht gefunden" } } });
 * localize({ code: "CARD_DECLINED", status: 402, title: "Card declined", detail: "..." }, "de-CH, en;q=0.5");
 * // { title: "Karte abgelehnt", language: "de" }
 */
export function localizeFrom(catalog: ProblemCatalog): Localize {
  const languages = Object.keys(catalog);
  return function localize(problem, acceptLanguage) {
    const language = negotiateLanguage(acceptLanguage, languages);
    const entries = language === undefined ? undefined : catalog[language];
    const entry = entries?.[problem.code] ?? entries?.[String(problem.status)];
    return entry ? { ...entry, language } : undefined;
  };
}

/**
 * The first of `available` the client accepts, by weight; `undefined` when it accepts none of them.
 *
 * @example
 * negotiateLanguage("fr;q=0.4, de-CH, en;q=0.8", ["en", "de"]); // "de"
 */
export function negotiateLanguage(
  acceptLanguage: string | undefined,
  available: readonly string[],
): string | undefined {
  if (!acceptLanguage) return undefined;
  const ranges = acceptLanguage
    .split(",")
    .slice(0, 20)
    .map((part, index) => {
      const [tag = "", ...params] = part.trim().split(";");
      const q = Number(
        params
          .map((param) => param.trim())
          .find((param) => param.startsWith("q="))
          ?.slice(2) ?? 1,
      );
      return { tag: tag.trim().toLowerCase(), q: Number.isFinite(q) ? q : 0, index };
    })
    .filter(({ tag, q }) => tag !== "" && q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { tag } of ranges) {
    const match =
      available.find((language) => language.toLowerCase() === tag) ??
      available.find((language) => language.toLowerCase() === tag.split("-")[0]);
    if (match !== undefined) return match;
  }
  return undefined;
}

/**
 * The problem's headers with its `vary` joined to the one the response already has (a CORS
 * middleware's `Origin`), so setting them keeps both.
 *
 * @example
 * withVary({ vary: "Accept-Language" }, "Origin"); // { vary: "Origin, Accept-Language" }
 */
export function withVary(headers: Record<string, string>, existing: unknown): Record<string, string> {
  const before = Array.isArray(existing) ? existing.join(", ") : typeof existing === "string" ? existing : "";
  if (headers.vary === undefined || before === "") return headers;
  const names = new Set(before.split(",").map((name) => name.trim().toLowerCase()));
  return names.has(headers.vary.toLowerCase()) || names.has("*")
    ? { ...headers, vary: before }
    : { ...headers, vary: `${before}, ${headers.vary}` };
}
