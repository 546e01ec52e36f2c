import { type ASTNode, type GraphQLError, isValueNode, print } from 'graphql';

/**
 * What a client sent comes back, in an error message or a result, as at most a short prefix: a
 * value of up to ECHO_MAX characters whole, a longer one as its first ECHO_PREFIX characters and
 * "…". A 90 KB currency code answered with a 90 KB message would make the gateway an amplifier
 * and a mirror for whatever the client wrote; a prefix still tells the client which value it was.
 */

/** The longest client value repeated whole. */
export const ECHO_MAX = 64;
/** How much of a longer value is repeated, before "…". */
export const ECHO_PREFIX = 32;
/** No message is longer than this, whatever it quotes (the gateway's own are under 400). */
export const MESSAGE_MAX = 1024;

/** `value` whole when it is short, else its first ECHO_PREFIX characters and "…". */
export function shortValue(value: string): string {
  if (value.length <= ECHO_MAX) return value;
  let prefix = value.slice(0, ECHO_PREFIX);
  // Never half a surrogate pair.
  if (/[\uD800-\uDBFF]$/.test(prefix)) prefix = prefix.slice(0, -1);
  return `${prefix}…`;
}

/** A client value as a message quotes it: a string in double quotes, short; anything else by its kind. */
export function quoted(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(shortValue(value));
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  return shortValue(String(value));
}

/**
 * `message` with every double-quoted segment and every run of non-blank characters longer than
 * ECHO_MAX cut to its prefix (graphql-js quotes names and strings: `Cannot query field "…"`,
 * `Value "…" does not exist in "ServiceFeeMode" enum`), then cut to MESSAGE_MAX. One pass, linear
 * in the message's length whatever its quotes.
 */
export function shortenEchoes(message: string): string {
  if (message.length <= ECHO_MAX) return message;
  let out = '';
  let i = 0;
  while (i < message.length) {
    const char = message[i] as string;
    if (char === '"') {
      let end = i + 1;
      while (end < message.length && message[end] !== '"') end += message[end] === '\\' ? 2 : 1;
      const closed = end < message.length;
      out += `"${shortValue(message.slice(i + 1, Math.min(end, message.length)))}${closed ? '"' : ''}`;
      i = end + 1;
    } else if (/\s/.test(char)) {
      out += char;
      i++;
    } else {
      let end = i;
      while (end < message.length && message[end] !== '"' && !/\s/.test(message[end] as string)) end++;
      out += shortValue(message.slice(i, end));
      i = end;
    }
  }
  return out.length > MESSAGE_MAX ? `${out.slice(0, MESSAGE_MAX)}…` : out;
}

/**
 * Shortens what `error.message` repeats of the request, in place. Besides shortenEchoes: a value
 * printed whole by graphql-js (a literal of the document, `found [1, 2, 3, …]`; a variable's value,
 * `got invalid value { … }`), which may be long though each of its words is short, is replaced by
 * its prefix first.
 */
export function shortenErrorEchoes(error: GraphQLError): void {
  let message = error.message;
  if (message.length <= ECHO_MAX) return;
  for (const node of error.nodes ?? []) message = withoutLiteral(message, node);
  message = withoutVariableValue(message, error);
  const shortened = shortenEchoes(message);
  if (shortened !== error.message) error.message = shortened;
}

/**
 * A printed value (`"a string"`, `[1, "two"]`, `{ k: 1 }`) cut to its prefix, with a closing quote
 * when the cut fell inside a string: the quotes of the message stay paired for shortenEchoes.
 */
function shortPrinted(printed: string): string {
  const short = shortValue(printed);
  let quotes = 0;
  for (let i = 0; i < short.length; i++) {
    if (short[i] === '\\') i++;
    else if (short[i] === '"') quotes++;
  }
  return quotes % 2 === 1 ? `${short}"` : short;
}

/** Validation messages print the literal at fault (ValuesOfCorrectTypeRule); it is the error's node. */
function withoutLiteral(message: string, node: ASTNode): string {
  if (!isValueNode(node) || !node.loc || node.loc.end - node.loc.start <= ECHO_MAX) return message;
  const printed = print(node);
  return printed.length > ECHO_MAX ? message.split(printed).join(shortPrinted(printed)) : message;
}

/**
 * graphql-js's coercion of variables says `Variable "$name" got invalid value <value>[ at
 * "name.path"]; <reason>`, the reason ending with the value again for a scalar. The reason is the
 * original error's message, so the value is what lies between the prefix and the path or reason.
 */
function withoutVariableValue(message: string, error: GraphQLError): string {
  const reason = error.originalError?.message;
  const name = /^Variable "\$([^"]*)" got invalid value /.exec(message);
  if (reason === undefined || !name || !message.endsWith(`; ${reason}`)) return message;
  const head = name[0];
  const middle = message.slice(head.length, message.length - reason.length - 2);
  const at = middle.lastIndexOf(` at "${name[1]}`);
  const path = at >= 0 && middle.endsWith('"') ? middle.slice(at) : '';
  const value = path ? middle.slice(0, at) : middle;
  if (value.length <= ECHO_MAX) return message;
  const short = shortPrinted(value);
  return `${head}${short}${path}; ${reason.split(value).join(short)}`;
}
