// Masks the credentials a URL carries inside free text (an error message, a stack) before it is logged.

/** `scheme://user:password@` or `scheme://token@`: the part before `@` is credentials. */
const URL_CREDENTIALS = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'`]+@/gi;

/**
 * Drivers and HTTP clients put the URL they failed to reach in their messages, credentials
 * included (`connect ECONNREFUSED postgres://admin:hunter2@db:5432/prod`): the user name and
 * password become `[Redacted]`, the host and path stay for the reader.
 *
 * @example
 * redactUrlCredentials("connect ECONNREFUSED postgres://admin:hunter2@db:5432/prod");
 * // "connect ECONNREFUSED postgres://[Redacted]@db:5432/prod"
 */
export function redactUrlCredentials(text: string): string {
  return text.includes("://") ? text.replace(URL_CREDENTIALS, "$1[Redacted]@") : text;
}
