/**
 * A URL as relcast prints it in messages and logs: the password of its
 * userinfo becomes `***` (the user name stays, so the account is still
 * recognisable) and its query and fragment become `?***` / `#***`, since
 * presigned or hand-built endpoint URLs carry keys and signatures there
 * (`?X-Amz-Signature=…`). Text that does not parse as a URL is cut before
 * its first `@`, `?` or `#` (and a `:password` before an `@` goes too).
 */
export function redactUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    const cut = value.search(/[@?#]/);
    if (cut < 0) return value;
    // Before an `@` lies userinfo: its `:password` goes too.
    const head = value[cut] === "@" ? value.slice(0, cut).replace(/:[^/:]*$/, "") : value.slice(0, cut);
    return `${head}…(rest hidden)`;
  }
  // Nothing to hide: printed exactly as given (a parser would add a trailing slash).
  if (!url.password && !url.search && !url.hash) return value;
  if (url.password) url.password = "***";
  if (url.search) url.search = "?***";
  if (url.hash) url.hash = "#***";
  return url.toString();
}
