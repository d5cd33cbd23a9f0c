// What the operation of executeInTransaction may not do with its transaction: end it, leave it, or reconfigure it.

/**
 * Thrown (synchronously, by the call itself) when the operation tries to end or leave the transaction
 * its idempotency record lives in. The statement never reaches the database.
 */
export class TransactionControlError extends Error {
  readonly code = "TRANSACTION_CONTROL_REFUSED";

  constructor(what: string) {
    super(
      `idempotency: ${what} executeInTransaction commits your writes together with the idempotency record when the ` +
        "operation returns, and rolls both back when it throws: return to commit, throw to roll back.",
    );
    this.name = "TransactionControlError";
  }
}

/**
 * Refuses SQL text that would end the transaction (COMMIT, END, ROLLBACK, ABORT, PREPARE TRANSACTION),
 * open another (BEGIN, START TRANSACTION) or change it after its first statement (SET TRANSACTION),
 * and any text with more than one statement: drivers send text without parameters over the simple
 * query protocol, which runs every statement in it (`select 1; commit`). Savepoints stay allowed:
 * they never end the outer transaction.
 *
 * @example
 * refuseTransactionControl("-- settle\nCOMMIT"); // throws TransactionControlError
 * refuseTransactionControl("insert into audit values (1); commit"); // throws: two statements
 */
export function refuseTransactionControl(text: unknown, dialect: "postgres" | "mysql" = "postgres"): void {
  if (typeof text !== "string")
    throw new TransactionControlError(
      "this call carries no SQL text the transaction guard can check; pass the statement as text.",
    );
  // MySQL runs the text of /*! ... */ (MariaDB: /*M! ... */) as SQL, where the lexer below sees a comment.
  if (dialect === "mysql" && /\/\*M?!/i.test(text)) {
    throw new TransactionControlError(
      `an executable comment (/*! ... */) is refused inside the operation's transaction ("${preview(text)}").`,
    );
  }
  // With a backslash in it, lexed twice: with standard strings and with backslash escapes (E'...', or
  // standard_conforming_strings off), so a quote only one reading ends can never hide a statement.
  for (const backslashEscapes of text.includes("\\") ? [false, true] : [false]) {
    const statements = statementHeads(text, backslashEscapes);
    if (statements.length > 1) {
      throw new TransactionControlError(
        `the operation's transaction runs one statement per call, and this text holds ${statements.length} ("${preview(text)}").`,
      );
    }
    const refused =
      statements[0] &&
      (controlStatement(statements[0]) ?? (dialect === "mysql" ? implicitCommit(statements[0]) : undefined));
    if (refused)
      throw new TransactionControlError(
        `${refused} is refused inside the operation's transaction ("${preview(text)}").`,
      );
  }
}

/** A member of the client's transaction object the operation may not call: it gets this instead. */
export function refusedMember(name: string): () => never {
  return () => {
    throw new TransactionControlError(`tx.${name}() is refused inside the operation's transaction.`);
  };
}

/** An ORM's internal object that holds the connection: any member read from it is refused. */
export function refusedObject(name: string): object {
  return new Proxy(
    {},
    {
      get(_, member) {
        // Not thenable, not inspectable: `await` and console.log see an empty object.
        if (typeof member === "symbol" || member === "then") return undefined;
        throw new TransactionControlError(
          `tx.${name} holds the transaction's connection and is refused inside the operation's transaction.`,
        );
      },
    },
  );
}

/**
 * An ORM's transaction object behind the guard: `members` replace (or refuse) the named ones, every
 * other member reads through, its methods bound to the object itself (ORMs keep private state on it).
 */
export function guardObject<T extends object>(target: T, members: Record<string, unknown>): T {
  return new Proxy(target, {
    get(object, name): unknown {
      if (typeof name === "string" && Object.hasOwn(members, name)) return members[name];
      const value: unknown = Reflect.get(object, name, object);
      return typeof value === "function" ? value.bind(object) : value;
    },
  });
}

/**
 * The text a tagged template builds: `fragment(value)` gives a nested fragment's text (raw SQL a
 * client inlines), undefined for a value, which stands as its $n.
 */
export function templateText(
  strings: readonly string[],
  values: readonly unknown[],
  fragment: (value: unknown) => string | undefined,
): string {
  return strings.reduce(
    (text, part, i) => (i === 0 ? part : `${text}${fragment(values[i - 1]) ?? `$${i}`}${part}`),
    "",
  );
}

/** The transaction-control command a statement starts with (by its first words), if any. */
function controlStatement([first, second, third]: string[]): string | undefined {
  switch (first) {
    case "COMMIT":
    case "END":
    case "ABORT":
    case "BEGIN":
    case "START":
      return first;
    case "ROLLBACK":
      // ROLLBACK [WORK | TRANSACTION] TO [SAVEPOINT] name undoes part of the transaction and keeps it open.
      return second === "TO" || third === "TO" ? undefined : "ROLLBACK";
    case "PREPARE":
      return second === "TRANSACTION" ? "PREPARE TRANSACTION" : undefined;
    case "SET":
      if (second === "TRANSACTION") return "SET TRANSACTION";
      return second === "SESSION" && third === "CHARACTERISTICS" ? "SET SESSION CHARACTERISTICS" : undefined;
    default:
      return undefined;
  }
}

/**
 * MySQL commits the open transaction before (and after) DDL and table locks: the record would commit
 * alone, before the operation returns. CREATE TEMPORARY TABLE and savepoints are spared.
 */
function implicitCommit([first, second, third]: string[]): string | undefined {
  if (first === undefined) return undefined;
  if ((first === "CREATE" || first === "DROP") && second === "TEMPORARY") return undefined;
  if (IMPLICIT_COMMIT.has(first)) return `${first} (MySQL commits the transaction before it)`;
  if (first === "SET" && (second === "AUTOCOMMIT" || third === "AUTOCOMMIT")) return "SET autocommit";
  return undefined;
}

const IMPLICIT_COMMIT = new Set([
  "ALTER",
  "CREATE",
  "DROP",
  "RENAME",
  "TRUNCATE",
  "LOCK",
  "UNLOCK",
  "GRANT",
  "REVOKE",
  "ANALYZE",
  "OPTIMIZE",
  "REPAIR",
  "CHECK",
  "FLUSH",
  "RESET",
  "XA",
  "INSTALL",
  "UNINSTALL",
  "CACHE",
]);

/**
 * The first three words of each statement in `text` (upper case), skipping comments (nested block
 * comments included), string literals, quoted identifiers and dollar-quoted bodies, whose `;` split nothing.
 */
function statementHeads(text: string, backslashEscapes: boolean): string[][] {
  const statements: string[][] = [];
  let words: string[] = [];
  let i = 0;
  const end = () => {
    if (words.length > 0) statements.push(words);
    words = [];
  };
  while (i < text.length) {
    const char = text.charAt(i);
    if (char === "-" && text[i + 1] === "-") {
      const newline = text.indexOf("\n", i);
      i = newline < 0 ? text.length : newline + 1;
    } else if (char === "/" && text[i + 1] === "*") {
      i = blockCommentEnd(text, i);
    } else if (char === "'") {
      i = quotedEnd(text, i, "'", backslashEscapes);
      words.push("'");
    } else if (char === '"') {
      i = quotedEnd(text, i, '"', false);
      words.push('"');
    } else if (char === "$" && DOLLAR_TAG.test(text.slice(i, i + 65))) {
      const tag = (DOLLAR_TAG.exec(text.slice(i, i + 65)) as RegExpExecArray)[0];
      const close = text.indexOf(tag, i + tag.length);
      i = close < 0 ? text.length : close + tag.length;
      words.push("$");
    } else if (char === ";") {
      end();
      i++;
    } else if (isWordStart(text.charCodeAt(i))) {
      let wordEnd = i + 1;
      while (wordEnd < text.length && isWordPart(text.charCodeAt(wordEnd))) wordEnd++;
      if (words.length < 3) words.push(text.slice(i, wordEnd).toUpperCase());
      i = wordEnd;
    } else {
      if (words.length < 3 && char.trim() !== "") words.push(char);
      i++;
    }
  }
  end();
  return statements;
}

const DOLLAR_TAG = /^\$(?:[A-Za-z_\u0080-\uffff][A-Za-z0-9_\u0080-\uffff]*)?\$/;

/** A letter, `_` or any non-ASCII character (PostgreSQL's identifier start). */
function isWordStart(code: number): boolean {
  return (code >= 65 && code <= 90) || (code >= 97 && code <= 122) || code === 95 || code >= 128;
}

/** What may follow inside an identifier or keyword: also digits and `$`. */
function isWordPart(code: number): boolean {
  return isWordStart(code) || (code >= 48 && code <= 57) || code === 36;
}

function blockCommentEnd(text: string, start: number): number {
  let depth = 0;
  let i = start;
  while (i < text.length) {
    if (text[i] === "/" && text[i + 1] === "*") {
      depth++;
      i += 2;
    } else if (text[i] === "*" && text[i + 1] === "/") {
      depth--;
      i += 2;
      if (depth === 0) return i;
    } else {
      i++;
    }
  }
  return text.length;
}

/** Past the closing quote; a doubled quote is one character of the literal. */
function quotedEnd(text: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < text.length) {
    const char = text[i];
    if (backslashEscapes && char === "\\") i += 2;
    else if (char === quote && text[i + 1] === quote) i += 2;
    else if (char === quote) return i + 1;
    else i++;
  }
  return text.length;
}

function preview(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  return flat.length > 80 ? `${flat.slice(0, 77)}...` : flat;
}
