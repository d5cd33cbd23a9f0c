// Hono: a request body as the idempotency fingerprint sees it, read so the route can read it again.
import type { Context } from "hono";
import { createHash } from "node:crypto";
import { isJsonContentType, parseJsonBody } from "../http/json-body";
import { decodeUtf8 } from "../http/stored-response";

/**
 * The body as the fingerprint sees it, read through Hono's body cache so the handler can read it
 * again: JSON parsed (so member order does not matter) from the text the route's own `c.req.json()`
 * then parses, a multipart form as its entries in order with each file's bytes hashed (the boundary
 * changes on every send), anything else as its exact bytes (text when they are valid UTF-8), so no
 * two bodies the route could tell apart look alike.
 */
export async function parsedBody(c: Context): Promise<unknown> {
  const type = c.req.header("content-type") ?? "";
  if (/^multipart\/form-data/i.test(type)) return formEntries(await c.req.formData());
  // JSON as the route reads it: Hono's cached `c.req.text()`, which its `c.req.json()` parses. On
  // @hono/node-server it decodes the bytes directly, without the copy `arrayBuffer()` makes; invalid
  // UTF-8 reaches the route as U+FFFD either way, so the fingerprint sees what the route sees.
  if (isJsonContentType(type)) return parseJsonBody(await c.req.text());
  const bytes = Buffer.from(await c.req.arrayBuffer());
  if (bytes.length === 0) return undefined;
  const text = decodeUtf8(bytes);
  // The route's own `c.req.text()` then reads this text: with only the bytes cached, Hono builds a
  // whole native Response to convert them, which costs more than the rest of the request.
  // The cache holds promises, whatever its declared type says.
  if (text !== undefined) (c.req.bodyCache as unknown as { text?: Promise<string> }).text ??= Promise.resolve(text);
  return text ?? { base64: bytes.toString("base64") };
}

async function formEntries(form: FormData): Promise<unknown[]> {
  const entries: unknown[] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === "string") entries.push([name, value]);
    else
      entries.push([
        name,
        {
          file: value.name,
          type: value.type,
          sha256: createHash("sha256")
            .update(Buffer.from(await value.arrayBuffer()))
            .digest("hex"),
        },
      ]);
  }
  return entries;
}
