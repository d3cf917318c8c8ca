/** An absolute http(s) URL with a host, and no white space or control characters that a parser would quietly drop or encode. */
export function isHttpUrl(value: string): boolean {
  if (/[\u0000-\u0020\u007f-\u009f]/.test(value)) return false;
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "" && /^https?:\/\//i.test(value);
  } catch {
    return false;
  }
}
