// A SQL file written for the mysql / mariadb client, split into statements as that client splits it:
// `DELIMITER //` lines change the terminator (so a procedure body keeps its semicolons), and a
// terminator inside quotes or comments ends nothing. DELIMITER is the client's command, never the server's.

const DELIMITER_LINE = /[ \t]*delimiter[ \t]+(\S+)[ \t]*(?:\r?\n|$)/iy;
const LINE_COMMENT = /(?:#|--(?=\s|$))[^\n]*/y;
const ONLY_COMMENTS = /^(?:\s+|(?:#|--(?=\s|$))[^\n]*|\/\*[^]*?\*\/)*$/;

/**
 * @example
 * mysqlClientStatements("DROP PROCEDURE IF EXISTS p;\nDELIMITER //\nCREATE PROCEDURE p() BEGIN SELECT 1; END //\nDELIMITER ;\n");
 * // ["DROP PROCEDURE IF EXISTS p", "CREATE PROCEDURE p() BEGIN SELECT 1; END"]
 */
export function mysqlClientStatements(script: string): string[] {
  const statements: string[] = [];
  let delimiter = ";";
  let start = 0;
  let at = 0;
  const end = (stop: number, next: number) => {
    const text = script.slice(start, stop).trim();
    if (!ONLY_COMMENTS.test(text)) statements.push(text);
    start = at = next;
  };
  while (at < script.length) {
    DELIMITER_LINE.lastIndex = at;
    LINE_COMMENT.lastIndex = at;
    const directive = (at === 0 || script[at - 1] === "\n") && DELIMITER_LINE.exec(script);
    const comment = LINE_COMMENT.exec(script);
    if (directive) {
      end(at, at + directive[0].length);
      delimiter = directive[1] as string;
    } else if (comment) {
      at += comment[0].length;
    } else if (script.startsWith("/*", at)) {
      const close = script.indexOf("*/", at + 2);
      at = close < 0 ? script.length : close + 2;
    } else if (script[at] === "'" || script[at] === '"' || script[at] === "`") {
      at = afterQuoted(script, at);
    } else if (script.startsWith(delimiter, at)) {
      end(at, at + delimiter.length);
    } else {
      at++;
    }
  }
  end(script.length, script.length);
  return statements;
}

/** Past the closing quote: a doubled quote is one character, and so is a backslash escape (not in `identifiers`). */
function afterQuoted(script: string, open: number): number {
  const quote = script[open];
  let at = open + 1;
  while (at < script.length) {
    if (script[at] === "\\" && quote !== "`") at += 2;
    else if (script[at] === quote && script[at + 1] === quote) at += 2;
    else if (script[at] === quote) return at + 1;
    else at++;
  }
  return at;
}
